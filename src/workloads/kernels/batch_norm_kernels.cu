// CUDA kernels of the fused batch norm + residual add + ReLU (batch_norm_kernels.h). ATen runs a
// ResNet block's batch norm, residual add and ReLU as separate passes over the activations
// (statistics, normalise, add, clamp; ReLU's mask, the norm's reduction, its input gradient); here
// the forward reads x twice (statistics, then normalise + add + ReLU in one pass) and the backward
// reads its inputs twice (the reduction with the ReLU mask, then the input gradient).
//
// Layout: rows of `channels` contiguous bf16 values, read as 16-byte vectors of 8 channels. A block
// of 256 threads covers min(channels / 8, 256) vectors of a row and 256 / that many rows at once
// (with 64 channels: 32 rows, 4 KiB contiguous), so every thread keeps one channel vector for the
// whole kernel and sums it over its block's rows; the blocks' partial sums are added by a second,
// small kernel, which also computes the per-channel coefficients.
#include "workloads/kernels/batch_norm_kernels.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "workloads/kernels/bf16_vectors.cuh"

namespace migscope::workloads::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 132 * 8;  // 8 blocks of 256 threads on each SM of an H200
// Row passes a block makes at least, so that the partial sums stay small next to the data.
constexpr int64_t kMinPassesPerBlock = 16;
// Blocks the grid aims at, per SM of an H200, where kMinPassesPerBlock would leave SMs idle (small
// batches: resnet50:32's last stage gets 25 blocks): its blocks then make fewer passes, down to
// one. 0: never, the default. Set at build time (cmake -DMIGSCOPE_BN_FILL_BLOCKS_PER_SM=N). 4 on an
// H100 (docs/benchmarks.md §8): the kernels 10-21 % faster at batch 32, resnet18:32 2.9 % and
// resnet50:32 1.2 % faster, but 2.2-2.5 % more energy per image (medians), so not the default.
#ifndef MIGSCOPE_BN_FILL_BLOCKS_PER_SM
#define MIGSCOPE_BN_FILL_BLOCKS_PER_SM 0
#endif
constexpr int64_t kFillBlocks = 132 * MIGSCOPE_BN_FILL_BLOCKS_PER_SM;

// A block's threads: `vectors` 8-channel vectors of a row by `lanes` rows.
struct Tile {
    int vectors;
    int lanes;
};

__host__ __device__ inline Tile tile_of(int64_t channels) {
    const int vectors = channels / 8 < kThreads ? static_cast<int>(channels / 8) : kThreads;
    return {vectors, kThreads / vectors};
}

// This thread's first channel and row lane.
struct Position {
    int64_t col;
    int lane;
};

__device__ __forceinline__ Position position(const Tile& t) {
    return {(static_cast<int64_t>(blockIdx.x) * t.vectors + threadIdx.x % t.vectors) * 8,
            static_cast<int>(threadIdx.x) / t.vectors};
}

__device__ __forceinline__ float relu(float v) {
    return v < 0.0f ? 0.0f : v;  // NaN stays NaN, as ATen's
}

// Sums a and b over the block's row lanes (the threads with the same channel vector) and writes
// the totals of lane 0 as this block's partials: [row block][2][channels].
__device__ void write_lane_sums(float a[8], float b[8], const Tile& t, const Position& p,
                                int64_t channels, float* partials) {
    __shared__ float buffer[16][kThreads];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        buffer[i][threadIdx.x] = a[i];
        buffer[8 + i][threadIdx.x] = b[i];
    }
    __syncthreads();
    for (int s = t.lanes / 2; s > 0; s /= 2) {
        if (p.lane < s) {
#pragma unroll
            for (int i = 0; i < 16; ++i)
                buffer[i][threadIdx.x] += buffer[i][threadIdx.x + s * t.vectors];
        }
        __syncthreads();
    }
    if (p.lane == 0) {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            a[i] = buffer[i][threadIdx.x];
            b[i] = buffer[8 + i][threadIdx.x];
        }
        float* const base = partials + static_cast<int64_t>(blockIdx.y) * 2 * channels + p.col;
        store8(base, a);
        store8(base + channels, b);
    }
}

