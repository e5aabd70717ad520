// Helpers shared by migscope's CUDA kernels: 8 bf16 values as one 16-byte vector widened to fp32
// and back (round to nearest), 8 fp32 values as two 16-byte vectors, the rows of one block when
// rows are split into blocks, and the launch check.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace migscope::workloads::kernels {

using Bf16Bits = uint16_t;  // a bf16 as its bits, as the launchers pass it

// bf16 is the upper half of an fp32: widening is a shift or a mask. Done on the words of the
// uint4, not through bf16-pair views of it, so that the compiler keeps one 16-byte load (through
// the views it split each vector into four 4-byte loads).
__device__ __forceinline__ void unpack8(const uint4& raw, float out[8]) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = __uint_as_float(words[i] << 16);
        out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
}

__device__ __forceinline__ void load8(const Bf16Bits* p, float out[8]) {
    unpack8(*reinterpret_cast<const uint4*>(p), out);
}

__device__ __forceinline__ void load8(const float* p, float out[8]) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float4 b = reinterpret_cast<const float4*>(p)[1];
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w;
    out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
}

__device__ __forceinline__ void store8(Bf16Bits* p, const float in[8]) {
    uint4 raw;
    auto* pairs = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i)
        pairs[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
    *reinterpret_cast<uint4*>(p) = raw;
}

__device__ __forceinline__ void store8(float* p, const float in[8]) {
    reinterpret_cast<float4*>(p)[0] = make_float4(in[0], in[1], in[2], in[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(in[4], in[5], in[6], in[7]);
}

__device__ __forceinline__ float round_bf16(float x) {
    return __bfloat162float(__float2bfloat16_rn(x));
}

// Rows [first, last) of block `index` when `rows` are split into `row_blocks` equal blocks.
__device__ __forceinline__ void row_range(int64_t rows, int64_t row_blocks, int64_t index,
                                          int64_t& first, int64_t& last) {
    const int64_t per_block = (rows + row_blocks - 1) / row_blocks;
    first = index * per_block;
    last = first + per_block < rows ? first + per_block : rows;
}

inline void check_launch(const char* what) {
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        throw std::runtime_error(std::string(what) +
                                 " kernel launch failed: " + cudaGetErrorString(error));
}

}  // namespace migscope::workloads::kernels
