// Fused transformer operations with their own backward passes: migscope's CUDA kernels
// (transformer_kernels.h) for bf16 tensors on a GPU, ATen's composition of the same operations
// elsewhere (CPU, other dtypes, widths that are not a multiple of 8, LibTorch without a CUDA
// toolkit). Both compute the same values, up to the order of fp32 sums and bf16 rounding.
#pragma once

#include <torch/torch.h>

#include <array>

namespace migscope::workloads {

// Whether the CUDA kernels are used where they apply: on by default when built with them. The GPU
// checks and A/B runs turn them off to compare against ATen's composition.
bool fused_kernels_enabled();
void set_fused_kernels_enabled(bool enabled);

struct NormedSum {
    torch::Tensor sum;     // x + delta + bias, in x's dtype
    torch::Tensor normed;  // norm(sum), in x's dtype
};

// The residual add of a branch's output (delta, without its last layer's bias) and that bias,
// followed by the next layer norm, in one pass. delta and bias may be undefined (then sum is x).
// Its backward adds the gradient arriving at `sum` to the norm's input gradient and returns that
// total as the gradient of x and of delta, with the bias's, scale's and shift's gradients as its
// and the norm's column sums.
NormedSum add_layer_norm(const torch::Tensor& x, const torch::Tensor& delta,
                         const torch::Tensor& bias, const torch::nn::LayerNorm& norm);

// gelu(u + bias), tanh form or exact; the backward gives the bias's gradient from the same pass.
torch::Tensor bias_gelu(const torch::Tensor& u, const torch::Tensor& bias, bool tanh_form);

// For an input x that is also read again later (the residual stream of a post-norm block):
// x W^T (no bias) or q/k/v as qkv_heads gives them, and x itself as a second output to read
// instead of x. Its backward makes x's gradient in one GEMM that adds the second output's
// gradient to the projection's (beta 1), where autograd would add the two gradients of x in a
// pass of its own (BERT: 24 such adds a step).
struct ProjectionAndInput {
    torch::Tensor projection, input;
};
ProjectionAndInput linear_keeping_input(const torch::Tensor& x, const torch::Tensor& weight);
struct HeadsAndInput {
    std::array<torch::Tensor, 3> heads;
    torch::Tensor input;
};
HeadsAndInput qkv_heads_keeping_input(const torch::Tensor& x, const torch::Tensor& weight,
                                      const torch::Tensor& bias, int64_t heads);

// Query, key and value [batch, heads, tokens, dim / heads] as views of the fused projection
// x W^T + b ([batch, tokens, 3 * dim]); the backward gathers their gradients into the projection's
// layout and sums the bias's gradient in the same pass, then runs the two matmuls.
std::array<torch::Tensor, 3> qkv_heads(const torch::Tensor& x, const torch::Tensor& weight,
                                       const torch::Tensor& bias, int64_t heads);

// Mean softmax cross-entropy of logits [rows, classes] against targets [rows] (every target a
// class index; no ignore_index), in fp32 from bf16 logits; padded classes' logits of -inf count as
// zero probability.
torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace migscope::workloads
