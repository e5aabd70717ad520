// Tests of the linear layers with hand-written backward passes (src/workloads/fused_linear.cpp)
// on the CPU, where they take the ATen path: values and gradients equal plain autograd's, and
// frozen inputs get no gradient.
#include "workloads/fused_linear.h"

#include "workloads/autocast.h"
#include "workloads/cublaslt_epilogues.h"

#include <gtest/gtest.h>

#include "fused_linear_check.h"

using namespace migscope::workloads;
using migscope::workloads::testing::LayerRun;
using migscope::workloads::testing::run_layer;

namespace {

using Inputs = std::vector<torch::Tensor>;

void expect_equal_runs(const LayerRun& fused, const LayerRun& plain) {
    EXPECT_TRUE(torch::allclose(fused.output, plain.output, 1e-5, 1e-5));
    ASSERT_EQ(fused.grads.size(), plain.grads.size());
    for (size_t i = 0; i < fused.grads.size(); ++i) {
        SCOPED_TRACE("input " + std::to_string(i));
        ASSERT_EQ(fused.grads[i].defined(), plain.grads[i].defined());
        if (plain.grads[i].defined()) {
            EXPECT_TRUE(torch::allclose(fused.grads[i], plain.grads[i], 1e-5, 1e-5));
        }
    }
}

std::string describe(const std::vector<bool>& needs_grad) {
    std::string s = "needs grad:";
    for (bool b : needs_grad)
        s += b ? " 1" : " 0";
    return s;
}

}  // namespace

TEST(LinearWithBias, EqualsLinearInValuesAndGradientsWithAnyInputsFrozen) {
    const std::vector<std::vector<int64_t>> shapes{{2, 5, 16}, {24, 16}, {24}};
    for (const std::vector<bool>& needs_grad : std::vector<std::vector<bool>>{
             {true, true, true}, {true, false, false}, {false, true, true}, {false, true, false}}) {
        SCOPED_TRACE(describe(needs_grad));
        const LayerRun fused =
            run_layer([](const Inputs& in) { return linear_with_bias(in[0], in[1], in[2]); },
                      shapes, needs_grad, torch::kFloat32);
        const LayerRun plain =
            run_layer([](const Inputs& in) { return torch::linear(in[0], in[1], in[2]); }, shapes,
                      needs_grad, torch::kFloat32);
        EXPECT_EQ(fused.output.sizes(), (std::vector<int64_t>{2, 5, 24}));
        expect_equal_runs(fused, plain);
    }
}

TEST(GeluTanhMlp, EqualsLinearGeluLinearInValuesAndGradientsWithAnyLayerFrozen) {
    const std::vector<std::vector<int64_t>> shapes{{2, 5, 16}, {32, 16}, {32}, {8, 32}, {8}};
    for (const std::vector<bool>& needs_grad :
         std::vector<std::vector<bool>>{{true, true, true, true, true},
                                        {true, false, false, false, false},
                                        {false, false, false, true, true},
                                        {false, true, true, false, false},
                                        {true, true, false, true, false}}) {
        SCOPED_TRACE(describe(needs_grad));
        const LayerRun fused = run_layer(
            [](const Inputs& in) { return gelu_tanh_mlp(in[0], in[1], in[2], in[3], in[4]); },
            shapes, needs_grad, torch::kFloat32);
        const LayerRun plain = run_layer(
            [](const Inputs& in) {
                return torch::linear(torch::gelu(torch::linear(in[0], in[1], in[2]), "tanh"), in[3],
                                     in[4]);
            },
            shapes, needs_grad, torch::kFloat32);
        EXPECT_EQ(fused.output.sizes(), (std::vector<int64_t>{2, 5, 8}));
        expect_equal_runs(fused, plain);
    }
}

TEST(LinearWithBias, UnderAutocastOverFp32WeightsIsAutocastsLinear) {
    Bf16Autocast autocast(at::kCPU);
    auto x = torch::randn({4, 16}).to(torch::kBFloat16).requires_grad_();
    auto weight = torch::randn({8, 16}).requires_grad_();
    auto bias = torch::randn({8}).requires_grad_();
    const torch::Tensor y = linear_with_bias(x, weight, bias);
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::equal(y, torch::linear(x, weight, bias)));
    y.sum().backward();
    ASSERT_TRUE(weight.grad().defined());
    EXPECT_EQ(weight.grad().scalar_type(), torch::kFloat32);
}

TEST(CublasLtEpilogues, DeclineCpuTensorsAndLeaveTheOutputsAlone) {
    const torch::Tensor x = torch::randn({16, 8}), w = torch::randn({8, 8}), b = torch::randn({8});
    torch::Tensor first, second;
    EXPECT_FALSE(weight_and_bias_grad(x, x, first, second));
    EXPECT_FALSE(linear_gelu_tanh(x, w, b, first, second));
    EXPECT_FALSE(first.defined());
    EXPECT_FALSE(second.defined());
}
