// Where samples come from: NVML on a GPU, a synthetic trace in tests.
#pragma once

#include "telemetry/sample.h"

namespace migscope::telemetry {

// Which fields a read takes. Power and energy are cheap enough for every sample; the rest (clocks,
// utilisation, memory, temperature, throttle reasons) cost several NVML calls and change slowly.
enum class SampleScope { kPowerAndEnergy, kAll };

class PowerSource {
public:
    virtual ~PowerSource() = default;
    // Reads the fields of `scope` it can; fields it cannot read, or that are outside the scope,
    // stay empty. Must be safe to call from the sampler thread while the owner also calls it.
    virtual Sample read(SampleScope scope) = 0;
};

}  // namespace migscope::telemetry
