// GPU check of the fused batch norm (fused_batch_norm.h): its CUDA kernels' values, gradients and
// running statistics against an fp32 reference computed by ATen from the same bf16 inputs; whole
// ResNets with the kernels against the same ResNets without them (one step, loss curves, peak
// memory); the same bits for the same inputs. Labelled gpu: run on the GPU host (ctest -L gpu).
#include "workloads/kernels/fused_batch_norm.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "workloads/tensor_checks.h"
#include "workloads/training/autocast.h"
#include "workloads/kernels/fused_ops.h"
#include "workloads/models/registry.h"
#include "workloads/training/trainer.h"

using namespace migscope::workloads;
using migscope::workloads::testing::expect_close;
using migscope::workloads::testing::leaf;

namespace {

torch::Tensor channels_last_bf16(const torch::Tensor& t) {
    return t.to(torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
}

// ||actual - expected|| / ||expected||: for gradients behind a ReLU, where a value within
// rounding of zero may fall on the other side of the mask in the reference.
void expect_near_in_norm(const torch::Tensor& actual, const torch::Tensor& expected,
                         const char* what, double rtol = 1e-2) {
    ASSERT_TRUE(actual.defined()) << what;
    const torch::Tensor a = actual.to(torch::kFloat32), e = expected.to(torch::kFloat32);
    const double distance = ((a - e).norm() / e.norm()).item<double>();
    EXPECT_LT(distance, rtol) << what;
}

using FusedBatchNormGpu = migscope::workloads::testing::FusedKernelsGpu;

TEST_F(FusedBatchNormGpu, MatchesTheFp32NormAddAndReluInValuesGradientsAndRunningStatistics) {
    // [N, C, H, W]: every tile width (8 to 2,048 channels, then two column blocks), few rows and
    // many (1,056 row blocks), and a mean far from zero against the spread (the shifted sums).
    struct Shape {
        std::vector<int64_t> sizes;
        double offset;
    };
    for (const Shape& shape : std::vector<Shape>{{{2, 8, 5, 5}, 0.0},
                                                 {{4, 64, 9, 11}, 0.0},
                                                 {{32, 64, 56, 56}, 0.0},
                                                 {{8, 256, 14, 14}, 20.0},
                                                 {{3, 2048, 7, 7}, 0.0},
                                                 {{2, 4096, 3, 3}, 0.0}}) {
        const int64_t channels = shape.sizes[1];
        for (bool with_residual : {true, false}) {
            for (bool relu : {true, false}) {
                SCOPED_TRACE(std::to_string(shape.sizes[0]) + "x" + std::to_string(channels) + "x" +
                             std::to_string(shape.sizes[2]) + "x" + std::to_string(shape.sizes[3]) +
                             (with_residual ? ", residual" : "") + (relu ? ", relu" : ""));
                torch::nn::BatchNorm2d norm(channels), reference(channels);
                norm->to(torch::kCUDA);
                reference->to(torch::kCUDA);
                {
                    torch::NoGradGuard no_grad;
                    norm->weight.normal_(1.0, 0.3);
                    norm->bias.normal_(0.0, 0.3);
                    norm->running_mean.normal_();
                    norm->running_var.uniform_(0.5, 2.0);
                    for (const char* name : {"weight", "bias"})
                        reference->named_parameters()[name].copy_(norm->named_parameters()[name]);
                    reference->running_mean.copy_(norm->running_mean);
                    reference->running_var.copy_(norm->running_var);
                }
                const torch::Tensor x = leaf(channels_last_bf16(
                    torch::randn(shape.sizes, torch::kCUDA) * 2.0 + shape.offset));
                const torch::Tensor residual =
                    leaf(channels_last_bf16(torch::randn(shape.sizes, torch::kCUDA)));
                const torch::Tensor dy =
                    channels_last_bf16(torch::randn(shape.sizes, torch::kCUDA));
                const torch::Tensor y =
                    batch_norm_add_relu(x, *norm, with_residual ? residual : torch::Tensor(), relu);
                ASSERT_EQ(y.scalar_type(), torch::kBFloat16);
                ASSERT_TRUE(y.is_contiguous(torch::MemoryFormat::ChannelsLast));
                y.backward(dy);

                const torch::Tensor rx = leaf(x.to(torch::kFloat32)),
                                    rr = leaf(residual.to(torch::kFloat32));
                torch::Tensor ry = reference(rx);
                if (with_residual)
                    ry = ry + rr;
                if (relu)
                    ry = torch::relu(ry);
                ry.backward(dy.to(torch::kFloat32));

                expect_close(y, ry, "y");
                expect_near_in_norm(x.grad(), rx.grad(), "dx");
                EXPECT_EQ(residual.grad().defined(), with_residual);
                if (with_residual) {
                    expect_near_in_norm(residual.grad(), rr.grad(), "d residual");
                }
                expect_near_in_norm(norm->weight.grad(), reference->weight.grad(), "d gamma");
                expect_near_in_norm(norm->bias.grad(), reference->bias.grad(), "d beta");
                expect_close(norm->running_mean, reference->running_mean, "running mean", 1e-3);
                expect_close(norm->running_var, reference->running_var, "running var", 1e-3);
                EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 1);
            }
        }
    }
}

// Gradients and running statistics of a whole model after one step.
struct StepResult {
    double loss = 0;
    std::vector<std::string> names;
    std::vector<torch::Tensor> gradients, buffers;
};

// ||a - b|| / ||b|| over all tensors.
double relative_distance(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    double apart = 0, size = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        apart += (a[i] - b[i]).pow(2).sum().item<double>();
        size += b[i].pow(2).sum().item<double>();
    }
    return std::sqrt(apart / size);
}

