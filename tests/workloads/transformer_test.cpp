// Tests of the transformer building blocks (src/workloads/transformer.cpp).
#include "workloads/transformer.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

namespace {

// Output and gradients (x, weight, bias) of `head` on fresh copies of the same inputs.
struct HeadRun {
    torch::Tensor out, grad_x, grad_weight, grad_bias;
};

template <typename Head>
HeadRun run_head(Head head, int64_t rows, bool with_bias) {
    torch::manual_seed(3);
    auto x = torch::randn({2, 5, 16}).requires_grad_();
    auto weight = torch::randn({rows, 16}).requires_grad_();
    auto bias = with_bias ? torch::randn({rows}).requires_grad_() : torch::Tensor();
    torch::Tensor out = head(x, weight, bias);
    // A loss that weighs every output differently, so that a misplaced column would show.
    (out * torch::arange(out.numel()).view(out.sizes()).sin()).sum().backward();
    return {out.detach(), x.grad(), weight.grad(), with_bias ? bias.grad() : torch::Tensor()};
}

}  // namespace

TEST(LinearWithAlignedRows, EqualsLinearInValuesAndGradients) {
    for (int64_t rows : {1, 63, 64, 100, 257}) {
        for (bool with_bias : {false, true}) {
            SCOPED_TRACE("rows " + std::to_string(rows) + (with_bias ? " with bias" : ""));
            const HeadRun aligned = run_head(
                [](auto& x, auto& w, auto& b) { return linear_with_aligned_rows(x, w, b); }, rows,
                with_bias);
            const HeadRun plain = run_head(
                [](auto& x, auto& w, auto& b) { return torch::nn::functional::linear(x, w, b); },
                rows, with_bias);
            ASSERT_EQ(aligned.out.sizes(), plain.out.sizes());
            EXPECT_TRUE(torch::allclose(aligned.out, plain.out, 1e-5, 1e-5));
            EXPECT_TRUE(torch::allclose(aligned.grad_x, plain.grad_x, 1e-5, 1e-5));
            ASSERT_EQ(aligned.grad_weight.sizes(), plain.grad_weight.sizes());
            EXPECT_TRUE(torch::allclose(aligned.grad_weight, plain.grad_weight, 1e-5, 1e-5));
            if (with_bias) {
                EXPECT_TRUE(torch::allclose(aligned.grad_bias, plain.grad_bias, 1e-5, 1e-5));
            }
        }
    }
}

TEST(LinearWithAlignedRows, OutputRowsLieAMultipleOf64Apart) {
    const torch::Tensor out =
        linear_with_aligned_rows(torch::randn({3, 8}), torch::randn({100, 8}));
    EXPECT_EQ(out.size(1), 100);
    EXPECT_EQ(out.stride(0), 128);
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
