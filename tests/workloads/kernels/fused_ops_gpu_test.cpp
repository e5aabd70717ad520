// GPU check of the fused transformer operations (fused_ops.h): each CUDA kernel's values and
// gradients against an fp32 reference computed by ATen from the same bf16 inputs, and whole tiny
// models with the kernels against the same models without them. Labelled gpu: run on the GPU host
// (ctest -L gpu).
#include "workloads/kernels/fused_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "workloads/training/autocast.h"
#include "workloads/models/registry.h"
#include "workloads/tensor_checks.h"

using namespace migscope::workloads;
using migscope::workloads::testing::expect_close;
using migscope::workloads::testing::leaf;

namespace {

torch::Tensor bf16_randn(at::IntArrayRef sizes, double scale = 1.0) {
    return (torch::randn(sizes, torch::kCUDA) * scale).to(torch::kBFloat16);
}

using FusedOpsGpu = migscope::workloads::testing::FusedKernelsGpu;

TEST_F(FusedOpsGpu, AddLayerNormMatchesTheFp32CompositionInValuesAndGradients) {
    // (rows, cols): few rows a block of the backward, and many (its staged copies reused).
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {111, 1600}, {2800, 1600}, {111, 768}, {111, 64}}) {
        for (bool sum_used : {true, false}) {
            SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) +
                         (sum_used ? ", sum used" : ""));
            torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({cols}).eps(1e-5));
            norm->to(torch::kCUDA, torch::kBFloat16);
            {
                torch::NoGradGuard no_grad;
                norm->weight.copy_(bf16_randn({cols}, 0.5) + 1.0);
                norm->bias.copy_(bf16_randn({cols}, 0.5));
            }
            const torch::Tensor x = leaf(bf16_randn({rows / 37, 37, cols}));
            const torch::Tensor delta = leaf(bf16_randn({rows / 37, 37, cols}, 0.5));
            const torch::Tensor bias = leaf(bf16_randn({cols}, 0.5));
            const NormedSum out = add_layer_norm(x, delta, bias, norm);
            ASSERT_EQ(out.normed.scalar_type(), torch::kBFloat16);
            const torch::Tensor d_normed = bf16_randn(out.normed.sizes());
            const torch::Tensor d_sum = bf16_randn(out.sum.sizes());
            std::vector<torch::Tensor> outputs{out.normed}, grads{d_normed};
            if (sum_used) {
                outputs.push_back(out.sum);
                grads.push_back(d_sum);
            }
            torch::autograd::backward(outputs, grads);

            // Reference: fp32 from the same bf16 values.
            const torch::Tensor rx = leaf(x.to(torch::kFloat32)),
                                rd = leaf(delta.to(torch::kFloat32)),
                                rb = leaf(bias.to(torch::kFloat32)),
                                rg = leaf(norm->weight.to(torch::kFloat32)),
                                rbeta = leaf(norm->bias.to(torch::kFloat32));
            const torch::Tensor rsum = rx + rd + rb;
            const torch::Tensor rnormed = torch::layer_norm(rsum, {cols}, rg, rbeta, 1e-5);
            std::vector<torch::Tensor> routputs{rnormed}, rgrads{d_normed.to(torch::kFloat32)};
            if (sum_used) {
                routputs.push_back(rsum);
                rgrads.push_back(d_sum.to(torch::kFloat32));
            }
            torch::autograd::backward(routputs, rgrads);
            expect_close(out.sum, rsum, "sum");
            expect_close(out.normed, rnormed, "normed");
            expect_close(x.grad(), rx.grad(), "x gradient");
            expect_close(delta.grad(), rd.grad(), "delta gradient");
            expect_close(bias.grad(), rb.grad(), "bias gradient");
            expect_close(norm->weight.grad(), rg.grad(), "scale gradient");
            expect_close(norm->bias.grad(), rbeta.grad(), "shift gradient");
        }
    }
}

TEST_F(FusedOpsGpu, BiasGeluMatchesTheFp32CompositionForBothFormsAndBlockWidths) {
    // 640 columns launch blocks of 128 threads, 1,280 of 160 (elementwise_threads).
    for (const auto& [tanh_form, cols] :
         {std::pair{true, 640}, std::pair{false, 640}, std::pair{true, 1280}}) {
        SCOPED_TRACE(std::string(tanh_form ? "tanh, " : "exact, ") + std::to_string(cols));
        const torch::Tensor u = leaf(bf16_randn({5, 41, cols}, 2.0));
        const torch::Tensor bias = leaf(bf16_randn({cols}));
        const torch::Tensor h = bias_gelu(u, bias, tanh_form);
        const torch::Tensor dh = bf16_randn(h.sizes());
        h.backward(dh);
        const torch::Tensor ru = leaf(u.to(torch::kFloat32)), rb = leaf(bias.to(torch::kFloat32));
        const torch::Tensor rh = torch::gelu(ru + rb, tanh_form ? "tanh" : "none");
        rh.backward(dh.to(torch::kFloat32));
        expect_close(h, rh, "gelu");
        expect_close(u.grad(), ru.grad(), "input gradient");
        expect_close(bias.grad(), rb.grad(), "bias gradient");
    }
}