// One forward and backward of `name` at batch 4 as the trainer runs it on CUDA (fp32 parameters,
// channels-last, bf16 autocast), or all in fp32 without autocast (the reference).
StepResult one_step(const char* name, bool bf16) {
    torch::manual_seed(0);
    std::unique_ptr<Model> model = make_model(name);
    model->to_device(torch::kCUDA);
    torch::manual_seed(1);
    const Batch batch = model->synthetic_batch(4, torch::kCUDA);
    torch::Tensor loss;
    {
        std::optional<Bf16Autocast> autocast;
        if (bf16)
            autocast.emplace(at::kCUDA);
        loss = model->loss(batch);
    }
    loss.backward();
    StepResult result;
    result.loss = loss.item<double>();
    for (const auto& p : model->module().named_parameters()) {
        EXPECT_TRUE(p.value().grad().defined()) << p.key();
        result.names.push_back(p.key());
        result.gradients.push_back(p.value().grad().to(torch::kFloat64));
    }
    for (const torch::Tensor& b : model->module().buffers())
        result.buffers.push_back(b.to(torch::kFloat64));
    return result;
}

// Whole ResNets in bf16 with and without the kernels, each against the fp32 model: the kernels
// are no further from fp32 than ATen's bf16 batch norm is (deep batch-normed networks amplify
// rounding in their gradients at initialisation, so the two bf16 runs are compared through fp32
// rather than with each other).
TEST_F(FusedBatchNormGpu, ResNetsInBf16AreAsCloseToFp32WithTheKernelsAsWithout) {
    for (const char* name : {"resnet-tiny", "resnet18", "resnet50"}) {
        SCOPED_TRACE(name);
        const StepResult fused = one_step(name, true);
        set_fused_kernels_enabled(false);
        const StepResult unfused = one_step(name, true);
        const StepResult fp32 = one_step(name, false);
        set_fused_kernels_enabled(true);
        EXPECT_NEAR(fused.loss, fp32.loss, 1e-2 * std::abs(fp32.loss));
        const double fused_apart = relative_distance(fused.gradients, fp32.gradients);
        const double unfused_apart = relative_distance(unfused.gradients, fp32.gradients);
        std::cout << name << ": loss fused " << fused.loss << ", unfused " << unfused.loss
                  << ", fp32 " << fp32.loss << "; gradients' relative distance from fp32: fused "
                  << fused_apart << ", unfused " << unfused_apart << "; running statistics: fused "
                  << relative_distance(fused.buffers, fp32.buffers) << ", unfused "
                  << relative_distance(unfused.buffers, fp32.buffers) << "\n";
        for (size_t i = 0; i < fused.names.size(); ++i) {
            const double f = relative_distance({fused.gradients[i]}, {fp32.gradients[i]});
            const double u = relative_distance({unfused.gradients[i]}, {fp32.gradients[i]});
            if (f > 2 * u + 1e-2)
                std::cout << "  " << fused.names[i] << ": fused " << f << ", unfused " << u << "\n";
        }
        EXPECT_LT(fused_apart, 1.5 * unfused_apart + 1e-2);
        EXPECT_LT(relative_distance(fused.buffers, fp32.buffers),
                  1.5 * relative_distance(unfused.buffers, fp32.buffers) + 1e-3);
    }
}

