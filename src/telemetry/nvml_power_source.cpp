// Reads one telemetry sample through NVML.
#include "telemetry/nvml_power_source.h"

namespace migscope::telemetry {

Sample NvmlPowerSource::read(SampleScope scope) {
    Sample s;
    s.time = SteadyClock::now();
    nvml::PowerFields power = device_.power_fields();
    s.power_instant_w = power.instant_w;
    s.power_average_w = power.average_w;
    if (scope == SampleScope::kPower)
        return s;
    if (!s.power_average_w)
        s.power_average_w = device_.power_usage_w().value;
    s.energy_j = device_.energy_j().value;
    nvml::Clocks clocks = device_.clocks();
    s.sm_clock_mhz = clocks.sm_mhz;
    s.memory_clock_mhz = clocks.memory_mhz;
    if (auto u = device_.utilization().value) {
        s.gpu_utilization_pct = u->gpu;
        s.memory_utilization_pct = u->memory;
    }
    if (auto m = device_.memory().value)
        s.memory_used_mib = static_cast<double>(m->used) / 1048576.0;
    s.temperature_c = device_.temperature_c().value;
    s.clocks_event_reasons = device_.clocks_event_reasons().value;
    return s;
}

}  // namespace migscope::telemetry
