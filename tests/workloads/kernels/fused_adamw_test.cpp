// Tests that the fused AdamW computes what LibTorch's reference AdamW computes.
#include "workloads/kernels/fused_adamw.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

TEST(FusedAdamW, MatchesTheReferenceOptimizer) {
    torch::manual_seed(0);
    std::vector<torch::Tensor> ours = {torch::randn({7, 5}), torch::randn({3})};
    std::vector<torch::Tensor> reference;
    for (const auto& p : ours) {
        p.set_requires_grad(true);
        reference.push_back(p.detach().clone().set_requires_grad(true));
    }
    FusedAdamW fused(ours, {1e-2, 0.1, 0.9, 0.99, 1e-8});
    torch::optim::AdamW plain(
        reference, torch::optim::AdamWOptions(1e-2).weight_decay(0.1).betas({0.9, 0.99}).eps(1e-8));
    for (int step = 0; step < 5; ++step) {
        fused.zero_grad();
        plain.zero_grad();
        for (size_t i = 0; i < ours.size(); ++i) {
            torch::Tensor g = torch::randn_like(ours[i]);
            ours[i].mutable_grad() = g.clone();
            reference[i].mutable_grad() = g.clone();
        }
        fused.step();
        plain.step();
    }
    for (size_t i = 0; i < ours.size(); ++i) {
        EXPECT_TRUE(torch::allclose(ours[i], reference[i], 1e-5, 1e-6))
            << (ours[i] - reference[i]).abs().max().item<double>();
    }
}

TEST(FusedAdamW, SkipsParametersWithoutGradients) {
    torch::Tensor used = torch::ones({4}, torch::requires_grad());
    torch::Tensor unused = torch::ones({4}, torch::requires_grad());
    FusedAdamW fused({used, unused}, {});
    fused.zero_grad();
    used.mutable_grad() = torch::ones({4});
    fused.step();
    EXPECT_FALSE(torch::equal(used, torch::ones({4})));
    EXPECT_TRUE(torch::equal(unused, torch::ones({4})));
}
