// AdamW through LibTorch's fused multi-tensor kernel (at::_fused_adamw_, what Python's
// `AdamW(fused=True)` runs): one launch per step for all parameters instead of several per tensor.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "workloads/training/optimizer.h"

namespace migscope::workloads {

struct AdamWSettings {
    double learning_rate = 3e-4;
    double weight_decay = 0.01;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
};

class FusedAdamW : public Optimizer {
  public:
    FusedAdamW(std::vector<torch::Tensor> parameters, AdamWSettings settings);
    void zero_grad() override;
    void step() override;

  private:
    std::vector<torch::Tensor> parameters_, exp_avg_, exp_avg_sq_, steps_;
    AdamWSettings settings_;
};

}  // namespace migscope::workloads
