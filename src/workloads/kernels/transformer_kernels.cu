// CUDA kernels of the fused transformer operations: each reads and writes its tensors once where
// ATen's composition would pass over them two or three times (a separate residual add, a
// layer-norm input gradient, its scale/shift gradients and a bias gradient reduction; GELU's
// backward and the bias gradient; the q/k/v gradients' copy and the bias gradient; a log-softmax,
// a cast to fp32 for the loss and back). Arithmetic in fp32; bf16 rounding to nearest.
#include "workloads/kernels/transformer_kernels.h"

#include <cuda_bf16.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "workloads/kernels/bf16_vectors.cuh"

namespace migscope::workloads::kernels {
namespace {

constexpr int64_t kRowBlocks = 264;  // blocks of rows with column sums: two per SM of an H200
// Threads of all blocks of the layer norm's backward (its column sums need few blocks; narrower
// rows get more of them): two 224-thread blocks an SM of an H200 for GPT-2 XL's 1,600 columns.
constexpr int64_t kLayerNormBackwardThreads = 264 * 224;

// Sums each of v[0..N) over the block (all threads call it; blockDim.x a multiple of 32), in
// place. Consecutive calls must alternate between two buffers: then one barrier a call is enough.
template <int N>
__device__ __forceinline__ void block_sum(float (&v)[N], float (*buffer)[N]) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            v[i] += __shfl_xor_sync(0xffffffffu, v[i], offset);
    }
    if ((threadIdx.x & 31) == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            buffer[threadIdx.x >> 5][i] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i)
        v[i] = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x >> 5); ++w) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            v[i] += buffer[w][i];
    }
}

// ---- layer norm ------------------------------------------------------------------------------
// Forward: one warp a row (no block barriers), each lane the row's 8-column vectors lane,
// lane + 32, ... (at most 7 of them: kLayerNormMaxCols).
constexpr int kMaxVectorsPerLane = (kLayerNormMaxCols / 8 + 31) / 32;
constexpr int kForwardRowsPerBlock = 8;  // warps of a block

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void __launch_bounds__(32 * kForwardRowsPerBlock) add_layer_norm_forward_kernel(
    const Bf16Bits* __restrict__ x, const Bf16Bits* __restrict__ delta,
    const Bf16Bits* __restrict__ bias, const Bf16Bits* __restrict__ gamma,
    const Bf16Bits* __restrict__ beta, float eps, int64_t rows, int cols,
    Bf16Bits* __restrict__ sum, Bf16Bits* __restrict__ normed, float* __restrict__ mean_out,
    float* __restrict__ rstd_out) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kForwardRowsPerBlock + threadIdx.x / 32;
    if (r >= rows)
        return;  // the whole warp: no barrier follows
    const int lane = threadIdx.x & 31, vectors = cols / 8;
    const int64_t base = r * cols;
    float s[kMaxVectorsPerLane][8] = {};
    float total = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxVectorsPerLane; ++k) {
        const int v = lane + 32 * k;
        if (v < vectors) {
            float d[8], b[8] = {};
            load8(x + base + v * 8, s[k]);
            load8(delta + base + v * 8, d);
            if (bias)
                load8(bias + v * 8, b);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                s[k][i] = round_bf16(s[k][i] + d[i] + b[i]);
                total += s[k][i];
            }
        }
    }
    const float mean = warp_sum(total) / cols;
    float squares = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxVectorsPerLane; ++k) {
        if (lane + 32 * k < vectors) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
                squares += (s[k][i] - mean) * (s[k][i] - mean);
        }
    }
    const float rstd = rsqrtf(warp_sum(squares) / cols + eps);
#pragma unroll
    for (int k = 0; k < kMaxVectorsPerLane; ++k) {
        const int v = lane + 32 * k;
        if (v < vectors) {
            float g[8], be[8], y[8];
            load8(gamma + v * 8, g);
            load8(beta + v * 8, be);
#pragma unroll
            for (int i = 0; i < 8; ++i)
                y[i] = (s[k][i] - mean) * rstd * g[i] + be[i];
            store8(sum + base + v * 8, s[k]);
            store8(normed + base + v * 8, y);
        }
    }
    if (lane == 0) {
        mean_out[r] = mean;
        rstd_out[r] = rstd;
    }
}