// `steps` training steps of `name` at `batch` as the worker runs them (seeded, the model, its
// trainer, one synthetic batch), on a stream of its own; bf16 autocast, fused AdamW, the step
// replayed as a CUDA graph. Returns each step's loss, and the caching allocator's peaks over the
// run (bytes allocated and reserved).
struct TrainingRun {
    std::vector<double> losses;
    int64_t peak_allocated_bytes = 0, peak_reserved_bytes = 0;
};

TrainingRun train(const char* name, int64_t batch, uint64_t seed, int steps) {
    namespace alloc = c10::cuda::CUDACachingAllocator;
    alloc::emptyCache();
    alloc::resetPeakStats(0);
    TrainingRun run;
    {
        c10::cuda::CUDAStreamGuard on_side_stream(c10::cuda::getStreamFromPool());
        torch::manual_seed(seed);
        std::unique_ptr<Model> model = make_model(name);
        TrainerOptions options;
        options.device = torch::kCUDA;
        options.cuda_graph = true;
        Trainer trainer(*model, options);
        const Batch data = model->synthetic_batch(batch, torch::kCUDA);
        for (int i = 0; i < steps; ++i)
            run.losses.push_back(trainer.step(data));
        EXPECT_TRUE(trainer.graph_replaying()) << trainer.graph_failure();
    }
    const auto stats = alloc::getDeviceStats(0);
    const auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    run.peak_allocated_bytes = stats.allocated_bytes[all].peak;
    run.peak_reserved_bytes = stats.reserved_bytes[all].peak;
    return run;
}

// Mean over steps of |ln a - ln b|: how far apart two loss curves run.
double curve_distance(const std::vector<double>& a, const std::vector<double>& b) {
    double sum = 0;
    for (size_t i = 0; i < a.size(); ++i)
        sum += std::abs(std::log(a[i]) - std::log(b[i]));
    return sum / static_cast<double>(a.size());
}

// Training with the kernels follows ATen's batch norm: from the same seed (same weights, same
// batch) the two loss curves run no further apart than two seeds' curves do without the kernels
// (the run-to-run noise a user sees), at the default batch and at batch 32. The bound is 1.5x the
// seed-to-seed distance: resnet50:32 memorises its batch to losses near 5e-4, where its curves are
// noisiest; on the H200 it came out at 0.87x and, in one process of four, 1.05x (the others
// 0.09-0.66x). The running statistics do not enter these losses; the first test checks them.
TEST_F(FusedBatchNormGpu, TrainingFollowsTheLossCurveOfAtenBatchNormWithinSeedNoise) {
    constexpr int kSteps = 30;
    const std::vector<uint64_t> seeds = {1, 2, 3};
    for (const char* name : {"resnet18", "resnet50"}) {
        for (int64_t batch : {32, 256}) {
            SCOPED_TRACE(std::string(name) + ":" + std::to_string(batch));
            std::vector<std::vector<double>> fused, unfused;
            for (uint64_t seed : seeds) {
                fused.push_back(train(name, batch, seed, kSteps).losses);
                set_fused_kernels_enabled(false);
                unfused.push_back(train(name, batch, seed, kSteps).losses);
                set_fused_kernels_enabled(true);
            }
            double worst_gap = 0, bias = 0, seed_noise = 0;
            int pairs = 0;
            for (size_t s = 0; s < seeds.size(); ++s) {
                worst_gap = std::max(worst_gap, curve_distance(fused[s], unfused[s]));
                for (int i = 0; i < kSteps; ++i)
                    bias += std::log(fused[s][i] / unfused[s][i]) / (kSteps * seeds.size());
                for (size_t o = s + 1; o < seeds.size(); ++o, ++pairs)
                    seed_noise += curve_distance(unfused[s], unfused[o]);
            }
            seed_noise /= pairs;
            std::cout << name << ":" << batch << " mean |ln loss| apart over " << kSteps
                      << " steps: fused vs ATen, same seed, worst of " << seeds.size() << " "
                      << worst_gap << " (mean ln ratio " << bias << "); ATen, seed vs seed "
                      << seed_noise << "\n  loss at steps 1, 10, 20, " << kSteps << " (seed "
                      << seeds[0] << "): fused";
            for (int i : {0, 9, 19, kSteps - 1})
                std::cout << " " << fused[0][i];
            std::cout << "; ATen";
            for (int i : {0, 9, 19, kSteps - 1})
                std::cout << " " << unfused[0][i];
            std::cout << "\n";
            EXPECT_LT(worst_gap, 1.5 * seed_noise);
        }
    }
}

