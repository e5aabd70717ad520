// One training step, readable top to bottom: zero the gradients, forward and loss (bf16 autocast
// on CUDA, fp32 on CPU), backward, fused AdamW update of the trainable parameters.
#pragma once

#include <memory>

#include "workloads/fused_adamw.h"
#include "workloads/model.h"

namespace migscope::workloads {

enum class Precision { kFp32, kBf16Autocast };

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

  private:
    Model& model_;
    TrainerOptions options_;
    Precision precision_;
    std::unique_ptr<FusedAdamW> optimizer_;
};

}  // namespace migscope::workloads
