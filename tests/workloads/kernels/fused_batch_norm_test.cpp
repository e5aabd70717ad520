// Tests of the fused batch norm's CPU path (src/workloads/kernels/fused_batch_norm.cpp): it equals
// BatchNorm2d followed by the residual add and ReLU in values, gradients and running statistics.
// Its CUDA kernels are checked on the GPU host (fused_batch_norm_gpu_test.cpp).
#include "workloads/kernels/fused_batch_norm.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

namespace {

torch::Tensor leaf(const torch::Tensor& t) {
    return t.detach().clone().set_requires_grad(true);
}

torch::nn::BatchNorm2d random_norm(int64_t channels) {
    torch::nn::BatchNorm2d norm(channels);
    torch::NoGradGuard no_grad;
    norm->weight.normal_(1.0, 0.3);
    norm->bias.normal_(0.0, 0.3);
    return norm;
}

TEST(BatchNormAddRelu, EqualsTheNormTheAddAndTheReluInValuesGradientsAndRunningStatistics) {
    for (bool with_residual : {true, false}) {
        for (bool relu : {true, false}) {
            SCOPED_TRACE(std::string(with_residual ? "residual" : "no residual") +
                         (relu ? ", relu" : ""));
            torch::manual_seed(2);
            torch::nn::BatchNorm2d norm = random_norm(6), reference = random_norm(6);
            {
                torch::NoGradGuard no_grad;
                reference->weight.copy_(norm->weight);
                reference->bias.copy_(norm->bias);
            }
            const torch::Tensor x0 = torch::randn({3, 6, 4, 5}) * 2 + 1;
            const torch::Tensor r0 = torch::randn({3, 6, 4, 5});
            const torch::Tensor x = leaf(x0), residual = leaf(r0);
            const torch::Tensor y =
                batch_norm_add_relu(x, *norm, with_residual ? residual : torch::Tensor(), relu);
            (y * torch::linspace(-1, 1, y.numel()).view(y.sizes())).sum().backward();

            const torch::Tensor rx = leaf(x0), rr = leaf(r0);
            torch::Tensor ry = reference(rx);
            if (with_residual)
                ry = ry + rr;
            if (relu)
                ry = torch::relu(ry);
            (ry * torch::linspace(-1, 1, ry.numel()).view(ry.sizes())).sum().backward();

            EXPECT_TRUE(torch::allclose(y, ry));
            if (relu) {
                EXPECT_EQ(y.min().item<float>(), 0.0f);
            }
            EXPECT_TRUE(torch::allclose(x.grad(), rx.grad(), 1e-5, 1e-5));
            EXPECT_EQ(residual.grad().defined(), with_residual);
            if (with_residual) {
                EXPECT_TRUE(torch::allclose(residual.grad(), rr.grad(), 1e-5, 1e-5));
            }
            EXPECT_TRUE(torch::allclose(norm->weight.grad(), reference->weight.grad(), 1e-5, 1e-5));
            EXPECT_TRUE(torch::allclose(norm->bias.grad(), reference->bias.grad(), 1e-5, 1e-5));
            EXPECT_TRUE(torch::allclose(norm->running_mean, reference->running_mean));
            EXPECT_TRUE(torch::allclose(norm->running_var, reference->running_var));
            EXPECT_FALSE(torch::allclose(norm->running_mean, torch::zeros({6})));
            EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 1);
        }
    }
}

TEST(BatchNormAddRelu, UsesTheRunningStatisticsInEvaluationMode) {
    torch::manual_seed(3);
    torch::nn::BatchNorm2d norm = random_norm(4);
    {
        torch::NoGradGuard no_grad;
        norm->running_mean.normal_();
        norm->running_var.uniform_(0.5, 2.0);
    }
    norm->eval();
    const torch::Tensor x = torch::randn({2, 4, 3, 3});
    const torch::Tensor y = batch_norm_add_relu(x, *norm, torch::Tensor(), true);
    const auto shape = [](const torch::Tensor& t) { return t.view({1, 4, 1, 1}); };
    const torch::Tensor expected =
        torch::relu((x - shape(norm->running_mean)) / torch::sqrt(shape(norm->running_var) + 1e-5) *
                        shape(norm->weight) +
                    shape(norm->bias));
    EXPECT_TRUE(torch::allclose(y, expected, 1e-5, 1e-5));
    EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 0);
}

}  // namespace
