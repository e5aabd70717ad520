// AdamW for bf16 working weights with fp32 master weights, the mixed precision of Megatron-LM and
// llm.c: the model computes with bf16 parameters (no per-step casts of the weights, bf16
// gradients); this optimizer keeps each one's fp32 master and fp32 moments, updates the masters
// from the bf16 gradients and writes them back, rounded to nearest, into the bf16 parameters.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "workloads/kernels/fused_adamw.h"
#include "workloads/training/optimizer.h"

namespace migscope::workloads {

class MasterWeightAdamW : public Optimizer {
  public:
    // Takes fp32 parameters: their values become the masters and the parameters turn into bf16.
    MasterWeightAdamW(std::vector<torch::Tensor> parameters, AdamWSettings settings);
    void zero_grad() override;
    // One CUDA launch for all tensors (adamw_kernels.cu) where it is built and they are on a GPU;
    // otherwise ATen's fused AdamW on the masters with the gradients cast to fp32 (same update).
    // The step count lives on the parameters' device and is advanced there, so a step captured
    // into a CUDA graph stays correct when replayed (step_graph.h).
    void step() override;
    void forget_captured_work() override { table_gradients_.clear(); }
    // Puts the fp32 masters back into the parameters (after training; before saving them).
    void restore_master_weights();

  private:
    std::vector<torch::Tensor> parameters_, master_, exp_avg_, exp_avg_sq_;
    torch::Tensor step_count_;  // fp32 scalar on the parameters' device, 1 at the first step
    AdamWSettings settings_;
    // The CUDA kernel's tensor table, in pinned memory and on the device, made at the first GPU
    // step (room for every parameter) and rewritten only when a gradient moved: a replayed graph
    // reads the table it was captured with.
    torch::Tensor host_table_, device_table_;
    std::vector<const void*> table_gradients_;
    int64_t table_blocks_ = 0;
};

}  // namespace migscope::workloads
