// CUDA kernel of MasterWeightAdamW: AdamW on fp32 masters and moments from a bf16 gradient, writing
// the bf16 working weights in the same pass (28 bytes an element, as ATen's fp32 fused AdamW reads
// and writes, without autocast's per-step casts of the weights and their gradients). One launch
// for all tensors: each block takes a chunk of one tensor, found in the table by binary search.
#include "workloads/kernels/adamw_kernels.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace migscope::workloads::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunk = kThreads * 4 * 8;  // elements a block: 8 rounds of 4 a thread

// The scalars of one step that depend on its count, as ATen's FusedAdamMathFunctor computes them.
struct StepCorrections {
    float step_size;              // learning rate / (1 - beta1^step)
    float bias_correction2_sqrt;  // sqrt(1 - beta2^step)
};

__device__ __forceinline__ StepCorrections corrections(const AdamWStepScalars& s) {
    const float step = *s.step;
    return {s.learning_rate / (1.0f - powf(s.beta1, step)), sqrtf(1.0f - powf(s.beta2, step))};
}

// The update of one element, in the order of ATen's FusedAdamMathFunctor (ADAMW mode).
__device__ __forceinline__ float adamw(float& master, float& m, float& v, float g,
                                       const AdamWStepScalars& s, const StepCorrections& c) {
    float p = master - s.lr_times_weight_decay * master;
    m = s.beta1 * m + (1.0f - s.beta1) * g;
    v = s.beta2 * v + (1.0f - s.beta2) * g * g;
    const float denom = sqrtf(v) / c.bias_correction2_sqrt + s.eps;
    p -= c.step_size * m / denom;
    master = p;
    return p;
}

__device__ __forceinline__ bool aligned(const void* p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// Elements [begin, end) of t, begin a multiple of 4: 16-byte loads of the fp32 arrays and 8-byte
// loads of the bf16 ones where the tensor allows, one element a thread otherwise.
__device__ void update_chunk(const AdamWTensor& t, int64_t begin, int64_t end,
                             const AdamWStepScalars& s) {
    const StepCorrections c = corrections(s);
    const bool vec4 = t.n % 4 == 0 && aligned(t.master, 16) && aligned(t.exp_avg, 16) &&
                      aligned(t.exp_avg_sq, 16) && aligned(t.grad, 8) && aligned(t.param, 8);
    if (!vec4) {
        auto* grad = reinterpret_cast<const __nv_bfloat16*>(t.grad);
        auto* param = reinterpret_cast<__nv_bfloat16*>(t.param);
        for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
            param[i] = __float2bfloat16_rn(
                adamw(t.master[i], t.exp_avg[i], t.exp_avg_sq[i], __bfloat162float(grad[i]), s, c));
        }
        return;
    }
    auto* master = reinterpret_cast<float4*>(t.master);
    auto* m = reinterpret_cast<float4*>(t.exp_avg);
    auto* v = reinterpret_cast<float4*>(t.exp_avg_sq);
    auto* grad = reinterpret_cast<const uint2*>(t.grad);
    auto* param = reinterpret_cast<uint2*>(t.param);
    for (int64_t i = begin / 4 + threadIdx.x; i < end / 4; i += blockDim.x) {
        float4 p = master[i], mi = m[i], vi = v[i];
        const uint2 graw = grad[i];
        const float2 ga = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&graw.x));
        const float2 gb = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&graw.y));
        adamw(p.x, mi.x, vi.x, ga.x, s, c);
        adamw(p.y, mi.y, vi.y, ga.y, s, c);
        adamw(p.z, mi.z, vi.z, gb.x, s, c);
        adamw(p.w, mi.w, vi.w, gb.y, s, c);
        master[i] = p;
        m[i] = mi;
        v[i] = vi;
        const __nv_bfloat162 p01 = __floats2bfloat162_rn(p.x, p.y);
        const __nv_bfloat162 p23 = __floats2bfloat162_rn(p.z, p.w);
        uint2 praw;
        praw.x = *reinterpret_cast<const unsigned*>(&p01);
        praw.y = *reinterpret_cast<const unsigned*>(&p23);
        param[i] = praw;
    }
}

__global__ void adamw_multi_tensor(const AdamWTensor* tensors, const int64_t* first_block,
                                   int count, AdamWStepScalars s) {
    const int64_t block = blockIdx.x;
    int lo = 0, hi = count - 1;  // the last tensor whose first block is at or before this one
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (first_block[mid] <= block)
            lo = mid;
        else
            hi = mid - 1;
    }
    const AdamWTensor t = tensors[lo];
    const int64_t begin = (block - first_block[lo]) * kChunk;
    update_chunk(t, begin, begin + kChunk < t.n ? begin + kChunk : t.n, s);
}

}  // namespace

size_t adamw_table_bytes(int count) {
    return static_cast<size_t>(count) * (sizeof(AdamWTensor) + sizeof(int64_t));
}

int64_t adamw_fill_table(const AdamWTensor* tensors, int count, void* table) {
    auto* bytes = static_cast<char*>(table);
    std::memcpy(bytes, tensors, static_cast<size_t>(count) * sizeof(AdamWTensor));
    auto* first_block = reinterpret_cast<int64_t*>(bytes + count * sizeof(AdamWTensor));
    int64_t blocks = 0;
    for (int i = 0; i < count; ++i) {
        first_block[i] = blocks;
        blocks += (tensors[i].n + kChunk - 1) / kChunk;
    }
    return blocks;
}

void adamw_bf16_master_step(const void* device_table, int count, int64_t blocks,
                            const AdamWStepScalars& step, void* stream) {
    if (count <= 0 || blocks <= 0)
        return;
    const auto* tensors = static_cast<const AdamWTensor*>(device_table);
    const auto* first_block = reinterpret_cast<const int64_t*>(
        static_cast<const char*>(device_table) + count * sizeof(AdamWTensor));
    adamw_multi_tensor<<<static_cast<unsigned>(blocks), kThreads, 0,
                         static_cast<cudaStream_t>(stream)>>>(tensors, first_block, count, step);
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        throw std::runtime_error(std::string("AdamW kernel launch failed: ") +
                                 cudaGetErrorString(error));
}

}  // namespace migscope::workloads::kernels