// Channel c's totals of both partial sums over all row blocks (block (32, 32): 32 channels, 32
// lanes of row blocks); valid in the threads with threadIdx.y == 0.
__device__ void channel_totals(const float* partials, int64_t row_blocks, int64_t channels,
                               int64_t c, float& first, float& second) {
    __shared__ float lanes[2][32][33];
    first = 0.0f, second = 0.0f;
    if (c < channels) {
        for (int64_t b = threadIdx.y; b < row_blocks; b += blockDim.y) {
            first += partials[b * 2 * channels + c];
            second += partials[(b * 2 + 1) * channels + c];
        }
    }
    lanes[0][threadIdx.y][threadIdx.x] = first;
    lanes[1][threadIdx.y][threadIdx.x] = second;
    __syncthreads();
    if (threadIdx.y == 0) {
        for (int y = 1; y < static_cast<int>(blockDim.y); ++y) {
            first += lanes[0][y][threadIdx.x];
            second += lanes[1][y][threadIdx.x];
        }
    }
}

// ---- forward ----------------------------------------------------------------------------------
// Sums of x - x[row 0] and of its squares: shifting by a value of the channel keeps the
// variance's E[d^2] - E[d]^2 from cancelling when the mean is large against the spread.
__global__ void __launch_bounds__(kThreads)
    batch_norm_statistics_kernel(const Bf16Bits* __restrict__ x, int64_t rows, int64_t channels,
                                 float* __restrict__ partials) {
    const Tile t = tile_of(channels);
    const Position p = position(t);
    float shift[8], sum[8] = {}, squares[8] = {};
    load8(x + p.col, shift);
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
#pragma unroll 4
    for (int64_t r = first + p.lane; r < last; r += t.lanes) {
        float v[8];
        load8(x + r * channels + p.col, v);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const float d = v[i] - shift[i];
            sum[i] += d;
            squares[i] = fmaf(d, d, squares[i]);
        }
    }
    write_lane_sums(sum, squares, t, p, channels, partials);
}

__global__ void batch_norm_statistics_finish_kernel(
    const float* __restrict__ partials, int64_t row_blocks, const Bf16Bits* __restrict__ x,
    int64_t rows, int64_t channels, const float* __restrict__ gamma, const float* __restrict__ beta,
    float eps, float momentum, float* running_mean, float* running_var, int64_t* batches_tracked,
    float* __restrict__ stats) {
    const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
    float sum, squares;
    channel_totals(partials, row_blocks, channels, c, sum, squares);
    if (threadIdx.y != 0 || c >= channels)
        return;
    const double n = static_cast<double>(rows);
    const double mean_shifted = sum / n;
    const double var = fmax(squares / n - mean_shifted * mean_shifted, 0.0);
    const float mean =
        __uint_as_float(static_cast<uint32_t>(x[c]) << 16) + static_cast<float>(mean_shifted);
    const float rstd = rsqrtf(static_cast<float>(var) + eps);
    const float scale = gamma[c] * rstd;
    stats[c] = mean;
    stats[channels + c] = rstd;
    stats[2 * channels + c] = scale;
    stats[3 * channels + c] = beta[c] - mean * scale;
    running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * mean;
    running_var[c] =
        (1.0f - momentum) * running_var[c] + momentum * static_cast<float>(var * n / (n - 1.0));
    if (c == 0)
        *batches_tracked += 1;
}

template <bool kResidual, bool kRelu>
__global__ void __launch_bounds__(kThreads)
    batch_norm_apply_kernel(const Bf16Bits* __restrict__ x, const Bf16Bits* __restrict__ residual,
                            const float* __restrict__ stats, int64_t rows, int64_t channels,
                            Bf16Bits* __restrict__ y) {
    const Tile t = tile_of(channels);
    const Position p = position(t);
    float scale[8], shift[8];
    load8(stats + 2 * channels + p.col, scale);
    load8(stats + 3 * channels + p.col, shift);
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
#pragma unroll 4
    for (int64_t r = first + p.lane; r < last; r += t.lanes) {
        const int64_t offset = r * channels + p.col;
        float v[8], s[8] = {};
        load8(x + offset, v);
        if (kResidual)
            load8(residual + offset, s);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            v[i] = fmaf(v[i], scale[i], shift[i]) + s[i];
            if (kRelu)
                v[i] = relu(v[i]);
        }
        store8(y + offset, v);
    }
}

