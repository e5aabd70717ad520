// CUDA kernel of MasterWeightAdamW (master_weight_adamw.h): one AdamW step of a tensor held as
// bf16 working weights with fp32 master weights and moments. A plain launcher on raw pointers, so
// that only this pair of files needs nvcc.
#pragma once

#include <cstdint>

namespace migscope::workloads::kernels {

// The step's scalars, in fp32 as ATen's fused AdamW computes them.
struct AdamWStepScalars {
    float lr_times_weight_decay;
    float beta1, beta2, eps;
    float step_size;              // learning rate / (1 - beta1^step)
    float bias_correction2_sqrt;  // sqrt(1 - beta2^step)
};

// master, exp_avg, exp_avg_sq: fp32, n elements, updated in place; grad: the bf16 gradient's bits;
// param: the bf16 working weights' bits, rewritten as the updated master rounded to nearest.
void adamw_bf16_master_step(float* master, float* exp_avg, float* exp_avg_sq, const uint16_t* grad,
                            uint16_t* param, int64_t n, const AdamWStepScalars& step, void* stream);

}  // namespace migscope::workloads::kernels
