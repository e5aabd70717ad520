// GPU check of the cuBLASLt epilogues (src/workloads/cublaslt_epilogues.cpp) and the layers
// built on them (fused_linear.cpp): each GEMM runs (the check fails if cuBLASLt declines it), its
// results match an fp32 reference, its GELU is the tanh form, and the layers' values and
// gradients match plain autograd's in bf16. Labelled gpu: run on the GPU host (ctest -L gpu).
#include "workloads/cublaslt_epilogues.h"
#include "workloads/fused_linear.h"

#include <gtest/gtest.h>

#include "fused_linear_check.h"

using namespace migscope::workloads;
using migscope::workloads::testing::LayerRun;
using migscope::workloads::testing::relative_error;
using migscope::workloads::testing::run_layer;

namespace {

constexpr double kBf16Tolerance = 1e-2;  // relative error of a bf16 result against fp32

torch::Tensor bf16_randn(std::vector<int64_t> sizes, double scale = 1.0) {
    return (torch::randn(sizes, torch::kCUDA) * scale).to(torch::kBFloat16);
}

torch::Tensor fp32(const torch::Tensor& t) {
    return t.to(torch::kFloat32);
}

}  // namespace

TEST(CublasLtEpiloguesGpu, WeightAndBiasGradMatchesFp32) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    torch::manual_seed(1);
    const torch::Tensor dy = bf16_randn({1024, 4800}), x = bf16_randn({1024, 1600});
    torch::Tensor grad_weight, grad_bias;
    ASSERT_TRUE(weight_and_bias_grad(dy, x, grad_weight, grad_bias));
    EXPECT_LT(relative_error(grad_weight, fp32(dy).t().mm(fp32(x))), kBf16Tolerance);
    EXPECT_LT(relative_error(grad_bias, fp32(dy).sum(0)), kBf16Tolerance);
}

TEST(CublasLtEpiloguesGpu, LinearGeluTanhMatchesFp32AndKeepsTheGelusInput) {
    torch::manual_seed(2);
    const torch::Tensor x = bf16_randn({1024, 1600}), w = bf16_randn({6400, 1600}, 0.02),
                        b = bf16_randn({6400}, 0.1);
    torch::Tensor out, pre;
    ASSERT_TRUE(linear_gelu_tanh(x, w, b, out, pre));
    const torch::Tensor reference_pre = torch::linear(fp32(x), fp32(w), fp32(b));
    EXPECT_LT(relative_error(pre, reference_pre), kBf16Tolerance);
    EXPECT_LT(relative_error(out, torch::gelu(reference_pre, "tanh")), kBf16Tolerance);
}

TEST(CublasLtEpiloguesGpu, GeluIsTheTanhForm) {
    // An identity input makes the GEMM exact: the output is gelu(weight) rounded to bf16. On
    // [-4, -2] the tanh form and the exact (erf) form differ by 2-45 %, far above bf16's rounding.
    const int64_t n = 512;
    const auto options = torch::TensorOptions(torch::kCUDA).dtype(torch::kBFloat16);
    const torch::Tensor x = torch::eye(n, options);
    const torch::Tensor w =
        torch::linspace(-4.0, -2.0, n * n, torch::kCUDA).view({n, n}).to(options);
    const torch::Tensor b = torch::zeros({n}, options);
    torch::Tensor out, pre;
    ASSERT_TRUE(linear_gelu_tanh(x, w, b, out, pre));
    const torch::Tensor inputs = fp32(w).t();  // out[i][j] = gelu(w[j][i])
    const double tanh_error = relative_error(out, torch::gelu(inputs, "tanh"));
    const double erf_error = relative_error(out, torch::gelu(inputs, "none"));
    EXPECT_LT(tanh_error, erf_error / 4) << "against tanh " << tanh_error << ", erf " << erf_error;
}

TEST(FusedLinearGpu, LayersMatchPlainAutogradInBf16) {
    const auto options = torch::TensorOptions(torch::kCUDA).dtype(torch::kBFloat16);
    using Inputs = std::vector<torch::Tensor>;
    const std::vector<bool> all_trainable{true, true, true, true, true};
    const LayerRun linear =
        run_layer([](const Inputs& in) { return linear_with_bias(in[0], in[1], in[2]); },
                  {{4, 256, 512}, {1536, 512}, {1536}}, all_trainable, options);
    const LayerRun plain_linear =
        run_layer([](const Inputs& in) { return torch::linear(in[0], in[1], in[2]); },
                  {{4, 256, 512}, {1536, 512}, {1536}}, all_trainable, options);
    const LayerRun mlp =
        run_layer([](const Inputs& in) { return gelu_tanh_mlp(in[0], in[1], in[2], in[3], in[4]); },
                  {{4, 256, 512}, {2048, 512}, {2048}, {512, 2048}, {512}}, all_trainable, options);
    const LayerRun plain_mlp = run_layer(
        [](const Inputs& in) {
            return torch::linear(torch::gelu(torch::linear(in[0], in[1], in[2]), "tanh"), in[3],
                                 in[4]);
        },
        {{4, 256, 512}, {2048, 512}, {2048}, {512, 2048}, {512}}, all_trainable, options);
    for (const auto& [fused, plain] : {std::pair{&linear, &plain_linear}, {&mlp, &plain_mlp}}) {
        EXPECT_LT(relative_error(fused->output, plain->output), kBf16Tolerance);
        for (size_t i = 0; i < plain->grads.size(); ++i) {
            SCOPED_TRACE("gradient of input " + std::to_string(i));
            ASSERT_TRUE(fused->grads[i].defined());
            EXPECT_EQ(fused->grads[i].scalar_type(), torch::kBFloat16);
            EXPECT_LT(relative_error(fused->grads[i], plain->grads[i]), kBf16Tolerance);
        }
    }
}
