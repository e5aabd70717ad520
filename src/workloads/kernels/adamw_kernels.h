// CUDA kernel of MasterWeightAdamW (master_weight_adamw.h): one AdamW step of many tensors held as
// bf16 working weights with fp32 master weights and moments, in one launch. A plain launcher on
// raw pointers, so that only this pair of files needs nvcc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace migscope::workloads::kernels {

// The step's scalars, in fp32 as ATen's fused AdamW computes them. The step count is read on the
// device (a float advanced by the caller in stream order), so that a captured CUDA graph of the
// step stays correct on replay; the bias corrections are worked out from it in the kernel.
struct AdamWStepScalars {
    float learning_rate;
    float lr_times_weight_decay;
    float beta1, beta2, eps;
    const float* step;  // device pointer: the step count, 1 at the first step
};

// One tensor of the step: master, exp_avg, exp_avg_sq fp32 and updated in place; grad the bf16
// gradient's bits; param the bf16 working weights' bits, rewritten as the updated master rounded
// to nearest. All contiguous, n elements.
struct AdamWTensor {
    float* master;
    float* exp_avg;
    float* exp_avg_sq;
    const uint16_t* grad;
    uint16_t* param;
    int64_t n;
};

// The table the kernel reads: `count` AdamWTensor, then each tensor's first block index (int64).
// Written on the host (adamw_fill_table), copied to the device by the caller.
size_t adamw_table_bytes(int count);
// Fills `table` (adamw_table_bytes(count) bytes) and returns the number of blocks to launch.
int64_t adamw_fill_table(const AdamWTensor* tensors, int count, void* table);

// One launch over every tensor of a table already on the device.
void adamw_bf16_master_step(const void* device_table, int count, int64_t blocks,
                            const AdamWStepScalars& step, void* stream);

}  // namespace migscope::workloads::kernels