// The fused op keeps no more memory alive than BatchNorm2d + add + ReLU do (x, and y where the
// ReLU follows a residual add; the next layer keeps y anyway): a training run's peak allocated
// bytes are within 1 % of ATen's (its partial sums and the order of its allocations differ; one
// more saved activation per block would add several %). Reserved bytes, which also hold the
// allocator's fragmentation and are what `migscope run` budgets, are printed.
TEST_F(FusedBatchNormGpu, TrainingAllocatesNoMoreMemoryThanAtenBatchNorm) {
    constexpr double kGb = 1e9;
    for (const char* name : {"resnet18", "resnet50"}) {
        SCOPED_TRACE(name);
        const TrainingRun fused = train(name, 256, 1, 4);
        set_fused_kernels_enabled(false);
        const TrainingRun unfused = train(name, 256, 1, 4);
        set_fused_kernels_enabled(true);
        std::cout << name << ":256 peak GB allocated / reserved: fused "
                  << fused.peak_allocated_bytes / kGb << " / " << fused.peak_reserved_bytes / kGb
                  << ", ATen " << unfused.peak_allocated_bytes / kGb << " / "
                  << unfused.peak_reserved_bytes / kGb << "\n";
        EXPECT_LE(fused.peak_allocated_bytes, 1.01 * unfused.peak_allocated_bytes);
    }
}

// One forward and backward of the fused op (with its ReLU) on fixed, seeded inputs: every output,
// gradient and running statistic.
std::vector<torch::Tensor> fused_once(const std::vector<int64_t>& sizes, bool with_residual) {
    torch::manual_seed(5);
    const int64_t channels = sizes[1];
    torch::nn::BatchNorm2d norm(channels);
    norm->to(torch::kCUDA);
    const torch::Tensor x = leaf(channels_last_bf16(torch::randn(sizes, torch::kCUDA)));
    const torch::Tensor residual = leaf(channels_last_bf16(torch::randn(sizes, torch::kCUDA)));
    const torch::Tensor dy = channels_last_bf16(torch::randn(sizes, torch::kCUDA));
    const torch::Tensor y =
        batch_norm_add_relu(x, *norm, with_residual ? residual : torch::Tensor(), true);
    y.backward(dy);
    std::vector<torch::Tensor> out = {
        y, x.grad(), norm->weight.grad(), norm->bias.grad(), norm->running_mean, norm->running_var};
    if (with_residual)
        out.push_back(residual.grad());
    return out;
}

// Same inputs, same bits out within a process: the kernels add in a fixed order (no atomics).
TEST_F(FusedBatchNormGpu, GivesTheSameBitsForTheSameInputs) {
    for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{{32, 64, 56, 56},
                                                                               {32, 256, 28, 28},
                                                                               {32, 1024, 14, 14},
                                                                               {32, 2048, 7, 7},
                                                                               {256, 2048, 7, 7},
                                                                               {2, 4096, 3, 3}}) {
        for (bool with_residual : {true, false}) {
            SCOPED_TRACE(std::to_string(sizes[1]) + " channels" +
                         (with_residual ? ", residual" : ""));
            const std::vector<torch::Tensor> a = fused_once(sizes, with_residual);
            const std::vector<torch::Tensor> b = fused_once(sizes, with_residual);
            for (size_t i = 0; i < a.size(); ++i)
                EXPECT_TRUE(torch::equal(a[i], b[i])) << "output " << i;
        }
    }
    // A whole ResNet-50's loss, three times from the same weights and batch (training-mode
    // forward; the running statistics it updates do not enter the loss).
    torch::manual_seed(0);
    std::unique_ptr<Model> model = make_model("resnet50");
    model->to_device(torch::kCUDA);
    const Batch batch = model->synthetic_batch(32, torch::kCUDA);
    Bf16Autocast autocast(at::kCUDA);
    torch::NoGradGuard no_grad;
    const double first = model->loss(batch).item<double>();
    const double second = model->loss(batch).item<double>();
    const double third = model->loss(batch).item<double>();
    EXPECT_EQ(first, second);
    EXPECT_EQ(second, third);
    std::cout << "resnet50:32 loss three times: " << first << ", " << second << ", " << third
              << " (cuDNN benchmark " << at::globalContext().benchmarkCuDNN() << ")\n";
}

}  // namespace
