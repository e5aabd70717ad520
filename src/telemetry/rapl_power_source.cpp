// RAPL package energy counters read from sysfs.
#include "telemetry/rapl_power_source.h"

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace migscope::telemetry {
namespace {

std::optional<double> read_microjoules(const std::string& path) {
    std::ifstream in(path);
    unsigned long long uj = 0;
    if (!(in >> uj))
        return std::nullopt;
    return static_cast<double>(uj) * 1e-6;
}

}  // namespace

RaplPowerSource::RaplPowerSource(const std::string& root) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string problem = root + " has no intel-rapl package domains";
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        const std::string name = entry.path().filename().string();
        // Top-level package domains are "intel-rapl:N" (subdomains have a second colon).
        if (name.rfind("intel-rapl:", 0) != 0 || name.find(':', 11) != std::string::npos)
            continue;
        Domain d;
        d.energy_path = (entry.path() / "energy_uj").string();
        const auto now = read_microjoules(d.energy_path);
        if (!now) {
            problem = "cannot read " + d.energy_path + " (RAPL is often readable by root only)";
            continue;
        }
        d.last_j = *now;
        d.max_range_j =
            read_microjoules((entry.path() / "max_energy_range_uj").string()).value_or(0);
        domains_.push_back(d);
    }
    if (domains_.empty())
        throw unavailable_error("RAPL: " + problem);
}

Sample RaplPowerSource::read(SampleScope) {
    std::lock_guard<std::mutex> lock(mutex_);
    Sample s;
    s.time = SteadyClock::now();
    double total = 0;
    for (Domain& d : domains_) {
        if (const auto now = read_microjoules(d.energy_path)) {
            double delta = *now - d.last_j;
            if (delta < 0 && d.max_range_j > 0)
                delta += d.max_range_j;  // the counter wrapped
            d.total_j += std::max(delta, 0.0);
            d.last_j = *now;
        }
        total += d.total_j;
    }
    s.energy_j = total;
    if (previous_ && s.time > previous_->time)
        s.power_instant_w =
            (total - *previous_->energy_j) / seconds_between(previous_->time, s.time);
    previous_ = s;
    return s;
}

}  // namespace migscope::telemetry
