// bf16 autocast on one device type for one scope, like Python's `torch.autocast(device,
// torch.bfloat16)`: the trainer's on CUDA; the tests' also on the CPU.
#pragma once

#include <ATen/autocast_mode.h>

namespace migscope::workloads {

class Bf16Autocast {
  public:
    explicit Bf16Autocast(c10::DeviceType device) : device_(device) {
        at::autocast::set_autocast_enabled(device_, true);
        at::autocast::set_autocast_dtype(device_, at::kBFloat16);
        at::autocast::increment_nesting();
    }
    ~Bf16Autocast() {
        if (at::autocast::decrement_nesting() == 0)
            at::autocast::clear_cache();
        at::autocast::set_autocast_enabled(device_, false);
    }
    Bf16Autocast(const Bf16Autocast&) = delete;
    Bf16Autocast& operator=(const Bf16Autocast&) = delete;

  private:
    c10::DeviceType device_;
};

}  // namespace migscope::workloads
