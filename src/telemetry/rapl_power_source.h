// PowerSource over Linux RAPL (powercap) package energy counters: CPU energy for the cpu backend.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/power_source.h"

namespace migscope::telemetry {

class RaplPowerSource : public PowerSource {
  public:
    // Reads every package domain under `root` (intel-rapl:N/energy_uj). Throws an unavailable
    // error naming the reason when none is readable (no RAPL, or not permitted: often root only).
    explicit RaplPowerSource(const std::string& root = "/sys/class/powercap");
    // energy_j: the packages' summed energy since construction (wrap-around handled);
    // power_instant_w: the mean power since the previous read. Other fields stay empty.
    Sample read(SampleScope scope) override;

  private:
    struct Domain {
        std::string energy_path;
        double max_range_j = 0;
        double last_j = 0;
        double total_j = 0;
    };
    std::mutex mutex_;
    std::vector<Domain> domains_;
    std::optional<Sample> previous_;
};

}  // namespace migscope::telemetry
