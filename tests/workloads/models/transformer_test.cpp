// Tests of the transformer building blocks (src/workloads/models/transformer.cpp).
#include "workloads/models/transformer.h"

#include "workloads/training/autocast.h"

#include <gtest/gtest.h>

#include <vector>

using namespace migscope::workloads;

namespace {

// Cross-entropy loss and its gradients (x, weight, bias) of the logits `head` gives, on fresh
// copies of the same inputs.
struct HeadRun {
    torch::Tensor loss, grad_x, grad_weight, grad_bias;
};

template <typename Head>
HeadRun run_head(Head head, int64_t rows, bool with_bias) {
    torch::manual_seed(3);
    auto x = torch::randn({2, 5, 16}).requires_grad_();
    auto weight = torch::randn({rows, 16}).requires_grad_();
    auto bias = with_bias ? torch::randn({rows}).requires_grad_() : torch::Tensor();
    const torch::Tensor targets = torch::randint(0, rows, {2, 5});
    const torch::Tensor logits = head(x, weight, bias);
    torch::Tensor loss =
        torch::cross_entropy_loss(logits.view({-1, logits.size(-1)}), targets.view({-1}));
    loss.backward();
    return {loss.detach(), x.grad(), weight.grad(), with_bias ? bias.grad() : torch::Tensor()};
}

}  // namespace

TEST(LogitsWithAlignedRows, CrossEntropyEqualsTheUnpaddedOneInValueAndGradients) {
    for (int64_t rows : {1, 63, 64, 100, 257}) {
        for (bool with_bias : {false, true}) {
            SCOPED_TRACE("rows " + std::to_string(rows) + (with_bias ? " with bias" : ""));
            const HeadRun aligned = run_head(
                [](auto& x, auto& w, auto& b) { return logits_with_aligned_rows(x, w, b); }, rows,
                with_bias);
            const HeadRun plain = run_head(
                [](auto& x, auto& w, auto& b) { return torch::nn::functional::linear(x, w, b); },
                rows, with_bias);
            EXPECT_TRUE(torch::allclose(aligned.loss, plain.loss, 1e-5, 1e-5));
            EXPECT_TRUE(torch::allclose(aligned.grad_x, plain.grad_x, 1e-5, 1e-5));
            ASSERT_EQ(aligned.grad_weight.sizes(), plain.grad_weight.sizes());
            EXPECT_TRUE(torch::allclose(aligned.grad_weight, plain.grad_weight, 1e-5, 1e-5));
            if (with_bias) {
                ASSERT_EQ(aligned.grad_bias.sizes(), plain.grad_bias.sizes());
                EXPECT_TRUE(torch::allclose(aligned.grad_bias, plain.grad_bias, 1e-5, 1e-5));
            }
        }
    }
}

TEST(LogitsWithAlignedRows, RealColumnsEqualLinearAndPaddedColumnsAreMinusInfinity) {
    for (bool with_bias : {false, true}) {
        SCOPED_TRACE(with_bias ? "with bias" : "without bias");
        const torch::Tensor x = torch::randn({3, 8}), weight = torch::randn({100, 8});
        const torch::Tensor bias = with_bias ? torch::randn({100}) : torch::Tensor();
        const torch::Tensor logits = logits_with_aligned_rows(x, weight, bias);
        ASSERT_EQ(logits.sizes(), (torch::IntArrayRef{3, 128}));
        EXPECT_TRUE(
            torch::allclose(logits.narrow(1, 0, 100), torch::linear(x, weight, bias), 1e-5, 1e-5));
        const torch::Tensor padded = logits.narrow(1, 100, 28);
        EXPECT_TRUE(torch::all(torch::isinf(padded) & (padded < 0)).item<bool>());
    }
}

TEST(SplitHeads, ViewsAndGradientsEqualThoseOfUnbind) {
    torch::manual_seed(5);
    const int64_t b = 2, t = 3, heads = 4, head_dim = 5, d = heads * head_dim;
    const torch::Tensor source = torch::randn({b, t, 3 * d});
    const torch::Tensor weights = torch::randn({3, b, heads, t, head_dim});

    auto ours = source.clone().requires_grad_();
    const auto parts = split_heads(ours, heads);
    auto reference = source.clone().requires_grad_();
    const auto expected =
        reference.view({b, t, 3, heads, head_dim}).permute({2, 0, 3, 1, 4}).unbind(0);
    torch::Tensor our_loss = torch::zeros({}), reference_loss = torch::zeros({});
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(parts[i].sizes(), expected[i].sizes());
        EXPECT_TRUE(torch::equal(parts[i], expected[i]));
        our_loss = our_loss + (parts[i] * weights[i]).sum();
        reference_loss = reference_loss + (expected[i] * weights[i]).sum();
    }
    our_loss.backward();
    reference_loss.backward();
    EXPECT_TRUE(torch::allclose(ours.grad(), reference.grad()));
}

