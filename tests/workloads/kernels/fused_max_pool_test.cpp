// Tests of the 3x3 stride-2 max pooling's CPU path (src/workloads/kernels/fused_max_pool.cpp): it
// is ATen's max_pool2d with that window, in values and gradients. Its CUDA kernels are checked on
// the GPU host (fused_max_pool_gpu_test.cpp).
#include "workloads/kernels/fused_max_pool.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

TEST(MaxPool3x3Stride2, IsAtensMaxPoolWithThatWindowInValuesAndGradients) {
    torch::manual_seed(4);
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{2, 3, 7, 6}, {1, 8, 1, 1}, {3, 16, 12, 13}}) {
        const torch::Tensor x0 = torch::randn(sizes);
        const torch::Tensor x = x0.clone().set_requires_grad(true),
                            rx = x0.clone().set_requires_grad(true);
        const torch::Tensor y = max_pool_3x3_stride2(x);
        const torch::Tensor ry = torch::nn::functional::max_pool2d(
            rx, torch::nn::functional::MaxPool2dFuncOptions(3).stride(2).padding(1));
        ASSERT_EQ(y.sizes(), ry.sizes());
        EXPECT_EQ(y.size(2), (sizes[2] - 1) / 2 + 1);
        EXPECT_TRUE(torch::equal(y, ry));
        const torch::Tensor dy = torch::randn(y.sizes());
        (y * dy).sum().backward();
        (ry * dy).sum().backward();
        EXPECT_TRUE(torch::equal(x.grad(), rx.grad()));
    }
}
