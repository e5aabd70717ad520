// GPU check of the AdamW kernel for bf16 weights with fp32 masters (adamw_kernels.cu): on CUDA
// tensors MasterWeightAdamW runs the kernel, which must update as ATen's fp32 fused AdamW does.
// Labelled gpu: run on the GPU host (ctest -L gpu).
#include "workloads/training/master_weight_adamw.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

TEST(MasterWeightAdamWGpu, TheKernelUpdatesAsFusedAdamWUpdatesFp32Parameters) {
    ASSERT_TRUE(torch::cuda::is_available()) << "a GPU check: run it on a machine with a GPU";
    const AdamWSettings settings{3e-4, 0.01, 0.9, 0.999, 1e-8};
    torch::manual_seed(1);
    // Sizes for both of the kernel's paths: four elements a thread, and one (n % 4 != 0).
    std::vector<torch::Tensor> ours, reference;
    for (int64_t n : {int64_t{1}, int64_t{4097}, int64_t{1600}, int64_t{6400} * 1600}) {
        torch::Tensor p = torch::randn({n}, torch::kCUDA) * 0.02;
        ours.push_back(p.clone().requires_grad_());
        reference.push_back(p.clone().requires_grad_());
    }
    MasterWeightAdamW kernel(ours, settings);
    FusedAdamW aten(reference, settings);
    for (int step = 0; step < 4; ++step) {
        kernel.zero_grad();
        aten.zero_grad();
        for (size_t i = 0; i < ours.size(); ++i) {
            const torch::Tensor g =
                (torch::randn(ours[i].sizes(), torch::kCUDA) * 1e-3).to(torch::kBFloat16);
            ours[i].mutable_grad() = g;
            reference[i].mutable_grad() = g.to(torch::kFloat32);
        }
        kernel.step();
        aten.step();
    }
    for (size_t i = 0; i < ours.size(); ++i) {
        SCOPED_TRACE("numel " + std::to_string(ours[i].numel()));
        // bf16 working weights: the reference rounded, allowing one ulp where the masters differ
        // in their last fp32 bits across a rounding boundary.
        const torch::Tensor rounded = reference[i].detach().to(torch::kBFloat16);
        const double mismatched = (ours[i] != rounded).to(torch::kFloat64).mean().item<double>();
        EXPECT_LT(mismatched, 1e-4);
        EXPECT_TRUE(
            torch::allclose(ours[i].to(torch::kFloat32), rounded.to(torch::kFloat32), 1e-2, 0.0));
    }
    kernel.restore_master_weights();
    for (size_t i = 0; i < ours.size(); ++i) {
        SCOPED_TRACE("numel " + std::to_string(ours[i].numel()));
        EXPECT_TRUE(torch::allclose(ours[i], reference[i].detach(), 1e-5, 1e-7))
            << (ours[i] - reference[i]).abs().max().item<double>();
    }
}