// Backward: a block takes kBackwardRows rows at a time, each thread 8 columns of each (so that it
// can sum its columns over the block's rows); blockDim.x = cols / 8 rounded up to 32. The rows'
// sums share one barrier. The next rows are copied into shared memory (cp.async, two stages)
// while the current ones are worked on; each thread copies and reads only its own columns.
constexpr int kBackwardRows = 2;
constexpr int kBackwardInputs = 3;  // d_normed, sum, d_sum

// Slot of input `input` of row j of a stage, for this thread.
__device__ __forceinline__ int stage_slot(int j, int input) {
    return (j * kBackwardInputs + input) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ void copy_rows_async(uint4* stage, const Bf16Bits* d_normed,
                                                const Bf16Bits* d_sum, const Bf16Bits* sum,
                                                int64_t r0, int64_t last, int cols, int64_t col) {
#pragma unroll
    for (int j = 0; j < kBackwardRows; ++j) {
        if (r0 + j < last) {
            const int64_t offset = (r0 + j) * cols + col;
            __pipeline_memcpy_async(&stage[stage_slot(j, 0)], d_normed + offset, 16);
            __pipeline_memcpy_async(&stage[stage_slot(j, 1)], sum + offset, 16);
            if (d_sum)
                __pipeline_memcpy_async(&stage[stage_slot(j, 2)], d_sum + offset, 16);
        }
    }
}

__global__ void add_layer_norm_backward_kernel(
    const Bf16Bits* __restrict__ d_normed, const Bf16Bits* __restrict__ d_sum,
    const Bf16Bits* __restrict__ sum, const float* __restrict__ mean,
    const float* __restrict__ rstd, const Bf16Bits* __restrict__ gamma, int64_t rows, int cols,
    int64_t row_blocks, Bf16Bits* __restrict__ d_total, float* __restrict__ partials) {
    extern __shared__ uint4 staging[];  // [2 stages][kBackwardRows][kBackwardInputs][blockDim.x]
    __shared__ float buffers[2][32][2 * kBackwardRows];
    const int stage_size = kBackwardRows * kBackwardInputs * blockDim.x;
    const bool active = static_cast<int>(threadIdx.x) < cols / 8;
    const int64_t col = static_cast<int64_t>(threadIdx.x) * 8;
    float g[8] = {}, acc_gamma[8] = {}, acc_beta[8] = {}, acc_bias[8] = {};
    if (active)
        load8(gamma + col, g);
    int64_t first, last;
    row_range(rows, row_blocks, blockIdx.x, first, last);
    if (active)
        copy_rows_async(staging, d_normed, d_sum, sum, first, last, cols, col);
    __pipeline_commit();
    int parity = 0, stage = 0;
    for (int64_t r0 = first; r0 < last; r0 += kBackwardRows, stage ^= 1) {
        if (active && r0 + kBackwardRows < last)
            copy_rows_async(staging + (stage ^ 1) * stage_size, d_normed, d_sum, sum,
                            r0 + kBackwardRows, last, cols, col);
        __pipeline_commit();
        __pipeline_wait_prior(1);  // this stage's copies have landed
        const uint4* current = staging + stage * stage_size;
        float sums[2 * kBackwardRows] = {};  // per row: sum(dy * gamma), sum(dy * gamma * xhat)
#pragma unroll
        for (int j = 0; j < kBackwardRows; ++j) {
            if (active && r0 + j < last) {
                const float m = mean[r0 + j], rs = rstd[r0 + j];
                float dy[8], s[8];
                unpack8(current[stage_slot(j, 0)], dy);
                unpack8(current[stage_slot(j, 1)], s);
#pragma unroll
                for (int i = 0; i < 8; ++i) {
                    const float scaled = dy[i] * g[i];
                    sums[2 * j] += scaled;
                    sums[2 * j + 1] += scaled * (s[i] - m) * rs;
                }
            }
        }
        block_sum(sums, buffers[parity]);
        parity ^= 1;
        if (!active)
            continue;
#pragma unroll
        for (int j = 0; j < kBackwardRows; ++j) {
            if (r0 + j >= last)
                break;
            const float m = mean[r0 + j], rs = rstd[r0 + j];
            const float mean_scaled = sums[2 * j] / cols, mean_scaled_xhat = sums[2 * j + 1] / cols;
            float dy[8], s[8], ds[8] = {}, out[8];
            unpack8(current[stage_slot(j, 0)], dy);
            unpack8(current[stage_slot(j, 1)], s);
            if (d_sum)
                unpack8(current[stage_slot(j, 2)], ds);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float xhat = (s[i] - m) * rs;
                const float dx = rs * (dy[i] * g[i] - mean_scaled - xhat * mean_scaled_xhat);
                out[i] = round_bf16(dx + ds[i]);
                acc_gamma[i] += dy[i] * xhat;
                acc_beta[i] += dy[i];
                acc_bias[i] += out[i];
            }
            store8(d_total + (r0 + j) * cols + col, out);
        }
    }
    if (active) {
        float* p = partials + blockIdx.x * 3 * static_cast<int64_t>(cols) + col;
        store8(p, acc_gamma);
        store8(p + cols, acc_beta);
        store8(p + 2 * static_cast<int64_t>(cols), acc_bias);
    }
}