TEST_F(FusedOpsGpu, QkvHeadsGivesTheProjectionsViewsAndItsGradientsThroughAttention) {
    const int64_t dim = 256, heads = 4;
    const torch::Tensor x = leaf(bf16_randn({2, 67, dim}));
    const torch::Tensor weight = leaf(bf16_randn({3 * dim, dim}, 0.05));
    const torch::Tensor bias = leaf(bf16_randn({3 * dim}, 0.1));
    const auto parts = qkv_heads(x, weight, bias, heads);
    ASSERT_EQ(parts[0].sizes(), (std::vector<int64_t>{2, heads, 67, dim / heads}));
    // Through attention, so that the gradients arrive in the layout the SDPA backend gives them.
    const torch::Tensor y = at::scaled_dot_product_attention(parts[0], parts[1], parts[2], {}, 0.0,
                                                             /*is_causal=*/true);
    const torch::Tensor dy = bf16_randn(y.sizes());
    y.backward(dy);

    const torch::Tensor rx = leaf(x.to(torch::kFloat32)), rw = leaf(weight.to(torch::kFloat32)),
                        rb = leaf(bias.to(torch::kFloat32));
    const torch::Tensor rqkv = torch::linear(rx, rw, rb).view({2, 67, 3, heads, dim / heads});
    const auto rparts = rqkv.permute({2, 0, 3, 1, 4}).unbind(0);
    for (int i = 0; i < 3; ++i)
        expect_close(parts[i], rparts[i], "q/k/v");
    const torch::Tensor ry = at::scaled_dot_product_attention(rparts[0], rparts[1], rparts[2], {},
                                                              0.0, /*is_causal=*/true);
    ry.backward(dy.to(torch::kFloat32));
    expect_close(x.grad(), rx.grad(), "input gradient", 3e-2);
    expect_close(weight.grad(), rw.grad(), "weight gradient", 3e-2);
    expect_close(bias.grad(), rb.grad(), "bias gradient", 3e-2);
}

TEST_F(FusedOpsGpu, CrossEntropyMatchesFp32WithMinusInfinityPadding) {
    const int64_t rows = 53, classes = 1000, padded = 1024;
    torch::Tensor logits = bf16_randn({rows, padded}, 3.0);
    logits.narrow(1, classes, padded - classes).fill_(-std::numeric_limits<float>::infinity());
    logits = leaf(logits);
    const torch::Tensor targets =
        torch::randint(0, classes, {rows}, torch::TensorOptions(torch::kCUDA).dtype(torch::kInt64));
    const torch::Tensor loss = cross_entropy(logits, targets);
    EXPECT_EQ(loss.scalar_type(), torch::kFloat32);
    (loss * 3.0).backward();  // a gradient other than 1 reaches the kernel
    const torch::Tensor rlogits = leaf(logits.narrow(1, 0, classes).to(torch::kFloat32));
    const torch::Tensor rloss = torch::cross_entropy_loss(rlogits, targets);
    (rloss * 3.0).backward();
    EXPECT_NEAR(loss.item<double>(), rloss.item<double>(), 1e-4 * rloss.item<double>());
    expect_close(logits.grad().narrow(1, 0, classes), rlogits.grad(), "logit gradient");
    EXPECT_EQ(logits.grad().narrow(1, classes, padded - classes).abs().max().item<float>(), 0.0f);
}

// The tiny transformers, bf16 under autocast as the trainer runs them on CUDA, with and without
// the kernels: the same loss and gradients up to bf16 rounding, and a gradient for every parameter.
TEST_F(FusedOpsGpu, TinyTransformersGiveTheSameLossAndGradientsWithAndWithoutTheKernels) {
    for (const char* name : {"gpt2-tiny", "bert-tiny", "vit-tiny"}) {
        SCOPED_TRACE(name);
        std::vector<double> losses;
        std::vector<std::vector<torch::Tensor>> gradients;
        for (bool fused : {true, false}) {
            set_fused_kernels_enabled(fused);
            torch::manual_seed(0);
            std::unique_ptr<Model> model = make_model(name);
            model->module().to(torch::kCUDA, torch::kBFloat16);
            torch::manual_seed(1);
            const Batch batch = model->synthetic_batch(4, torch::kCUDA);
            torch::Tensor loss;
            {
                Bf16Autocast autocast(at::kCUDA);
                loss = model->loss(batch);
            }
            loss.backward();
            losses.push_back(loss.item<double>());
            std::vector<torch::Tensor> grads;
            for (const torch::Tensor& p : model->module().parameters()) {
                ASSERT_TRUE(p.grad().defined());
                grads.push_back(p.grad().to(torch::kFloat32));
            }
            gradients.push_back(grads);
        }
        EXPECT_NEAR(losses[0], losses[1], 1e-2 * std::abs(losses[1]));
        double apart = 0, size = 0;
        for (size_t i = 0; i < gradients[0].size(); ++i) {
            apart += (gradients[0][i] - gradients[1][i]).pow(2).sum().item<double>();
            size += gradients[1][i].pow(2).sum().item<double>();
        }
        EXPECT_LT(std::sqrt(apart / size), 3e-2) << "relative distance of all gradients";
    }
}

}  // namespace
