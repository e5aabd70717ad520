// One telemetry sample of one GPU: a monotonic timestamp and every field that could be read.
#pragma once

#include <optional>

#include "core/time.h"

namespace migscope::telemetry {

struct Sample {
    SteadyTime time;                        // when the read started
    std::optional<double> power_instant_w;  // instantaneous board power
    std::optional<double> power_average_w;  // driver's 1 s average
    std::optional<double> energy_j;         // board energy counter (absolute, since driver load)
    std::optional<unsigned> sm_clock_mhz;
    std::optional<unsigned> memory_clock_mhz;
    std::optional<unsigned> gpu_utilization_pct;
    std::optional<unsigned> memory_utilization_pct;
    std::optional<double> memory_used_mib;
    std::optional<unsigned> temperature_c;
    std::optional<unsigned long long> clocks_event_reasons;  // NVML bit mask
};

}  // namespace migscope::telemetry