// ---- backward ---------------------------------------------------------------------------------
// Sums of g and g * (x - mean), g = dy with the ReLU's mask.
template <ReluMask kMask>
__global__ void __launch_bounds__(kThreads)
    batch_norm_backward_reduce_kernel(const Bf16Bits* __restrict__ dy,
                                      const Bf16Bits* __restrict__ x,
                                      const Bf16Bits* __restrict__ y,
                                      const float* __restrict__ stats, int64_t rows,
                                      int64_t channels, Bf16Bits* __restrict__ masked,
                                      float* __restrict__ partials) {
    const Tile t = tile_of(channels);
    const Position p = position(t);
    float mean[8], scale[8] = {}, shift[8] = {}, sum[8] = {}, products[8] = {};
    load8(stats + p.col, mean);
    if (kMask == ReluMask::kFromInput) {
        load8(stats + 2 * channels + p.col, scale);
        load8(stats + 3 * channels + p.col, shift);
    }
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
#pragma unroll 4
    for (int64_t r = first + p.lane; r < last; r += t.lanes) {
        const int64_t offset = r * channels + p.col;
        float g[8], v[8];
        load8(dy + offset, g);
        load8(x + offset, v);
        if (kMask == ReluMask::kFromOutput) {
            float out[8];
            load8(y + offset, out);
#pragma unroll
            for (int i = 0; i < 8; ++i)
                g[i] = out[i] > 0.0f ? g[i] : 0.0f;
            store8(masked + offset, g);
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if (kMask == ReluMask::kFromInput)
                g[i] = fmaf(v[i], scale[i], shift[i]) > 0.0f ? g[i] : 0.0f;
            sum[i] += g[i];
            products[i] = fmaf(g[i], v[i] - mean[i], products[i]);
        }
    }
    write_lane_sums(sum, products, t, p, channels, partials);
}

// d_gamma, d_beta and the input gradient's coefficients [3][channels]: gamma * rstd, mean(g),
// rstd^2 * mean(g * (x - mean)).
__global__ void batch_norm_backward_finish_kernel(
    const float* __restrict__ partials, int64_t row_blocks, int64_t rows, int64_t channels,
    const float* __restrict__ stats, const float* __restrict__ gamma, float* __restrict__ d_gamma,
    float* __restrict__ d_beta, float* __restrict__ coefficients) {
    const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
    float sum, products;
    channel_totals(partials, row_blocks, channels, c, sum, products);
    if (threadIdx.y != 0 || c >= channels)
        return;
    const float rstd = stats[channels + c], n = static_cast<float>(rows);
    d_gamma[c] = products * rstd;
    d_beta[c] = sum;
    coefficients[c] = gamma[c] * rstd;
    coefficients[channels + c] = sum / n;
    coefficients[2 * channels + c] = rstd * rstd * products / n;
}

// dx = gamma * rstd * (g - mean(g) - (x - mean) * rstd^2 * mean(g * (x - mean))).
template <bool kMaskFromInput>
__global__ void __launch_bounds__(kThreads)
    batch_norm_backward_apply_kernel(const Bf16Bits* __restrict__ g_in,
                                     const Bf16Bits* __restrict__ x,
                                     const float* __restrict__ stats,
                                     const float* __restrict__ coefficients, int64_t rows,
                                     int64_t channels, Bf16Bits* __restrict__ dx) {
    const Tile t = tile_of(channels);
    const Position p = position(t);
    float mean[8], scale[8] = {}, shift[8] = {}, a[8], mean_g[8], k[8];
    load8(stats + p.col, mean);
    if (kMaskFromInput) {
        load8(stats + 2 * channels + p.col, scale);
        load8(stats + 3 * channels + p.col, shift);
    }
    load8(coefficients + p.col, a);
    load8(coefficients + channels + p.col, mean_g);
    load8(coefficients + 2 * channels + p.col, k);
    int64_t first, last;
    row_range(rows, gridDim.y, blockIdx.y, first, last);
#pragma unroll 4
    for (int64_t r = first + p.lane; r < last; r += t.lanes) {
        const int64_t offset = r * channels + p.col;
        float g[8], v[8];
        load8(g_in + offset, g);
        load8(x + offset, v);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if (kMaskFromInput)
                g[i] = fmaf(v[i], scale[i], shift[i]) > 0.0f ? g[i] : 0.0f;
            g[i] = a[i] * (g[i] - fmaf(v[i] - mean[i], k[i], mean_g[i]));
        }
        store8(dx + offset, g);
    }
}

