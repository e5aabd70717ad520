// Tests of the fused transformer operations' CPU path (src/workloads/kernels/fused_ops.cpp): each equals
// the ATen operations it stands for, in values, gradients and dtype. Their CUDA kernels are checked
// on the GPU host (fused_ops_gpu_test.cpp).
#include "workloads/kernels/fused_ops.h"

#include <gtest/gtest.h>

#include <limits>

#include "workloads/training/autocast.h"

using namespace migscope::workloads;

namespace {

torch::Tensor leaf(const torch::Tensor& t) {
    return t.detach().clone().set_requires_grad(true);
}

torch::nn::LayerNorm random_norm(int64_t dim) {
    torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({dim}).eps(1e-5));
    torch::NoGradGuard no_grad;
    norm->weight.normal_(1.0, 0.3);
    norm->bias.normal_(0.0, 0.3);
    return norm;
}

}  // namespace

TEST(FusedKernels, CanBeSwitchedOffAndOn) {
    ASSERT_TRUE(fused_kernels_enabled());
    set_fused_kernels_enabled(false);
    EXPECT_FALSE(fused_kernels_enabled());
    set_fused_kernels_enabled(true);
    EXPECT_TRUE(fused_kernels_enabled());
}

TEST(AddLayerNorm, EqualsTheResidualAddFollowedByTheNormInValuesAndGradients) {
    torch::manual_seed(1);
    torch::nn::LayerNorm norm = random_norm(12);
    const torch::Tensor x0 = torch::randn({2, 3, 12}), d0 = torch::randn({2, 3, 12}),
                        b0 = torch::randn({12});
    const torch::Tensor x = leaf(x0), delta = leaf(d0), bias = leaf(b0);
    const NormedSum out = add_layer_norm(x, delta, bias, norm);
    (out.normed.pow(2).sum() + (out.sum * 0.5).sum()).backward();
    const torch::Tensor gamma_grad = norm->weight.grad().clone();
    norm->weight.mutable_grad().reset();

    const torch::Tensor rx = leaf(x0), rd = leaf(d0), rb = leaf(b0);
    const torch::Tensor rsum = rx + rd + rb;
    const torch::Tensor rnormed = norm(rsum);
    (rnormed.pow(2).sum() + (rsum * 0.5).sum()).backward();
    EXPECT_TRUE(torch::allclose(out.sum, rsum));
    EXPECT_TRUE(torch::allclose(out.normed, rnormed));
    EXPECT_TRUE(torch::allclose(x.grad(), rx.grad(), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(delta.grad(), rd.grad(), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(bias.grad(), rb.grad(), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(gamma_grad, norm->weight.grad(), 1e-5, 1e-5));
}

TEST(AddLayerNorm, WithNothingPendingTheSumIsTheInputItself) {
    torch::nn::LayerNorm norm = random_norm(8);
    const torch::Tensor x = torch::randn({4, 8});
    const NormedSum out = add_layer_norm(x, {}, {}, norm);
    EXPECT_TRUE(out.sum.is_same(x));
    EXPECT_TRUE(torch::allclose(out.normed, norm(x)));
}

TEST(AddLayerNorm, UnderAutocastStaysInTheStreamsDtypeWithAnFp32Bias) {
    torch::nn::LayerNorm norm = random_norm(16);
    const torch::Tensor x = torch::randn({3, 16}).to(torch::kBFloat16);
    const torch::Tensor delta = torch::randn({3, 16}).to(torch::kBFloat16);
    const torch::Tensor bias = torch::randn({16});  // fp32, as a model without bf16 weights has
    Bf16Autocast autocast(at::kCPU);
    const NormedSum out = add_layer_norm(x, delta, bias, norm);
    EXPECT_EQ(out.sum.scalar_type(), torch::kBFloat16);
    EXPECT_EQ(out.normed.scalar_type(), torch::kBFloat16);
}

TEST(BiasGelu, EqualsGeluOfTheBiasedInputForBothForms) {
    torch::manual_seed(2);
    for (bool tanh_form : {true, false}) {
        const torch::Tensor u0 = torch::randn({3, 5, 8}) * 2, b0 = torch::randn({8});
        const torch::Tensor u = leaf(u0), b = leaf(b0), ru = leaf(u0), rb = leaf(b0);
        bias_gelu(u, b, tanh_form).pow(2).sum().backward();
        torch::gelu(ru + rb, tanh_form ? "tanh" : "none").pow(2).sum().backward();
        EXPECT_TRUE(torch::allclose(u.grad(), ru.grad(), 1e-5, 1e-5));
        EXPECT_TRUE(torch::allclose(b.grad(), rb.grad(), 1e-5, 1e-5));
    }
    // Exact and tanh forms differ: the flag reaches the computation.
    const torch::Tensor u = torch::full({8}, 1.5);
    EXPECT_NE(bias_gelu(u, torch::zeros({8}), true).sum().item<float>(),
              bias_gelu(u, torch::zeros({8}), false).sum().item<float>());
}

TEST(QkvHeads, AreTheFusedProjectionsHeadsWithItsGradients) {
    torch::manual_seed(3);
    const int64_t b = 2, t = 5, heads = 2, d = 8;
    const torch::Tensor x0 = torch::randn({b, t, d}), w0 = torch::randn({3 * d, d}),
                        b0 = torch::randn({3 * d}),
                        weights = torch::randn({3, b, heads, t, d / heads});
    const torch::Tensor x = leaf(x0), w = leaf(w0), bias = leaf(b0);
    const torch::Tensor rx = leaf(x0), rw = leaf(w0), rbias = leaf(b0);
    const auto parts = qkv_heads(x, w, bias, heads);
    const auto expected = torch::linear(rx, rw, rbias)
                              .view({b, t, 3, heads, d / heads})
                              .permute({2, 0, 3, 1, 4})
                              .unbind(0);
    torch::Tensor loss = torch::zeros({}), reference = torch::zeros({});
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(parts[i].sizes(), expected[i].sizes());
        EXPECT_TRUE(torch::allclose(parts[i], expected[i], 1e-5, 1e-5));
        loss = loss + (parts[i] * weights[i]).sum();
        reference = reference + (expected[i] * weights[i]).sum();
    }
    loss.backward();
    reference.backward();
    EXPECT_TRUE(torch::allclose(x.grad(), rx.grad(), 1e-4, 1e-4));
    EXPECT_TRUE(torch::allclose(w.grad(), rw.grad(), 1e-4, 1e-4));
    EXPECT_TRUE(torch::allclose(bias.grad(), rbias.grad(), 1e-4, 1e-4));
}

// x read by the projection and again afterwards: the same values and gradients as x read twice.
TEST(LinearKeepingInput, EqualsTheProjectionAndXReadAgainInValuesAndGradients) {
    torch::manual_seed(5);
    const torch::Tensor x0 = torch::randn({2, 5, 8}), w0 = torch::randn({12, 8}),
                        r1 = torch::randn({2, 5, 12}), r2 = torch::randn({2, 5, 8});
    const torch::Tensor x = leaf(x0), w = leaf(w0), rx = leaf(x0), rw = leaf(w0);
    const ProjectionAndInput out = linear_keeping_input(x, w);
    EXPECT_TRUE(torch::allclose(out.projection, torch::linear(x0, w0), 1e-5, 1e-5));
    EXPECT_TRUE(torch::equal(out.input, x0));
    ((out.projection * r1).sum() + (out.input * r2).sum()).backward();
    ((torch::linear(rx, rw) * r1).sum() + (rx * r2).sum()).backward();
    EXPECT_TRUE(torch::allclose(x.grad(), rx.grad(), 1e-4, 1e-4));
    EXPECT_TRUE(torch::allclose(w.grad(), rw.grad(), 1e-4, 1e-4));
}

// The kept input's gradient is also another tensor's (an add hands the same gradient to both
// operands): adding into it in place would change that tensor's gradient.
TEST(LinearKeepingInput, LeavesAGradientItSharesUntouched) {
    torch::manual_seed(6);
    const torch::Tensor x0 = torch::randn({3, 4}), w0 = torch::randn({6, 4}),
                        r1 = torch::randn({3, 6});
    const torch::Tensor x = leaf(x0), w = leaf(w0), z = leaf(torch::randn({3, 4}));
    const torch::Tensor rx = leaf(x0), rw = leaf(w0);
    const ProjectionAndInput out = linear_keeping_input(x, w);
    ((out.projection * r1).sum() + (out.input + z).sum() * 2.0).backward();
    ((torch::linear(rx, rw) * r1).sum() + (rx * 2.0).sum()).backward();
    EXPECT_TRUE(torch::equal(z.grad(), torch::full({3, 4}, 2.0)));
    EXPECT_TRUE(torch::allclose(x.grad(), rx.grad(), 1e-4, 1e-4));
}

TEST(LinearKeepingInput, AnInputWithoutGradientGivesTheWeightsAlone) {
    torch::manual_seed(7);
    const torch::Tensor x = torch::randn({3, 4}), w0 = torch::randn({6, 4}),
                        r1 = torch::randn({3, 6});
    const torch::Tensor w = leaf(w0), rw = leaf(w0);
    const ProjectionAndInput out = linear_keeping_input(x, w);
    ((out.projection * r1).sum() + out.input.sum()).backward();
    (torch::linear(x, rw) * r1).sum().backward();
    EXPECT_TRUE(torch::allclose(w.grad(), rw.grad(), 1e-5, 1e-5));
    EXPECT_FALSE(x.grad().defined());
}

TEST(LinearKeepingInput, UnderAutocastProjectsInBf16AndGivesGradientsInTheInputsDtypes) {
    torch::manual_seed(8);
    const torch::Tensor x = leaf(torch::randn({3, 8})), w = leaf(torch::randn({4, 8}));
    ProjectionAndInput out;
    {
        Bf16Autocast autocast(at::kCPU);
        out = linear_keeping_input(x, w);
    }
    EXPECT_EQ(out.projection.scalar_type(), torch::kBFloat16);
    EXPECT_EQ(out.input.scalar_type(), torch::kFloat32);
    (out.projection.to(torch::kFloat32).sum() + out.input.sum()).backward();
    EXPECT_EQ(x.grad().scalar_type(), torch::kFloat32);
    EXPECT_EQ(w.grad().scalar_type(), torch::kFloat32);
    const torch::Tensor expected = w.detach().sum(0).expand({3, 8}) + 1.0;
    EXPECT_TRUE(torch::allclose(x.grad(), expected, 2e-2, 2e-2));
}

TEST(CrossEntropy, EqualsATensCrossEntropyIncludingMinusInfinityPadding) {
    torch::manual_seed(4);
    torch::Tensor logits0 = torch::randn({6, 16});
    logits0.narrow(1, 12, 4).fill_(-std::numeric_limits<float>::infinity());
    const torch::Tensor targets = torch::randint(0, 12, {6}, torch::kInt64);
    const torch::Tensor logits = leaf(logits0), reference = leaf(logits0);
    const torch::Tensor loss = cross_entropy(logits, targets);
    loss.backward();
    const torch::Tensor expected = torch::cross_entropy_loss(reference.narrow(1, 0, 12), targets);
    expected.backward();
    EXPECT_NEAR(loss.item<double>(), expected.item<double>(), 1e-6);
    EXPECT_TRUE(torch::allclose(logits.grad().narrow(1, 0, 12), reference.grad().narrow(1, 0, 12),
                                1e-6, 1e-6));
    EXPECT_EQ(logits.grad().narrow(1, 12, 4).abs().sum().item<float>(), 0.0f);
}