TEST(SplitHeads, AnUnusedPartGetsZeroGradient) {
    auto qkv = torch::randn({1, 2, 12}).requires_grad_();
    split_heads(qkv, 2)[1].sum().backward();  // only the keys
    EXPECT_EQ(qkv.grad().narrow(2, 0, 4).abs().sum().item<float>(), 0.0f);
    EXPECT_EQ(qkv.grad().narrow(2, 4, 4).sum().item<float>(), 8.0f);
    EXPECT_EQ(qkv.grad().narrow(2, 8, 4).abs().sum().item<float>(), 0.0f);
}

TEST(ApplyLinear, EqualsTheModulesForwardOnThreeDimensionalInput) {
    torch::nn::Linear layer(6, 4);
    const torch::Tensor x = torch::randn({2, 3, 6});
    EXPECT_TRUE(torch::allclose(apply_linear(layer, x), layer(x), 1e-6, 1e-6));
}

TEST(ResidualDtype, WithoutAutocastTheStreamAndLayerNormStayAsTheyAre) {
    torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({8}));
    const torch::Tensor x = torch::randn({2, 3, 8});
    EXPECT_TRUE(to_residual_dtype(x).is_same(x));
    EXPECT_TRUE(torch::equal(layer_norm_in_input_dtype(norm, x), norm(x)));
}

TEST(ResidualDtype, UnderAutocastTheStreamAndLayerNormAreInTheAutocastDtype) {
    torch::manual_seed(4);
    torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({64}));
    {
        torch::NoGradGuard no_grad;
        norm->weight.uniform_(0.5, 1.5);
        norm->bias.uniform_(-0.5, 0.5);
    }
    const torch::Tensor x = torch::randn({4, 7, 64});
    const torch::Tensor expected = norm(x).detach();
    Bf16Autocast autocast(at::kCPU);
    const torch::Tensor stream = to_residual_dtype(x);
    EXPECT_EQ(stream.scalar_type(), torch::kBFloat16);
    const torch::Tensor y = layer_norm_in_input_dtype(norm, stream);
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    // bf16 carries 8 significant bits: within a few of its ulps of the fp32 layer norm.
    EXPECT_TRUE(torch::allclose(y.to(torch::kFloat32), expected, 3e-2, 3e-2));
    y.to(torch::kFloat32).pow(2).sum().backward();
    ASSERT_TRUE(norm->weight.grad().defined());
    EXPECT_EQ(norm->weight.grad().scalar_type(), torch::kFloat32);  // the fp32 parameter's gradient
    EXPECT_GT(norm->weight.grad().abs().sum().item<double>(), 0.0);
}

// (On CUDA, where autocast runs a plain layer norm in fp32, transformer_gpu_test.cpp checks this.)
TEST(ResidualDtype, UnderAutocastLayerNormWithBf16ParametersStaysInBf16) {
    torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({16}));
    norm->to(torch::kBFloat16);  // the parameters of a model that trains with bf16 weights
    const torch::Tensor x = torch::randn({3, 16}).to(torch::kBFloat16);
    const torch::Tensor expected = norm(x);  // no autocast: in bf16
    Bf16Autocast autocast(at::kCPU);
    const torch::Tensor y = layer_norm_in_input_dtype(norm, x);
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::equal(y, expected));
}

TEST(ResidualDtype, APreNormBlockUnderAutocastKeepsTheStreamInBf16AndAgreesWithFp32) {
    torch::manual_seed(6);
    Block block(32, 4, 64, NormPlacement::kPreNorm, Causality::kCausal, Gelu::kTanh, 1e-5);
    const torch::Tensor x = torch::randn({2, 5, 32});
    const torch::Tensor expected = block->forward(x).detach();
    Bf16Autocast autocast(at::kCPU);
    const torch::Tensor y = block->forward(to_residual_dtype(x));
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::allclose(y.to(torch::kFloat32), expected, 5e-2, 5e-2));
}