// ---- column sums ------------------------------------------------------------------------------
struct Outputs {
    Bf16Bits* out[3];
};

// Block (32, 32): 32 columns, 32 lanes of row blocks summed in shared memory.
__global__ void column_sums_finish_kernel(const float* partials, int64_t row_blocks, int sets,
                                          int64_t cols, Outputs outputs) {
    __shared__ float lanes[32][33];
    const int64_t k = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;  // set * cols + c
    const int64_t width = sets * cols;
    float total = 0.0f;
    if (k < width) {
#pragma unroll 4
        for (int64_t b = threadIdx.y; b < row_blocks; b += blockDim.y)
            total += partials[b * width + k];
    }
    lanes[threadIdx.y][threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.y == 0 && k < width) {
        for (int y = 1; y < static_cast<int>(blockDim.y); ++y)
            total += lanes[y][threadIdx.x];
        const int set = static_cast<int>(k / cols);
        reinterpret_cast<__nv_bfloat16*>(outputs.out[set])[k % cols] = __float2bfloat16_rn(total);
    }
}

// ---- GELU -------------------------------------------------------------------------------------
// ATen's GELU and its derivative (GeluCUDAKernelImpl, GeluBackwardCUDAKernelImpl), in fp32.
constexpr float kSqrt1_2 = 0.70710678118654752440f;
constexpr float kTanhBeta = 0.79788456080286535588f;  // sqrt(2 / pi)
constexpr float kTanhKappa = 0.044715f;
constexpr float kErfAlpha = 0.39894228040143267794f;  // 1 / sqrt(2 pi)

