// Where samples come from: NVML on a GPU, a synthetic trace in tests.
#pragma once

#include "telemetry/sample.h"

namespace migscope::telemetry {

// Which fields a read takes. kPower: power and, where the driver serves it as a field, the energy
// counter (one cheap NVML call). kAll: everything, the energy counter through its own (slower) call
// when the field is missing. Window edges are always read with kAll.
enum class SampleScope { kPower, kAll };

class PowerSource {
public:
    virtual ~PowerSource() = default;
    // Reads the fields of `scope` it can; fields it cannot read, or that are outside the scope,
    // stay empty. Must be safe to call from the sampler thread while the owner also calls it.
    virtual Sample read(SampleScope scope) = 0;
};

}  // namespace migscope::telemetry
