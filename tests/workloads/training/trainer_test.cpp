// Tests of the training step on CPU: the loss falls on every tiny workload, and fine-tune mode
// freezes exactly what it says.
#include "workloads/training/trainer.h"

#include <gtest/gtest.h>

#include <map>

#include "workloads/models/registry.h"

using namespace migscope::workloads;

namespace {
// Trains on one fixed batch (a task the model can learn: memorise it) and returns first and last
// loss.
std::pair<double, double> first_and_last_loss(const std::string& name, int steps) {
    torch::manual_seed(0);
    auto model = make_model(name);
    Trainer trainer(*model, {torch::kCPU, 3e-3, 0.0});
    const Batch batch = model->synthetic_batch(8, torch::kCPU);
    const double first = trainer.step(batch);
    double last = first;
    for (int i = 1; i < steps; ++i)
        last = trainer.step(batch);
    return {first, last};
}
}  // namespace

class LossFalls : public testing::TestWithParam<std::string> {};

TEST_P(LossFalls, OnAFixedBatch) {
    auto [first, last] = first_and_last_loss(GetParam(), 30);
    EXPECT_LT(last, 0.7 * first) << "first " << first << ", last " << last;
}

INSTANTIATE_TEST_SUITE_P(TinyWorkloads, LossFalls,
                         testing::Values("resnet-tiny", "vit-tiny", "bert-tiny", "gpt2-tiny"));

TEST(Trainer, AskingForACudaGraphOnTheCpuStepsEagerlyWithoutAFailure) {
    torch::manual_seed(0);
    auto model = make_model("gpt2-tiny");
    TrainerOptions options;
    options.cuda_graph = true;
    Trainer trainer(*model, options);
    const Batch batch = model->synthetic_batch(2, torch::kCPU);
    for (int64_t i = 0; i <= kEagerStepsBeforeCapture + 1; ++i)
        EXPECT_TRUE(std::isfinite(trainer.step(batch)));
    EXPECT_FALSE(trainer.graph_replaying());
    EXPECT_EQ(trainer.graph_failure(), "");
}

// Launching steps ahead and reading their losses later gives each step's loss in launch order,
// the same arithmetic as stepping one at a time.
TEST(Trainer, LaunchedStepsLossesAreReadInLaunchOrderAsStepsWouldGiveThem) {
    auto losses = [](bool ahead) {
        torch::manual_seed(0);
        auto model = make_model("gpt2-tiny");
        Trainer trainer(*model, {torch::kCPU, 3e-3, 0.0});
        const Batch batch = model->synthetic_batch(2, torch::kCPU);
        std::vector<double> out;
        for (int i = 0; i < 4; ++i) {
            if (!ahead) {
                out.push_back(trainer.step(batch));
                continue;
            }
            trainer.launch(batch);
            if (trainer.unread() > 1)
                out.push_back(*trainer.wait_oldest());
        }
        while (const auto loss = trainer.wait_oldest())
            out.push_back(*loss);
        EXPECT_EQ(trainer.unread(), 0u);
        return out;
    };
    const std::vector<double> ahead = losses(true);
    ASSERT_EQ(ahead.size(), 4u);
    EXPECT_EQ(ahead, losses(false));
    EXPECT_LT(ahead.back(), ahead.front());  // they are four different steps' losses
}

class Finetune : public testing::TestWithParam<std::pair<std::string, std::vector<std::string>>> {};

// Fine-tune mode trains only the parameters under the listed prefixes; after a step every frozen
// parameter has no gradient and is unchanged, and every trainable one has moved.
TEST_P(Finetune, FreezesAllButTheLastBlockAndTheHead) {
    const auto& [name, trainable_prefixes] = GetParam();
    torch::manual_seed(0);
    auto model = make_model(name);
    model->prepare_finetune({});
    auto is_trainable = [&](const std::string& param) {
        for (const std::string& prefix : trainable_prefixes) {
            if (param.rfind(prefix, 0) == 0)
                return true;
        }
        return false;
    };
    int64_t expected = 0;
    std::map<std::string, torch::Tensor> before;
    for (const auto& p : model->module().named_parameters()) {
        EXPECT_EQ(p.value().requires_grad(), is_trainable(p.key())) << p.key();
        if (is_trainable(p.key()))
            expected += p.value().numel();
        before[p.key()] = p.value().detach().clone();
    }
    EXPECT_EQ(trainable_parameter_count(model->module()), expected);
    EXPECT_LT(expected, parameter_count(model->module()));

    Trainer trainer(*model, {torch::kCPU, 1e-2, 0.0});
    trainer.step(model->synthetic_batch(4, torch::kCPU));
    for (const auto& p : model->module().named_parameters()) {
        const bool moved = !torch::equal(before[p.key()], p.value());
        if (is_trainable(p.key())) {
            EXPECT_TRUE(p.value().grad().defined()) << p.key();
        } else {
            EXPECT_FALSE(p.value().grad().defined()) << p.key();
            EXPECT_FALSE(moved) << p.key();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    TinyWorkloads, Finetune,
    testing::Values(std::make_pair(std::string("resnet-tiny"),
                                   std::vector<std::string>{"stage2.0.", "fc."}),
                    std::make_pair(std::string("vit-tiny"),
                                   std::vector<std::string>{"blocks.1.", "ln.", "head."}),
                    std::make_pair(std::string("bert-tiny"),
                                   std::vector<std::string>{"blocks.1.", "transform.",
                                                            "transform_ln.", "decoder_bias"})));

// GPT-2 fine-tunes through LoRA: the base is frozen, fresh adapters leave the output unchanged,
// and a step moves only the adapters.
TEST(FinetuneGpt2, LoraAdaptersAreTheOnlyTrainableParameters) {
    torch::manual_seed(0);
    auto model = make_model("gpt2-tiny");  // width 32, 2 layers
    const Batch batch = model->synthetic_batch(2, torch::kCPU);
    const double loss_before = model->loss(batch).item<double>();
    const int64_t base = parameter_count(model->module());
    model->prepare_finetune({4, 8.0});
    EXPECT_DOUBLE_EQ(model->loss(batch).item<double>(), loss_before);  // B = 0 at the start
    // Per layer: rank x (in + out) for QKV (32->96), out (32->32), up (32->128), down (128->32).
    const int64_t adapters = 2 * 4 * ((32 + 96) + (32 + 32) + (32 + 128) + (128 + 32));
    EXPECT_EQ(trainable_parameter_count(model->module()), adapters);
    EXPECT_EQ(parameter_count(model->module()), base + adapters);

    std::map<std::string, torch::Tensor> before;
    for (const auto& p : model->module().named_parameters())
        before[p.key()] = p.value().detach().clone();
    Trainer trainer(*model, {torch::kCPU, 1e-2, 0.0});
    trainer.step(batch);
    trainer.step(batch);  // the second step moves A too (B is no longer zero)
    for (const auto& p : model->module().named_parameters()) {
        const bool adapter = p.key().find("_lora.") != std::string::npos;
        EXPECT_EQ(p.value().requires_grad(), adapter) << p.key();
        EXPECT_EQ(!torch::equal(before[p.key()], p.value()), adapter) << p.key();
    }
}
