// What the trainer asks of an optimizer: drop the gradients, update the parameters.
#pragma once

namespace migscope::workloads {

class Optimizer {
  public:
    virtual ~Optimizer() = default;
    virtual void zero_grad() = 0;  // drops the gradients (set to none)
    virtual void step() = 0;       // updates every parameter that has a gradient
};

}  // namespace migscope::workloads
