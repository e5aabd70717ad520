// GPU check of the 3x3 stride-2 max pooling's CUDA kernels (fused_max_pool.h): the same values,
// argmax choices and gradients as ATen's max_pool2d on the same bf16 channels-last input, bit for
// bit, including ties (the first maximum of a window wins), NaN (a NaN wins) and the padded
// edges; inputs the kernels do not take fall back to ATen. Labelled gpu: run on the GPU host
// (ctest -L gpu).
#include "workloads/kernels/fused_max_pool.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "workloads/tensor_checks.h"

using namespace migscope::workloads;
using migscope::workloads::testing::leaf;

namespace {

using FusedMaxPoolGpu = migscope::workloads::testing::FusedKernelsGpu;

torch::Tensor channels_last_bf16(const torch::Tensor& t) {
    return t.to(torch::kCUDA, torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
}

torch::Tensor aten_max_pool(const torch::Tensor& x) {
    return torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
}

// The kernels' output and input gradient against ATen's for the same input and output gradient.
void expect_same_as_aten(const torch::Tensor& input, const std::string& what) {
    SCOPED_TRACE(what);
    const torch::Tensor x = leaf(input), rx = leaf(input);
    const torch::Tensor y = max_pool_3x3_stride2(x), ry = aten_max_pool(rx);
    ASSERT_EQ(y.sizes(), ry.sizes());
    EXPECT_TRUE(y.is_contiguous(torch::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(torch::equal(y.isnan(), ry.isnan()));
    EXPECT_TRUE(torch::equal(y.nan_to_num(0), ry.nan_to_num(0)));
    const torch::Tensor dy = channels_last_bf16(torch::randn(y.sizes()));
    y.backward(dy);
    ry.backward(dy);
    EXPECT_TRUE(torch::equal(x.grad(), rx.grad()));
}

TEST_F(FusedMaxPoolGpu, GivesAtensValuesAndGradientsBitForBit) {
    // [N, C, H, W]: the ResNet stem at batch 32 (64 channels, 112 x 112), odd and even sizes,
    // one pixel, many channel vectors.
    for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{
             {32, 64, 112, 112}, {2, 8, 5, 5}, {3, 72, 7, 9}, {1, 8, 1, 1}, {2, 256, 6, 4}}) {
        std::string shape;
        for (int64_t size : sizes)
            shape += (shape.empty() ? "" : "x") + std::to_string(size);
        expect_same_as_aten(channels_last_bf16(torch::randn(sizes)), shape + " random");
        // Few distinct values: windows with tied maxima, where the first one must win.
        expect_same_as_aten(channels_last_bf16(torch::randint(0, 3, sizes)), shape + " ties");
        // After a ReLU, as in a ResNet: most windows hold zeros.
        expect_same_as_aten(channels_last_bf16(torch::relu(torch::randn(sizes) - 1)),
                            shape + " relu");
    }
}

TEST_F(FusedMaxPoolGpu, ANanWinsItsWindowAsInAten) {
    torch::Tensor x = torch::randn({2, 16, 9, 9});
    x.index_put_({0, 3, 4, 4}, std::numeric_limits<float>::quiet_NaN());
    x.index_put_({1, 8, 0, 0}, std::numeric_limits<float>::quiet_NaN());
    x.index_put_({1, 8, 0, 1}, -std::numeric_limits<float>::infinity());
    expect_same_as_aten(channels_last_bf16(x), "nan");
    EXPECT_TRUE(max_pool_3x3_stride2(channels_last_bf16(x)).isnan().any().item<bool>());
}

TEST_F(FusedMaxPoolGpu, InputsTheKernelsDoNotTakeFallBackToAten) {
    // 12 channels (not a multiple of 8), contiguous (not channels-last), fp32.
    for (const torch::Tensor& x : {channels_last_bf16(torch::randn({2, 12, 8, 8})),
                                   torch::randn({2, 16, 8, 8}, torch::kCUDA).to(torch::kBFloat16),
                                   torch::randn({2, 16, 8, 8}, torch::kCUDA)}) {
        EXPECT_TRUE(torch::equal(max_pool_3x3_stride2(x), aten_max_pool(x)));
    }
}

}  // namespace