// The tanh form as a sigmoid: 0.5 x (1 + tanh(u)) = x s, s = 1 / (1 + exp(-2u)), u = sqrt(2 / pi)
// (x + 0.044715 x^3); its derivative is s + 2 x s (1 - s) u'. About half the instructions of the
// tanh (the backward 3 % faster on the H200), and no cancellation in 1 + tanh(u) for negative x.
// The hardware's approximate 2^x and 1/x: relative error ~1e-7; the flush of subnormal results
// only touches exp(-2u) < 1e-38, where 1 + exp(-2u) is 1 anyway.
__device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float reciprocal_approx(float x) {
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

constexpr float kMinus2BetaLog2e =
    -2.0f * kTanhBeta * 1.44269504088896340736f;  // -2 sqrt(2/pi) log2(e)

// s = 1 / (1 + 2^(-2u log2(e))).
__device__ __forceinline__ float tanh_gelu_sigmoid(float x, float x_sq) {
    const float exponent = x * fmaf(kMinus2BetaLog2e * kTanhKappa, x_sq, kMinus2BetaLog2e);
    return reciprocal_approx(1.0f + exp2_approx(exponent));
}

template <bool kTanh>
__device__ __forceinline__ float gelu(float x) {
    if (kTanh)
        return x * tanh_gelu_sigmoid(x, x * x);
    return x * 0.5f * (1.0f + erff(x * kSqrt1_2));
}

template <bool kTanh>
__device__ __forceinline__ float gelu_derivative(float x) {
    if (kTanh) {
        const float x_sq = x * x;
        const float s = tanh_gelu_sigmoid(x, x_sq);
        const float two_du = fmaf(6.0f * kTanhBeta * kTanhKappa, x_sq, 2.0f * kTanhBeta);  // 2u'
        return fmaf(x * s * (1.0f - s), two_du, s);
    }
    const float cdf = 0.5f * (1.0f + erff(x * kSqrt1_2));
    const float pdf = expf(-0.5f * x * x) * kErfAlpha;
    return cdf + x * pdf;
}

// Grid (column blocks, row blocks); each thread 8 columns of its row block's rows.
template <bool kTanh>
__global__ void bias_gelu_forward_kernel(const Bf16Bits* __restrict__ u,
                                         const Bf16Bits* __restrict__ bias, int64_t rows,
                                         int64_t cols, Bf16Bits* __restrict__ h) {
    const int64_t col = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
    if (col >= cols)
        return;
    float b[8];
    load8(bias + col, b);
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
#pragma unroll 4
    for (int64_t r = first; r < last; ++r) {
        float x[8];
        load8(u + r * cols + col, x);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            x[i] = gelu<kTanh>(x[i] + b[i]);
        store8(h + r * cols + col, x);
    }
}

// Grid (column blocks, row blocks); each thread 8 columns of its row block's rows. (Loading four
// rows ahead was slower on the H200: 96 registers, half the threads an SM.)
template <bool kTanh>
__global__ void bias_gelu_backward_kernel(const Bf16Bits* __restrict__ dh,
                                          const Bf16Bits* __restrict__ u,
                                          const Bf16Bits* __restrict__ bias, int64_t rows,
                                          int64_t cols, Bf16Bits* __restrict__ du,
                                          float* __restrict__ partials) {
    const int64_t col = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
    if (col >= cols)
        return;
    float b[8], acc[8] = {};
    load8(bias + col, b);
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
#pragma unroll 4
    for (int64_t r = first; r < last; ++r) {
        float g[8], x[8];
        load8(dh + r * cols + col, g);
        load8(u + r * cols + col, x);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            x[i] = round_bf16(g[i] * gelu_derivative<kTanh>(x[i] + b[i]));
            acc[i] += x[i];
        }
        store8(du + r * cols + col, x);
    }
    store8(partials + blockIdx.y * cols + col, acc);
}

// ---- q/k/v gradients --------------------------------------------------------------------------
struct QkvGradients {
    HeadsGradient part[3];
};

__global__ void gather_qkv_gradient_kernel(QkvGradients grads, int64_t heads, int64_t tokens,
                                           int64_t head_dim, int64_t rows,
                                           Bf16Bits* __restrict__ dqkv,
                                           float* __restrict__ partials) {
    const int64_t width = heads * head_dim, cols = 3 * width;
    const int64_t col = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
    if (col >= cols)
        return;
    const int64_t which = col / width, head = (col % width) / head_dim, d = col % head_dim;
    const HeadsGradient g = which == 0 ? grads.part[0] : which == 1 ? grads.part[1] : grads.part[2];
    const Bf16Bits* __restrict__ source = g.data + head * g.stride_head + d;
    float acc[8] = {};
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
    int64_t batch = first / tokens, token = first % tokens;
#pragma unroll 4
    for (int64_t r = first; r < last; ++r, ++token) {
        if (token == tokens) {
            token = 0;
            ++batch;
        }
        float v[8];
        load8(source + batch * g.stride_batch + token * g.stride_token, v);
        store8(dqkv + r * cols + col, v);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            acc[i] += v[i];
    }
    store8(partials + blockIdx.y * cols + col, acc);
}

// ---- cross-entropy ----------------------------------------------------------------------------
constexpr int kCrossEntropyThreads = 256;

// Adds (m2, s2) to the running (max, sum of exp(x - max)) pair (m, s).
__device__ __forceinline__ void merge_softmax_sums(float& m, float& s, float m2, float s2) {
    const float top = fmaxf(m, m2);
    if (top == -INFINITY)
        return;
    s = (s == 0.0f ? 0.0f : s * __expf(m - top)) + (s2 == 0.0f ? 0.0f : s2 * __expf(m2 - top));
    m = top;
}

