// CUDA kernels of the fused transformer operations (fused_ops.h): residual add + bias + layer norm,
// bias + GELU, the q/k/v gradients gathered into the fused projection's layout, and softmax
// cross-entropy. Plain launchers on raw pointers (bf16 passed as its uint16_t bits), so that only
// this pair of files needs nvcc. Rows are contiguous, `cols` elements each, with cols % 8 == 0
// and 16-byte aligned rows, and at most kLayerNormMaxCols columns for the layer norm (the
// callers check; fused_ops.cpp).
#pragma once

#include <cstdint>

namespace migscope::workloads::kernels {

constexpr int64_t kLayerNormMaxCols = 1792;  // GPT-2 XL has 1,600; sized for 3 blocks an SM

using Bf16Bits = uint16_t;

// Column sums are computed in two launches: each kernel writes fp32 partial sums, one row of
// `cols` per block of rows, and column_sums_finish adds them up.
// Row blocks that the kernels with column sums over `rows` rows use (their partials buffer holds
// row_blocks * sets * cols floats): the layer norm's backward, and the others.
int64_t layer_norm_row_blocks(int64_t rows, int64_t cols);
int64_t column_sum_row_blocks(int64_t rows);

// out[set][c] = sum over b of partials[b][set][c], rounded to bf16; `sets` (1 to 3) outputs.
void column_sums_finish(const float* partials, int64_t row_blocks, int sets, int64_t cols,
                        Bf16Bits* const out[3], void* stream);

// sum = x + delta (+ bias, broadcast over rows; may be null), rounded to bf16;
// normed = (sum - mean) * rstd * gamma + beta over each row, mean and rstd in fp32 of the rounded
// sum.
void add_layer_norm_forward(const Bf16Bits* x, const Bf16Bits* delta, const Bf16Bits* bias,
                            const Bf16Bits* gamma, const Bf16Bits* beta, float eps, int64_t rows,
                            int64_t cols, Bf16Bits* sum, Bf16Bits* normed, float* mean, float* rstd,
                            void* stream);

// d_total = d_sum (may be null: zero) + the layer norm's input gradient from d_normed;
// partials (layer_norm_row_blocks(rows, cols) x 3 x cols) get sum(d_normed * xhat) (the scale's
// gradient), sum(d_normed) (the shift's) and sum(d_total) (the bias's).
void add_layer_norm_backward(const Bf16Bits* d_normed, const Bf16Bits* d_sum, const Bf16Bits* sum,
                             const float* mean, const float* rstd, const Bf16Bits* gamma,
                             int64_t rows, int64_t cols, Bf16Bits* d_total, float* partials,
                             void* stream);

// h = gelu(u + bias): ATen's tanh form (computed as x / (1 + exp(-2u)), the same function) or
// its exact erf form.
void bias_gelu_forward(const Bf16Bits* u, const Bf16Bits* bias, int64_t rows, int64_t cols,
                       bool tanh_form, Bf16Bits* h, void* stream);

// du = dh * gelu'(u + bias); partials (column_sum_row_blocks(rows) x cols) get sum(du).
void bias_gelu_backward(const Bf16Bits* dh, const Bf16Bits* u, const Bf16Bits* bias, int64_t rows,
                        int64_t cols, bool tanh_form, Bf16Bits* du, float* partials, void* stream);

// One of the attention's q/k/v gradients: [batch, heads, tokens, head_dim] with element strides
// (the head_dim stride must be 1).
struct HeadsGradient {
    const Bf16Bits* data;
    int64_t stride_batch, stride_head, stride_token;
};

// dqkv [batch * tokens, 3 * heads * head_dim] in the fused projection's layout (q, k, v, each
// heads x head_dim) from the three gradients (head_dim % 8 == 0); partials
// (column_sum_row_blocks(batch * tokens) x 3 * heads * head_dim) get the column sums (the
// projection bias's gradient).
void gather_qkv_gradient(const HeadsGradient grads[3], int64_t batch, int64_t heads, int64_t tokens,
                         int64_t head_dim, Bf16Bits* dqkv, float* partials, void* stream);

// Softmax cross-entropy of bf16 logits [rows, cols] against int64 targets, in fp32:
// lse[r] = log(sum(exp(logits[r]))), loss[r] = lse[r] - logits[r][target[r]] (NaN when the target
// is outside [0, cols)). Logits of -inf (padding) count as zero probability.
void cross_entropy_forward(const Bf16Bits* logits, const int64_t* targets, int64_t rows,
                           int64_t cols, float* loss, float* lse, void* stream);

// d_logits = (softmax(logits) - onehot(target)) * (*grad_scale) * scale, with grad_scale a device
// pointer (the gradient of the loss, read when the kernel runs: graph-safe).
void cross_entropy_backward(const Bf16Bits* logits, const int64_t* targets, const float* lse,
                            const float* grad_scale, float scale, int64_t rows, int64_t cols,
                            Bf16Bits* d_logits, void* stream);

}  // namespace migscope::workloads::kernels
