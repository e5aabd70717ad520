// CUDA kernel of MasterWeightAdamW: AdamW on fp32 masters and moments from a bf16 gradient, writing
// the bf16 working weights in the same pass (28 bytes an element, as ATen's fp32 fused AdamW reads
// and writes, without autocast's per-step casts of the weights and their gradients).
#include "workloads/adamw_kernels.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace migscope::workloads::kernels {
namespace {

// The update of one element, in the order of ATen's FusedAdamMathFunctor (ADAMW mode).
__device__ __forceinline__ float adamw(float& master, float& m, float& v, float g,
                                       const AdamWStepScalars& s) {
    float p = master - s.lr_times_weight_decay * master;
    m = s.beta1 * m + (1.0f - s.beta1) * g;
    v = s.beta2 * v + (1.0f - s.beta2) * g * g;
    const float denom = sqrtf(v) / s.bias_correction2_sqrt + s.eps;
    p -= s.step_size * m / denom;
    master = p;
    return p;
}

// Four elements a thread: 16-byte loads of the fp32 arrays, 8-byte loads of the bf16 ones.
__global__ void adamw_vec4(float4* master, float4* m, float4* v, const uint2* grad, uint2* param,
                           int64_t n4, AdamWStepScalars s) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4;
         i += int64_t(gridDim.x) * blockDim.x) {
        float4 p = master[i], mi = m[i], vi = v[i];
        const uint2 graw = grad[i];
        const __nv_bfloat162 g01 = *reinterpret_cast<const __nv_bfloat162*>(&graw.x);
        const __nv_bfloat162 g23 = *reinterpret_cast<const __nv_bfloat162*>(&graw.y);
        const float2 ga = __bfloat1622float2(g01), gb = __bfloat1622float2(g23);
        adamw(p.x, mi.x, vi.x, ga.x, s);
        adamw(p.y, mi.y, vi.y, ga.y, s);
        adamw(p.z, mi.z, vi.z, gb.x, s);
        adamw(p.w, mi.w, vi.w, gb.y, s);
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

// One element a thread: any size and alignment.
__global__ void adamw_scalar(float* master, float* m, float* v, const __nv_bfloat16* grad,
                             __nv_bfloat16* param, int64_t n, AdamWStepScalars s) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x) {
        param[i] = __float2bfloat16_rn(adamw(master[i], m[i], v[i], __bfloat162float(grad[i]), s));
    }
}

bool aligned(const void* p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace

void adamw_bf16_master_step(float* master, float* exp_avg, float* exp_avg_sq,
                            const uint16_t* grad, uint16_t* param, int64_t n,
                            const AdamWStepScalars& step, void* stream) {
    if (n <= 0)
        return;
    constexpr int kThreads = 256;
    constexpr int64_t kMaxBlocks = 8192;  // grid-stride beyond that
    auto* s = static_cast<cudaStream_t>(stream);
    const bool vec4 = n % 4 == 0 && aligned(master, 16) && aligned(exp_avg, 16) &&
                      aligned(exp_avg_sq, 16) && aligned(grad, 8) && aligned(param, 8);
    const int64_t work = vec4 ? n / 4 : n;
    const int blocks = static_cast<int>(std::min(kMaxBlocks, (work + kThreads - 1) / kThreads));
    if (vec4) {
        adamw_vec4<<<blocks, kThreads, 0, s>>>(
            reinterpret_cast<float4*>(master), reinterpret_cast<float4*>(exp_avg),
            reinterpret_cast<float4*>(exp_avg_sq), reinterpret_cast<const uint2*>(grad),
            reinterpret_cast<uint2*>(param), work, step);
    } else {
        adamw_scalar<<<blocks, kThreads, 0, s>>>(
            master, exp_avg, exp_avg_sq, reinterpret_cast<const __nv_bfloat16*>(grad),
            reinterpret_cast<__nv_bfloat16*>(param), n, step);
    }
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        throw std::runtime_error(std::string("AdamW kernel launch failed: ") +
                                 cudaGetErrorString(error));
}

}  // namespace migscope::workloads::kernels