__global__ void cross_entropy_forward_kernel(const Bf16Bits* logits, const int64_t* targets,
                                             int64_t cols, float* loss, float* lse) {
    __shared__ float2 warp_sums[32];
    const Bf16Bits* row = logits + blockIdx.x * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t v = threadIdx.x; v < cols / 8; v += blockDim.x) {
        float x[8];
        load8(row + v * 8, x);
        float top = x[0];
#pragma unroll
        for (int i = 1; i < 8; ++i)
            top = fmaxf(top, x[i]);
        if (top == -INFINITY)
            continue;
        float part = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; ++i)
            part += __expf(x[i] - top);  // exp(-inf) is 0
        merge_softmax_sums(m, s, top, part);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, offset);
        merge_softmax_sums(m, s, m2, s2);
    }
    if ((threadIdx.x & 31) == 0)
        warp_sums[threadIdx.x >> 5] = make_float2(m, s);
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w)
            merge_softmax_sums(m, s, warp_sums[w].x, warp_sums[w].y);
        const float log_sum = m + logf(s);
        const int64_t target = targets[blockIdx.x];
        lse[blockIdx.x] = log_sum;
        loss[blockIdx.x] =
            target >= 0 && target < cols
                ? log_sum - __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[target])
                : NAN;
    }
}

__global__ void cross_entropy_backward_kernel(const Bf16Bits* logits, const int64_t* targets,
                                              const float* lse, const float* grad_scale,
                                              float scale, int64_t cols, Bf16Bits* d_logits) {
    const int64_t offset = blockIdx.x * cols;
    const float log_sum = lse[blockIdx.x], g = *grad_scale * scale;
    const int64_t target = targets[blockIdx.x];
    for (int64_t v = threadIdx.x; v < cols / 8; v += blockDim.x) {
        float x[8];
        load8(logits + offset + v * 8, x);
#pragma unroll
        for (int i = 0; i < 8; ++i)
            x[i] = (__expf(x[i] - log_sum) - (v * 8 + i == target ? 1.0f : 0.0f)) * g;
        store8(d_logits + offset + v * 8, x);
    }
}

// Threads a block of the row-wise elementwise kernels (8 columns a thread): the multiple of 32 in
// [128, 256] that leaves the fewest threads of the last column block idle (GPT-2 XL's 6,400-column
// MLP: 160, five full blocks instead of seven of 128 with 72 idle threads in the last).
int elementwise_threads(int64_t cols) {
    const int64_t vectors = cols / 8;
    int best = 128;
    for (int threads = 128; threads <= 256; threads += 32) {
        const auto idle = [vectors](int t) { return (vectors + t - 1) / t * t - vectors; };
        if (idle(threads) < idle(best))
            best = threads;
    }
    return best;
}

int layer_norm_threads(int64_t cols) {
    return static_cast<int>((cols / 8 + 31) / 32 * 32);
}

}  // namespace

int64_t column_sum_row_blocks(int64_t rows) {
    return std::min(rows, kRowBlocks);
}

int64_t layer_norm_row_blocks(int64_t rows, int64_t cols) {
    return std::min(rows, kLayerNormBackwardThreads / layer_norm_threads(cols));
}

void column_sums_finish(const float* partials, int64_t row_blocks, int sets, int64_t cols,
                        Bf16Bits* const out[3], void* stream) {
    Outputs outputs{{out[0], sets > 1 ? out[1] : nullptr, sets > 2 ? out[2] : nullptr}};
    const auto blocks = static_cast<unsigned>((sets * cols + 31) / 32);
    column_sums_finish_kernel<<<blocks, dim3(32, 32), 0, static_cast<cudaStream_t>(stream)>>>(
        partials, row_blocks, sets, cols, outputs);
    check_launch("column sums");
}

void add_layer_norm_forward(const Bf16Bits* x, const Bf16Bits* delta, const Bf16Bits* bias,
                            const Bf16Bits* gamma, const Bf16Bits* beta, float eps, int64_t rows,
                            int64_t cols, Bf16Bits* sum, Bf16Bits* normed, float* mean, float* rstd,
                            void* stream) {
    const auto blocks =
        static_cast<unsigned>((rows + kForwardRowsPerBlock - 1) / kForwardRowsPerBlock);
    add_layer_norm_forward_kernel<<<blocks, 32 * kForwardRowsPerBlock, 0,
                                    static_cast<cudaStream_t>(stream)>>>(
        x, delta, bias, gamma, beta, eps, rows, static_cast<int>(cols), sum, normed, mean, rstd);
    check_launch("add + layer norm");
}

