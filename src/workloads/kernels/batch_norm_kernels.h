// CUDA kernels of the fused batch norm (fused_batch_norm.h): training-mode batch norm of a bf16
// channels-last tensor, viewed as `rows` (N*H*W) rows of `channels` contiguous values, with the
// residual add and ReLU after it, forward and backward. Plain launchers on raw pointers, as
// transformer_kernels.h. Statistics and gradients in fp32; parameters and running statistics fp32.
#pragma once

#include <cstdint>

namespace migscope::workloads::kernels {

using Bf16Bits = uint16_t;

// Whether the kernels take `channels`: 8-channel vectors whose count divides 256 or is a multiple
// of 256 (8 to 2,048 channels in powers of two, then multiples of 2,048).
bool batch_norm_channels_supported(int64_t channels);

// Floats of the partial sums buffer that the statistics and the backward's reduction need.
int64_t batch_norm_partials_floats(int64_t rows, int64_t channels);

// The per-channel buffer `stats` [4][channels]: mean, 1/sqrt(var + eps), scale = gamma * rstd,
// shift = beta - mean * scale (y = x * scale + shift).
// Batch statistics (biased variance) of x into stats, and the running statistics updated as
// BatchNorm2d's forward does (momentum; unbiased variance; batches_tracked + 1).
void batch_norm_statistics(const Bf16Bits* x, int64_t rows, int64_t channels, const float* gamma,
                           const float* beta, float eps, float momentum, float* running_mean,
                           float* running_var, int64_t* batches_tracked, float* partials,
                           float* stats, void* stream);

// y = x * scale + shift (+ residual, may be null), then max(y, 0) when relu (NaN stays NaN).
void batch_norm_apply(const Bf16Bits* x, const Bf16Bits* residual, const float* stats, bool relu,
                      int64_t rows, int64_t channels, Bf16Bits* y, void* stream);

// Where the ReLU's gradient mask comes from in the backward.
enum class ReluMask {
    kNone,       // no ReLU
    kFromInput,  // x * scale + shift > 0, recomputed (no residual)
    kFromOutput  // y > 0 (with a residual); the masked gradient is written to `masked`
};

// The backward of batch_norm_apply: g = dy with the ReLU mask applied; d_gamma = sum(g * xhat),
// d_beta = sum(g) (fp32, per channel); dx = gamma * rstd * (g - mean(g) - xhat * mean(g * xhat)).
// With ReluMask::kFromOutput, y is read and g written to `masked` (the residual's gradient); dx may
// be null (not needed). `coefficients` is a [3][channels] fp32 buffer.
void batch_norm_backward(const Bf16Bits* dy, const Bf16Bits* x, const Bf16Bits* y,
                         const float* stats, const float* gamma, ReluMask mask, int64_t rows,
                         int64_t channels, Bf16Bits* masked, Bf16Bits* dx, float* d_gamma,
                         float* d_beta, float* partials, float* coefficients, void* stream);

}  // namespace migscope::workloads::kernels
