// CUDA kernels of the 3x3 stride-2 max pooling (max_pool_kernels.h). One thread per output (or
// input) position and 8-channel vector: neighbouring threads read neighbouring 16-byte vectors of
// one position, so every load of a warp is contiguous.
#include "workloads/kernels/max_pool_kernels.h"

#include <cuda_runtime.h>

#include <cmath>

#include "workloads/kernels/bf16_vectors.cuh"

namespace migscope::workloads::kernels {
namespace {

constexpr int kThreads = 256;

// This thread's place in [batch][height][width][vectors]; false past the end.
struct Place {
    int64_t n, row, col, vector;
};

__device__ __forceinline__ bool place_of(int64_t batch, int64_t height, int64_t width,
                                         int64_t vectors, Place& p) {
    const int64_t index = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= batch * height * width * vectors)
        return false;
    p.vector = index % vectors;
    p.col = index / vectors % width;
    p.row = index / vectors / width % height;
    p.n = index / vectors / width / height;
    return true;
}

__global__ void forward_kernel(const Bf16Bits* __restrict__ x, int64_t batch, int64_t height,
                               int64_t width, int64_t vectors, int64_t out_height,
                               int64_t out_width, Bf16Bits* __restrict__ y,
                               uint8_t* __restrict__ argmax) {
    Place p;
    if (!place_of(batch, out_height, out_width, vectors, p))
        return;
    const int64_t n = p.n, oh = p.row, ow = p.col, v = p.vector;
    const int64_t channels = vectors * 8;
    const int64_t h0 = 2 * oh - 1, w0 = 2 * ow - 1;
    float best[8];
    uint8_t where[8];
    // ATen's start: -inf at the window's first position inside the input.
    const uint8_t first = static_cast<uint8_t>((h0 < 0 ? 1 : 0) * 3 + (w0 < 0 ? 1 : 0));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        best[i] = -INFINITY;
        where[i] = first;
    }
#pragma unroll
    for (int kh = 0; kh < 3; ++kh) {
        const int64_t h = h0 + kh;
        if (h < 0 || h >= height)
            continue;
#pragma unroll
        for (int kw = 0; kw < 3; ++kw) {
            const int64_t w = w0 + kw;
            if (w < 0 || w >= width)
                continue;
            float value[8];
            load8(x + ((n * height + h) * width + w) * channels + v * 8, value);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                if (value[i] > best[i] || isnan(value[i])) {
                    best[i] = value[i];
                    where[i] = static_cast<uint8_t>(kh * 3 + kw);
                }
            }
        }
    }
    const int64_t out = ((n * out_height + oh) * out_width + ow) * channels + v * 8;
    store8(y + out, best);  // exact: every value was a bf16
    uint2 packed;
    packed.x = where[0] | where[1] << 8 | where[2] << 16 | static_cast<uint32_t>(where[3]) << 24;
    packed.y = where[4] | where[5] << 8 | where[6] << 16 | static_cast<uint32_t>(where[7]) << 24;
    *reinterpret_cast<uint2*>(argmax + out) = packed;
}

__global__ void backward_kernel(const Bf16Bits* __restrict__ dy, const uint8_t* __restrict__ argmax,
                                int64_t batch, int64_t height, int64_t width, int64_t vectors,
                                int64_t out_height, int64_t out_width, Bf16Bits* __restrict__ dx) {
    Place p;
    if (!place_of(batch, height, width, vectors, p))
        return;
    const int64_t n = p.n, h = p.row, w = p.col, v = p.vector;
    const int64_t channels = vectors * 8;
    // The windows over (h, w): rows 2oh-1..2oh+1 hold h for oh in [h / 2, (h + 1) / 2].
    const int64_t oh_last = (h + 1) / 2 < out_height ? (h + 1) / 2 : out_height - 1;
    const int64_t ow_last = (w + 1) / 2 < out_width ? (w + 1) / 2 : out_width - 1;
    float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t oh = h / 2; oh <= oh_last; ++oh) {
        for (int64_t ow = w / 2; ow <= ow_last; ++ow) {
            const uint32_t mine =
                static_cast<uint32_t>((h - (2 * oh - 1)) * 3 + (w - (2 * ow - 1)));
            const int64_t out = ((n * out_height + oh) * out_width + ow) * channels + v * 8;
            const uint2 packed = *reinterpret_cast<const uint2*>(argmax + out);
            float grad[8];
            load8(dy + out, grad);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const uint32_t word = i < 4 ? packed.x : packed.y;
                if (((word >> (8 * (i % 4))) & 0xffu) == mine)
                    sum[i] += grad[i];
            }
        }
    }
    store8(dx + ((n * height + h) * width + w) * channels + v * 8, sum);
}

unsigned blocks_for(int64_t threads) {
    return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

}  // namespace

bool max_pool_channels_supported(int64_t channels) {
    return channels > 0 && channels % 8 == 0;
}

int64_t max_pool_output_size(int64_t input_size) {
    return (input_size - 1) / 2 + 1;
}

void max_pool_forward(const Bf16Bits* x, int64_t batch, int64_t height, int64_t width,
                      int64_t channels, Bf16Bits* y, uint8_t* argmax, void* stream) {
    const int64_t vectors = channels / 8;
    const int64_t out_height = max_pool_output_size(height),
                  out_width = max_pool_output_size(width);
    const int64_t threads = batch * out_height * out_width * vectors;
    if (threads == 0)
        return;
    forward_kernel<<<blocks_for(threads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        x, batch, height, width, vectors, out_height, out_width, y, argmax);
    check_launch("max_pool_forward");
}

void max_pool_backward(const Bf16Bits* dy, const uint8_t* argmax, int64_t batch, int64_t height,
                       int64_t width, int64_t channels, Bf16Bits* dx, void* stream) {
    const int64_t vectors = channels / 8;
    const int64_t threads = batch * height * width * vectors;
    if (threads == 0)
        return;
    backward_kernel<<<blocks_for(threads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        dy, argmax, batch, height, width, vectors, max_pool_output_size(height),
        max_pool_output_size(width), dx);
    check_launch("max_pool_backward");
}

}  // namespace migscope::workloads::kernels