dim3 grid_of(int64_t rows, int64_t channels) {
    const Tile t = tile_of(channels);
    const int64_t column_blocks = channels / 8 / t.vectors;
    const int64_t passes = (rows + t.lanes - 1) / t.lanes;  // of the whole block over its rows
    int64_t row_blocks = (passes + kMinPassesPerBlock - 1) / kMinPassesPerBlock;
    if (row_blocks * column_blocks < kFillBlocks)
        row_blocks = std::min(passes, (kFillBlocks + column_blocks - 1) / column_blocks);
    row_blocks = std::clamp<int64_t>(row_blocks, 1, std::max<int64_t>(1, kMaxBlocks / column_blocks));
    return dim3(static_cast<unsigned>(column_blocks), static_cast<unsigned>(row_blocks));
}

unsigned finish_blocks(int64_t channels) {
    return static_cast<unsigned>((channels + 31) / 32);
}

}  // namespace

bool batch_norm_channels_supported(int64_t channels) {
    const int64_t vectors = channels / 8;
    return channels > 0 && channels % 8 == 0 &&
           (kThreads % vectors == 0 || vectors % kThreads == 0);
}

int64_t batch_norm_partials_floats(int64_t rows, int64_t channels) {
    return static_cast<int64_t>(grid_of(rows, channels).y) * 2 * channels;
}

void batch_norm_statistics(const Bf16Bits* x, int64_t rows, int64_t channels, const float* gamma,
                           const float* beta, float eps, float momentum, float* running_mean,
                           float* running_var, int64_t* batches_tracked, float* partials,
                           float* stats, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    const dim3 grid = grid_of(rows, channels);
    batch_norm_statistics_kernel<<<grid, kThreads, 0, s>>>(x, rows, channels, partials);
    check_launch("batch-norm statistics");
    batch_norm_statistics_finish_kernel<<<finish_blocks(channels), dim3(32, 32), 0, s>>>(
        partials, grid.y, x, rows, channels, gamma, beta, eps, momentum, running_mean, running_var,
        batches_tracked, stats);
    check_launch("batch-norm statistics finish");
}

void batch_norm_apply(const Bf16Bits* x, const Bf16Bits* residual, const float* stats, bool relu,
                      int64_t rows, int64_t channels, Bf16Bits* y, void* stream) {
    const auto launch =
        residual
            ? (relu ? batch_norm_apply_kernel<true, true> : batch_norm_apply_kernel<true, false>)
            : (relu ? batch_norm_apply_kernel<false, true> : batch_norm_apply_kernel<false, false>);
    launch<<<grid_of(rows, channels), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        x, residual, stats, rows, channels, y);
    check_launch("batch-norm apply");
}

void batch_norm_backward(const Bf16Bits* dy, const Bf16Bits* x, const Bf16Bits* y,
                         const float* stats, const float* gamma, ReluMask mask, int64_t rows,
                         int64_t channels, Bf16Bits* masked, Bf16Bits* dx, float* d_gamma,
                         float* d_beta, float* partials, float* coefficients, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    const dim3 grid = grid_of(rows, channels);
    const auto reduce = mask == ReluMask::kNone ? batch_norm_backward_reduce_kernel<ReluMask::kNone>
                        : mask == ReluMask::kFromInput
                            ? batch_norm_backward_reduce_kernel<ReluMask::kFromInput>
                            : batch_norm_backward_reduce_kernel<ReluMask::kFromOutput>;
    reduce<<<grid, kThreads, 0, s>>>(dy, x, y, stats, rows, channels, masked, partials);
    check_launch("batch-norm backward reduction");
    batch_norm_backward_finish_kernel<<<finish_blocks(channels), dim3(32, 32), 0, s>>>(
        partials, grid.y, rows, channels, stats, gamma, d_gamma, d_beta, coefficients);
    check_launch("batch-norm backward finish");
    if (dx == nullptr)
        return;
    // With the mask from the output, the reduction wrote the masked gradient: read that.
    const Bf16Bits* const g = mask == ReluMask::kFromOutput ? masked : dy;
    const auto apply = mask == ReluMask::kFromInput ? batch_norm_backward_apply_kernel<true>
                                                    : batch_norm_backward_apply_kernel<false>;
    apply<<<grid, kThreads, 0, s>>>(g, x, stats, coefficients, rows, channels, dx);
    check_launch("batch-norm backward apply");
}

}  // namespace migscope::workloads::kernels
