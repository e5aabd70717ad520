// GPU check of the fused batch norm (fused_batch_norm.h): its CUDA kernels' values, gradients and
// running statistics against an fp32 reference computed by ATen from the same bf16 inputs, and
// whole ResNets with the kernels against the same ResNets without them. Labelled gpu: run on the
// GPU host (ctest -L gpu).
#include "workloads/fused_batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "workloads/autocast.h"
#include "workloads/fused_ops.h"
#include "workloads/registry.h"
#include "tensor_checks.h"

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

}  // namespace
