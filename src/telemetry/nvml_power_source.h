// PowerSource over one NVML device.
#pragma once

#include "nvml/session.h"
#include "telemetry/power_source.h"

namespace migscope::telemetry {

class NvmlPowerSource : public PowerSource {
  public:
    explicit NvmlPowerSource(nvml::Device device) : device_(std::move(device)) {}
    Sample read(SampleScope scope) override;

  private:
    nvml::Device device_;
};

}  // namespace migscope::telemetry
