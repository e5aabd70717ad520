// One training step, readable top to bottom: zero the gradients, forward and loss (bf16 autocast
// on CUDA, fp32 on CPU), backward, AdamW update of the trainable parameters.
#pragma once

#include <memory>

#include "workloads/master_weight_adamw.h"
#include "workloads/model.h"

namespace migscope::workloads {

// kBf16Autocast: fp32 parameters, bf16 autocast, fused AdamW (CUDA, models that keep fp32 weights).
// kBf16Weights: bf16 parameters, bf16 autocast (for the loss's fp32 parts), fp32 master weights
// and moments in MasterWeightAdamW (CUDA, Model::trains_with_bf16_weights). kFp32: CPU.
enum class Precision { kFp32, kBf16Autocast, kBf16Weights };

// The name the worker reports: "fp32", "bf16-autocast", "bf16-fp32-master".
const char* precision_name(Precision precision);

struct TrainerOptions {
    torch::Device device = torch::kCPU;
    double learning_rate = 3e-4;
    double weight_decay = 0.01;
};

class Trainer {
  public:
    // Moves the model to the device and builds AdamW over its trainable parameters.
    Trainer(Model& model, TrainerOptions options);
    // Runs one step and returns the loss (reading it waits for the device).
    double step(const Batch& batch);
    Precision precision() const { return precision_; }
    // After training: the model's parameters in fp32 again (kBf16Weights: the masters), e.g. to
    // save them. No steps after this.
    void finish();

  private:
    Model& model_;
    TrainerOptions options_;
    Precision precision_;
    std::unique_ptr<Optimizer> optimizer_;
    MasterWeightAdamW* master_weights_ = nullptr;  // optimizer_, where it holds fp32 masters
};

}  // namespace migscope::workloads
