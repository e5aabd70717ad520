// GPU check of the transformer blocks' precision under CUDA autocast, which (unlike the CPU's)
// runs a plain layer norm in fp32: the residual stream and the layer norms must stay in bf16.
// Labelled gpu: run on the GPU host (ctest -L gpu).
#include "workloads/models/transformer.h"

#include "workloads/training/autocast.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

TEST(ResidualDtypeGpu, LayerNormStaysInBf16UnderCudaAutocastWithFp32OrBf16Parameters) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    for (bool bf16_parameters : {false, true}) {
        SCOPED_TRACE(bf16_parameters ? "bf16 parameters" : "fp32 parameters");
        torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({1600}));
        norm->to(torch::kCUDA, bf16_parameters ? torch::kBFloat16 : torch::kFloat32);
        const torch::Tensor x = torch::randn({8, 1600}, torch::kCUDA);
        Bf16Autocast autocast(at::kCUDA);
        ASSERT_EQ(norm(x.to(torch::kBFloat16)).scalar_type(), torch::kFloat32);  // the premise
        const torch::Tensor stream = to_residual_dtype(x);
        EXPECT_EQ(stream.scalar_type(), torch::kBFloat16);
        const torch::Tensor y = layer_norm_in_input_dtype(norm, stream);
        EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
        EXPECT_TRUE(
            torch::allclose(y.to(torch::kFloat32), norm(x).to(torch::kFloat32), 3e-2, 3e-2));
    }
}
