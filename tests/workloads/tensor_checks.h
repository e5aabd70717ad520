// What the GPU checks of migscope's fused kernels share: their fixture (a GPU, the kernels on), a
// leaf copy to take gradients at, and a closeness check scaled to the expected values (bf16
// results: ~3 digits).
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "workloads/kernels/fused_ops.h"

namespace migscope::workloads::testing {

// Needs a GPU; seeds torch; switches the fused kernels back on after each test.
class FusedKernelsGpu : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
        ASSERT_TRUE(fused_kernels_enabled());
        torch::manual_seed(0);
    }
    void TearDown() override { set_fused_kernels_enabled(true); }
};

inline torch::Tensor leaf(const torch::Tensor& t) {
    return t.detach().clone().set_requires_grad(true);  // clone keeps the memory format
}

// max |actual - expected| within a tolerance of rtol * max|expected|.
inline void expect_close(const torch::Tensor& actual, const torch::Tensor& expected,
                         const char* what, double rtol = 1.5e-2) {
    ASSERT_TRUE(actual.defined()) << what;
    ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
    const torch::Tensor a = actual.to(torch::kFloat32), e = expected.to(torch::kFloat32);
    const double scale = e.abs().max().item<double>();
    const double error = (a - e).abs().max().item<double>();
    EXPECT_LE(error, rtol * scale + 1e-6)
        << what << ": max error " << error << " against scale " << scale;
}

}  // namespace migscope::workloads::testing
