// Where samples come from: NVML on a GPU, a synthetic trace in tests.
#pragma once

#include "telemetry/sample.h"

namespace migscope::telemetry {

// Which fields a read takes. kPower: instant and average power (one cheap NVML call). kAll: also
// the energy counter (about 4 ms of CPU per read on our H200), clocks, utilisation, memory,
// temperature and throttle reasons. Window edges are always read with kAll.
enum class SampleScope { kPower, kAll };

class PowerSource {
  public:
    virtual ~PowerSource() = default;
    // Reads the fields of `scope` it can; fields it cannot read, or that are outside the scope,
    // stay empty. Must be safe to call from the sampler thread while the owner also calls it.
    virtual Sample read(SampleScope scope) = 0;
};

}  // namespace migscope::telemetry