void add_layer_norm_backward(const Bf16Bits* d_normed, const Bf16Bits* d_sum, const Bf16Bits* sum,
                             const float* mean, const float* rstd, const Bf16Bits* gamma,
                             int64_t rows, int64_t cols, Bf16Bits* d_total, float* partials,
                             void* stream) {
    const int64_t row_blocks = layer_norm_row_blocks(rows, cols);
    const int threads = layer_norm_threads(cols);
    const size_t staging_bytes = 2 * kBackwardRows * kBackwardInputs * threads * sizeof(uint4);
    add_layer_norm_backward_kernel<<<static_cast<unsigned>(row_blocks), threads, staging_bytes,
                                     static_cast<cudaStream_t>(stream)>>>(
        d_normed, d_sum, sum, mean, rstd, gamma, rows, static_cast<int>(cols), row_blocks, d_total,
        partials);
    check_launch("add + layer norm backward");
}

void bias_gelu_forward(const Bf16Bits* u, const Bf16Bits* bias, int64_t rows, int64_t cols,
                       bool tanh_form, Bf16Bits* h, void* stream) {
    constexpr int64_t kRowsPerBlock = 8;
    const int threads = elementwise_threads(cols);
    const dim3 grid(static_cast<unsigned>((cols / 8 + threads - 1) / threads),
                    static_cast<unsigned>(
                        std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 65535)));
    const auto launch =
        tanh_form ? bias_gelu_forward_kernel<true> : bias_gelu_forward_kernel<false>;
    launch<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(u, bias, rows, cols, h);
    check_launch("bias + GELU");
}

void bias_gelu_backward(const Bf16Bits* dh, const Bf16Bits* u, const Bf16Bits* bias, int64_t rows,
                        int64_t cols, bool tanh_form, Bf16Bits* du, float* partials, void* stream) {
    const int threads = elementwise_threads(cols);
    const dim3 grid(static_cast<unsigned>((cols / 8 + threads - 1) / threads),
                    static_cast<unsigned>(column_sum_row_blocks(rows)));
    const auto launch =
        tanh_form ? bias_gelu_backward_kernel<true> : bias_gelu_backward_kernel<false>;
    launch<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(dh, u, bias, rows, cols, du,
                                                                    partials);
    check_launch("bias + GELU backward");
}

void gather_qkv_gradient(const HeadsGradient grads[3], int64_t batch, int64_t heads, int64_t tokens,
                         int64_t head_dim, Bf16Bits* dqkv, float* partials, void* stream) {
    const int64_t rows = batch * tokens, cols = 3 * heads * head_dim;
    const int threads = elementwise_threads(cols);
    const dim3 grid(static_cast<unsigned>((cols / 8 + threads - 1) / threads),
                    static_cast<unsigned>(column_sum_row_blocks(rows)));
    gather_qkv_gradient_kernel<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(
        QkvGradients{{grads[0], grads[1], grads[2]}}, heads, tokens, head_dim, rows, dqkv,
        partials);
    check_launch("q/k/v gradient gather");
}

void cross_entropy_forward(const Bf16Bits* logits, const int64_t* targets, int64_t rows,
                           int64_t cols, float* loss, float* lse, void* stream) {
    cross_entropy_forward_kernel<<<static_cast<unsigned>(rows), kCrossEntropyThreads, 0,
                                   static_cast<cudaStream_t>(stream)>>>(logits, targets, cols, loss,
                                                                        lse);
    check_launch("cross-entropy");
}

void cross_entropy_backward(const Bf16Bits* logits, const int64_t* targets, const float* lse,
                            const float* grad_scale, float scale, int64_t rows, int64_t cols,
                            Bf16Bits* d_logits, void* stream) {
    cross_entropy_backward_kernel<<<static_cast<unsigned>(rows), kCrossEntropyThreads, 0,
                                    static_cast<cudaStream_t>(stream)>>>(
        logits, targets, lse, grad_scale, scale, cols, d_logits);
    check_launch("cross-entropy backward");
}

}  // namespace migscope::workloads::kernels
