// Tests of AdamW on fp32 masters for bf16 parameters (ATen path, on the CPU): same update as the
// fp32 fused AdamW, parameters the rounded masters, the masters back in place after training.
#include "workloads/training/master_weight_adamw.h"

#include <gtest/gtest.h>

using namespace migscope::workloads;

namespace {

const AdamWSettings kSettings{1e-2, 0.1, 0.9, 0.99, 1e-8};

// fp32 parameters and a copy of them as the fp32 fused AdamW's reference parameters.
struct Pair {
    std::vector<torch::Tensor> ours, reference;
};

Pair make_pair() {
    torch::manual_seed(0);
    Pair pair{{torch::randn({7, 5}), torch::randn({3}), torch::randn({2, 2})}, {}};
    for (auto& p : pair.ours) {
        p.set_requires_grad(true);
        pair.reference.push_back(p.detach().clone().set_requires_grad(true));
    }
    return pair;
}

}  // namespace

TEST(MasterWeightAdamW, TurnsTheParametersIntoBf16AndKeepsTheirValuesAsMasters) {
    Pair pair = make_pair();
    MasterWeightAdamW optimizer(pair.ours, kSettings);
    for (size_t i = 0; i < pair.ours.size(); ++i) {
        EXPECT_EQ(pair.ours[i].scalar_type(), torch::kBFloat16);
        EXPECT_TRUE(pair.ours[i].requires_grad());
        EXPECT_TRUE(torch::equal(pair.ours[i], pair.reference[i].detach().to(torch::kBFloat16)));
    }
    optimizer.restore_master_weights();  // the masters are the unrounded values
    for (size_t i = 0; i < pair.ours.size(); ++i)
        EXPECT_TRUE(torch::equal(pair.ours[i], pair.reference[i]));
}

TEST(MasterWeightAdamW, UpdatesTheMastersAsFusedAdamWUpdatesFp32Parameters) {
    Pair pair = make_pair();
    MasterWeightAdamW ours(pair.ours, kSettings);
    FusedAdamW reference(pair.reference, kSettings);
    for (int step = 0; step < 5; ++step) {
        ours.zero_grad();
        reference.zero_grad();
        for (size_t i = 0; i < pair.ours.size(); ++i) {
            // bf16 gradients, as the model computes them; the reference gets the same values.
            const torch::Tensor g = torch::randn(pair.ours[i].sizes()).to(torch::kBFloat16);
            pair.ours[i].mutable_grad() = g;
            pair.reference[i].mutable_grad() = g.to(torch::kFloat32);
        }
        ours.step();
        reference.step();
        for (size_t i = 0; i < pair.ours.size(); ++i) {  // the working weights: rounded masters
            EXPECT_TRUE(torch::equal(pair.ours[i], pair.reference[i].detach().to(torch::kBFloat16)))
                << "step " << step << ", parameter " << i;
        }
    }
    ours.restore_master_weights();
    for (size_t i = 0; i < pair.ours.size(); ++i) {
        EXPECT_EQ(pair.ours[i].scalar_type(), torch::kFloat32);
        EXPECT_TRUE(torch::equal(pair.ours[i], pair.reference[i]));
    }
}

TEST(MasterWeightAdamW, SkipsParametersWithoutGradients) {
    torch::Tensor used = torch::ones({4}, torch::requires_grad());
    torch::Tensor unused = torch::ones({4}, torch::requires_grad());
    MasterWeightAdamW optimizer({used, unused}, kSettings);
    optimizer.zero_grad();
    used.mutable_grad() = torch::ones({4}, torch::kBFloat16);
    optimizer.step();
    EXPECT_FALSE(torch::equal(used, torch::ones({4}, torch::kBFloat16)));
    EXPECT_TRUE(torch::equal(unused, torch::ones({4}, torch::kBFloat16)));
}

TEST(MasterWeightAdamW, UpdatesBelowHalfABf16UlpAccumulateInTheMasters) {
    torch::Tensor p = torch::ones({4}, torch::requires_grad());
    MasterWeightAdamW optimizer({p}, {/*learning_rate=*/3e-4, /*weight_decay=*/0.0});
    optimizer.zero_grad();
    p.mutable_grad() = torch::ones({4}, torch::kBFloat16);
    optimizer.step();  // 1 - 3e-4: rounds back to 1 in bf16 (its ulp at 1 is 2^-7)
    EXPECT_TRUE(torch::equal(p, torch::ones({4}, torch::kBFloat16)));
    optimizer.restore_master_weights();
    EXPECT_TRUE(torch::allclose(p, torch::full({4}, 1.0 - 3e-4), 0.0, 1e-6));
}

TEST(MasterWeightAdamW, RefusesParametersThatAreNotFp32) {
    EXPECT_THROW(MasterWeightAdamW({torch::ones({2}, torch::kBFloat16).requires_grad_()}, {}),
                 c10::Error);
}