// The blocks as their papers write them, from the modules' full forward passes; the blocks
// themselves defer each branch's last bias and residual add into the next layer norm.
TEST(Block, PreNormEqualsTheResidualFormulaAndPassesTheMlpOutputOnPending) {
    torch::manual_seed(7);
    Block block(32, 4, 64, NormPlacement::kPreNorm, Causality::kCausal, Gelu::kTanh, 1e-5);
    const torch::Tensor x = torch::randn({2, 5, 32});
    const torch::Tensor h = x + block->attention(block->ln1(x));
    const torch::Tensor expected = h + block->mlp(block->ln2(h));
    const Residual out = block->forward_residual({x, {}, {}});
    EXPECT_TRUE(out.delta.defined());
    EXPECT_TRUE(out.bias.is_same(block->mlp->down->bias));
    EXPECT_TRUE(torch::allclose(out.x, h, 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(out.value(), expected, 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(block->forward(x), expected, 1e-5, 1e-5));
    // A pending input is added before the first norm.
    const torch::Tensor delta = torch::randn({2, 5, 32}), bias = torch::randn({32});
    EXPECT_TRUE(torch::allclose(block->forward_residual({x, delta, bias}).value(),
                                block->forward(x + delta + bias), 1e-5, 1e-5));
}

TEST(Block, PostNormEqualsTheResidualFormulaAndRefusesAPendingInput) {
    torch::manual_seed(8);
    Block block(32, 4, 64, NormPlacement::kPostNorm, Causality::kBidirectional, Gelu::kExact,
                1e-12);
    const torch::Tensor x = torch::randn({2, 5, 32});
    const torch::Tensor h = block->ln1(x + block->attention(x));
    const torch::Tensor expected = block->ln2(h + block->mlp(h));
    const Residual out = block->forward_residual({x, {}, {}});
    EXPECT_FALSE(out.delta.defined());
    EXPECT_TRUE(torch::allclose(out.x, expected, 1e-5, 1e-5));
    EXPECT_THROW(block->forward_residual({x, x, {}}), c10::Error);
}

// Its sublayers' inputs pass through their first projections (linear_keeping_input): the same
// gradients as the formula, where autograd adds each input's two gradients.
TEST(Block, PostNormGradientsEqualThoseOfTheResidualFormula) {
    torch::manual_seed(10);
    Block block(32, 4, 64, NormPlacement::kPostNorm, Causality::kBidirectional, Gelu::kExact,
                1e-12);
    const torch::Tensor x0 = torch::randn({2, 5, 32}), r = torch::randn({2, 5, 32});
    const torch::Tensor x = x0.clone().set_requires_grad(true);
    (block->forward_residual({x, {}, {}}).x * r).sum().backward();
    std::vector<torch::Tensor> grads{x.grad().clone()};
    for (const torch::Tensor& p : block->parameters())
        grads.push_back(p.grad().clone());
    block->zero_grad();
    const torch::Tensor rx = x0.clone().set_requires_grad(true);
    const torch::Tensor h = block->ln1(rx + block->attention(rx));
    (block->ln2(h + block->mlp(h)) * r).sum().backward();
    EXPECT_TRUE(torch::allclose(grads[0], rx.grad(), 1e-4, 1e-4));
    size_t i = 1;
    for (const torch::Tensor& p : block->parameters())
        EXPECT_TRUE(torch::allclose(grads[i++], p.grad(), 1e-4, 1e-4));
}

TEST(Block, BranchesWithoutTheirLastBiasDifferFromTheFullOnesByThatBias) {
    torch::manual_seed(9);
    SelfAttention attention(16, 2, Causality::kCausal);
    Mlp mlp(16, 32, Gelu::kTanh);
    torch::NoGradGuard no_grad;
    attention->out->bias.normal_();
    mlp->down->bias.normal_();
    const torch::Tensor x = torch::randn({2, 3, 16});
    EXPECT_TRUE(torch::allclose(attention->forward_without_out_bias(x) + attention->out->bias,
                                attention(x)));
    EXPECT_TRUE(torch::allclose(mlp->forward_without_down_bias(x) + mlp->down->bias, mlp(x)));
}
