// Tests of the workload models: parameter counts against the reference implementations, the
// analytical formulas against built modules, FLOP counts, and the tiny configurations' shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "partition/job.h"
#include "workloads/models/registry.h"
#include "workloads/models/resnet.h"
#include "workloads/models/transformers.h"

using namespace migscope::workloads;

TEST(ParameterCounts, MatchTheReferenceImplementations) {
    EXPECT_EQ(resnet_parameter_count(ResNetConfig::resnet18()), 11'689'512);  // torchvision
    EXPECT_EQ(resnet_parameter_count(ResNetConfig::resnet50()), 25'557'032);
    EXPECT_EQ(vit_parameter_count(VitConfig{}), 86'567'656);             // vit_b_16
    EXPECT_EQ(bert_parameter_count(BertConfig{}), 109'514'298);          // BertForMaskedLM
    EXPECT_EQ(gpt2_parameter_count(Gpt2Config::medium()), 354'823'168);  // HF gpt2-medium
    EXPECT_EQ(gpt2_parameter_count(Gpt2Config::xl()), 1'557'611'200);    // HF gpt2-xl
}

TEST(ParameterCounts, FormulasMatchBuiltModules) {
    // The full ResNets are small enough to build; the transformers are checked on odd sizes.
    EXPECT_EQ(parameter_count(make_resnet(ResNetConfig::resnet18())->module()), 11'689'512);
    EXPECT_EQ(parameter_count(make_resnet(ResNetConfig::resnet50())->module()), 25'557'032);
    const ResNetConfig bottleneck{ResNetConfig::BlockType::kBottleneck, {1, 2}, 8, 7, 64};
    EXPECT_EQ(parameter_count(make_resnet(bottleneck)->module()),
              resnet_parameter_count(bottleneck));
    const VitConfig vit{64, 16, 48, 3, 3, 96, 7};
    EXPECT_EQ(parameter_count(make_vit(vit)->module()), vit_parameter_count(vit));
    const BertConfig bert{500, 64, 2, 48, 3, 4, 96, 64, 0.15};
    EXPECT_EQ(parameter_count(make_bert(bert)->module()), bert_parameter_count(bert));
    const Gpt2Config gpt2{300, 64, 48, 3, 4, 64};
    EXPECT_EQ(parameter_count(make_gpt2(gpt2)->module()), gpt2_parameter_count(gpt2));
}

namespace {

std::shared_ptr<torch::nn::SequentialImpl> sequential(
    const std::shared_ptr<torch::nn::Module>& module) {
    return std::dynamic_pointer_cast<torch::nn::SequentialImpl>(module);
}

// A ResNet's logits computed from its modules as torchvision composes them: the stem, each block's
// relu(body(x) + shortcut(x) or x), the pooled head.
torch::Tensor reference_resnet_logits(torch::nn::Module& net, torch::Tensor x) {
    auto children = net.named_children();
    x = sequential(children["stem"])->forward(x);
    for (int s = 1; children.contains("stage" + std::to_string(s)); ++s) {
        for (const auto& block : children["stage" + std::to_string(s)]->children()) {
            auto parts = block->named_children();
            const torch::Tensor identity =
                parts.contains("shortcut") ? sequential(parts["shortcut"])->forward(x) : x;
            x = torch::relu(sequential(parts["body"])->forward(x) + identity);
        }
    }
    auto fc = std::dynamic_pointer_cast<torch::nn::LinearImpl>(children["fc"]);
    return fc->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
}

}  // namespace

// The ResNet's forward walks its layers fusing each batch norm with the ReLU and residual add after
// it (fused_batch_norm.h): it must compute what the layers compose to, for both block types.
TEST(ResNet, ForwardIsWhatItsLayersComposeTo) {
    const ResNetConfig basic{ResNetConfig::BlockType::kBasic, {1, 2}, 8, 10, 32};
    const ResNetConfig bottleneck{ResNetConfig::BlockType::kBottleneck, {1, 2}, 8, 7, 32};
    for (const ResNetConfig& config : {basic, bottleneck}) {
        torch::manual_seed(4);
        std::unique_ptr<Model> model = make_resnet(config);
        const Batch batch = model->synthetic_batch(3, torch::kCPU);
        const torch::Tensor loss = model->loss(batch);
        const torch::Tensor expected = torch::cross_entropy_loss(
            reference_resnet_logits(model->module(), batch.inputs), batch.targets);
        EXPECT_NEAR(loss.item<double>(), expected.item<double>(), 1e-6);
    }
}

TEST(Flops, ResNetForwardMatchesTorchvision) {
    // torchvision lists 1.81 and 4.09 GFLOPS (multiply-adds) per 224x224 image.
    EXPECT_NEAR(resnet_forward_macs(ResNetConfig::resnet18()) / 1e9, 1.81, 0.01);
    EXPECT_NEAR(resnet_forward_macs(ResNetConfig::resnet50()) / 1e9, 4.09, 0.01);
}

TEST(Flops, Gpt2FollowsSixNPlusAttention) {
    // 6N + 6*L*C*T per token (llm.c's count), T tokens per sample.
    const Gpt2Config tiny{128, 32, 32, 2, 2, 32};
    EXPECT_DOUBLE_EQ(*make_gpt2(tiny)->train_flops_per_sample(),
                     32 * (6.0 * gpt2_parameter_count(tiny) + 6.0 * 2 * 32 * 32));
}

TEST(Flops, MlpCountsSixFlopsPerWeightPerSample) {
    auto mlp = make_model("mlp-tiny");  // 2 layers of 32x32
    EXPECT_EQ(parameter_count(mlp->module()), 2 * 32 * 32);
    EXPECT_DOUBLE_EQ(*mlp->train_flops_per_sample(), 6.0 * 2 * 32 * 32);
    mlp->prepare_finetune({});
    EXPECT_EQ(trainable_parameter_count(mlp->module()), 32 * 32);  // the last layer
}

TEST(Bert, LossAtTheMaskedPositionsEqualsTheLossOfLogitsEverywhere) {
    torch::manual_seed(3);
    auto model = make_model("bert-tiny");
    const Batch batch = model->synthetic_batch(4, torch::kCPU);
    // Every row has exactly round(0.15 × 32) = 5 targets.
    EXPECT_TRUE(torch::all((batch.targets != -100).sum(1) == 5).item<bool>());
    const torch::Tensor fast = model->loss(batch);
    fast.backward();
    std::vector<torch::Tensor> fast_grads;
    for (const auto& p : model->module().parameters())
        fast_grads.push_back(p.grad().clone());
    model->module().zero_grad();
    const torch::Tensor every = bert_loss_at_every_position(*model, batch);
    every.backward();
    EXPECT_NEAR(fast.item<double>(), every.item<double>(), 1e-5);
    size_t k = 0;
    for (const auto& p : model->module().parameters()) {
        EXPECT_TRUE(torch::allclose(fast_grads[k], p.grad(), 1e-4, 1e-6)) << k;
        ++k;
    }
}

TEST(Bert, MasksAFixedCountPerSequence) {
    EXPECT_EQ(BertConfig{}.masked_per_sequence(), 77);  // round(0.15 × 512)
    BertConfig few;
    few.seq_len = 4;
    EXPECT_EQ(few.masked_per_sequence(), 1);  // at least one
}

// With the reference initialisation an untrained model predicts nearly uniformly: its first loss is
// about ln(classes or vocabulary), not tens of nats.
TEST(Initialisation, FirstLossIsNearUniform) {
    const std::pair<const char*, double> cases[] = {{"vit-tiny", std::log(10.0)},
                                                    {"bert-tiny", std::log(128.0)},
                                                    {"gpt2-tiny", std::log(128.0)}};
    for (const auto& [name, uniform] : cases) {
        torch::manual_seed(0);
        auto model = make_model(name);
        const double loss = model->loss(model->synthetic_batch(8, torch::kCPU)).item<double>();
        EXPECT_NEAR(loss, uniform, 0.15 * uniform) << name;
    }
}

TEST(Registry, EveryWorkloadHasShapesAndUnits) {
    for (const WorkloadInfo& info : builtin_workloads()) {
        if (info.name.find("tiny") == std::string::npos)
            continue;  // build only the small ones
        SCOPED_TRACE(info.name);
        auto model = make_model(info.name);
        Batch b = model->synthetic_batch(2, torch::kCPU);
        EXPECT_EQ(b.inputs.size(0), 2);
        torch::Tensor loss = model->loss(b);
        EXPECT_EQ(loss.dim(), 0);
        EXPECT_TRUE(std::isfinite(loss.item<double>()));
        EXPECT_TRUE(model->item_unit() == "images" || model->item_unit() == "tokens" ||
                    model->item_unit() == "samples");
    }
    EXPECT_THROW(make_model("resnet19"), std::invalid_argument);
}

// The CLI checks workload names without torch, from its own list: it must be the registry's.
TEST(Registry, TheCliKnowsTheSameWorkloadNames) {
    std::vector<std::string> names;
    for (const WorkloadInfo& info : builtin_workloads())
        names.push_back(info.name);
    EXPECT_EQ(names, migscope::partition::builtin_workload_names());
}
