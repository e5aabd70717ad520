// What the trainer asks of an optimizer: drop the gradients, update the parameters.
#pragma once

namespace migscope::workloads {

class Optimizer {
  public:
    virtual ~Optimizer() = default;
    virtual void zero_grad() = 0;  // drops the gradients (set to none)
    virtual void step() = 0;       // updates every parameter that has a gradient
    // A step captured into a CUDA graph was abandoned without running: state the optimizer kept
    // from it on the host (which memory holds what) is not true on the device.
    virtual void forget_captured_work() {}
};

}  // namespace migscope::workloads
