// Where samples come from: NVML on a GPU, a synthetic trace in tests.
#pragma once

#include "telemetry/sample.h"

namespace migscope::telemetry {

class PowerSource {
public:
    virtual ~PowerSource() = default;
    // Reads every field it can; fields it cannot read stay empty. Must be safe to call from the
    // sampler thread while the owner thread also calls it.
    virtual Sample read() = 0;
};

}  // namespace migscope::telemetry
