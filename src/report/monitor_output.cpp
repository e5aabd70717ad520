// What `migscope monitor` measured, as text and JSON.
#include "report/monitor_output.h"

#include <fmt/format.h>

#include "report/json_value.h"

namespace migscope::report {
namespace {

std::string opt(const std::optional<double>& v, const char* unit, int decimals) {
    return v ? fmt::format("{:.{}f} {}", *v, decimals, unit) : std::string("-");
}

}  // namespace

nlohmann::json monitor_json(const MonitorReport& r) {
    const telemetry::EnergySummary& e = r.result.energy;
    const telemetry::SamplerStats& st = r.result.sampler;
    nlohmann::json j;
    j["gpu_index"] = r.gpu_index;
    j["gpu_name"] = r.gpu_name;
    j["sample_rate_hz"] = r.request.hz;
    j["command"] = r.request.command;
    j["exit_status"] = maybe(r.result.exit_status);
    j["duration_s"] = e.duration_s;
    j["energy_counter_j"] = maybe(e.counter_energy_j);
    j["energy_trace_j"] = maybe(e.trace_energy_j);
    j["disagreement_pct"] = maybe(e.disagreement_pct);
    j["average_power_w"] = maybe(e.average_power_w);
    j["peak_power_w"] = maybe(e.peak_power_w);
    j["power_samples"] = e.power_samples;
    j["max_sample_gap_s"] = maybe(e.max_gap_s);
    j["method"] =
        "energy_counter_j: board energy counter (nvmlDeviceGetTotalEnergyConsumption) read just "
        "before the command starts and just after it exits; energy_trace_j: trapezoid over " +
        std::string(e.trace_is_one_second_average ? "the 1 s average power field"
                                                  : "the instant power field (NVML field 186)") +
        "; average_power_w = energy_counter_j / duration_s";
    j["sampler"] = {{"samples", st.samples},
                    {"missed_periods", st.missed_periods},
                    {"thread_cpu_s", st.thread_cpu_s},
                    {"wall_s", st.wall_s},
                    {"mean_read_s", st.mean_read_s}};
    j["warnings"] = e.warnings;
    return j;
}

void print_monitor_summary(const MonitorReport& r, std::ostream& out) {
    const telemetry::EnergySummary& e = r.result.energy;
    const telemetry::SamplerStats& st = r.result.sampler;
    auto row = [&](const char* key, const std::string& value) {
        out << fmt::format("  {:<16} {}\n", key, value);
    };
    out << fmt::format("\nmigscope monitor: GPU {} ({}), sampled at {:g} Hz\n", r.gpu_index,
                       r.gpu_name, r.request.hz);
    if (!r.request.command.empty()) {
        std::string cmd;
        for (const std::string& a : r.request.command)
            cmd += (cmd.empty() ? "" : " ") + a;
        row("command", cmd + fmt::format("  (exit {})", r.result.exit_status.value_or(-1)));
    }
    row("duration", fmt::format("{:.3f} s", e.duration_s));
    row("energy", opt(e.counter_energy_j, "J", 1) + "  (board energy counter delta)");
    row("trace energy",
        opt(e.trace_energy_j, "J", 1) +
            fmt::format("  (trapezoid over {} {} readings, longest gap {})", e.power_samples,
                        e.trace_is_one_second_average ? "1 s average power" : "instant power",
                        opt(e.max_gap_s, "s", 3)));
    row("disagreement", opt(e.disagreement_pct, "%", 2) + "  (trace vs counter)");
    row("average power", opt(e.average_power_w, "W", 1));
    row("peak power", opt(e.peak_power_w, "W", 1) + "  (highest reading)");
    const double cpu_pct = st.wall_s > 0 ? 100.0 * st.thread_cpu_s / st.wall_s : 0.0;
    row("sampler", fmt::format("{} samples, {} missed periods, {:.1f} ms CPU ({:.3f}% of one "
                               "core), {:.0f} us per read",
                               st.samples, st.missed_periods, st.thread_cpu_s * 1e3, cpu_pct,
                               st.mean_read_s * 1e6));
    for (const std::string& w : e.warnings)
        out << "  warning: " << w << '\n';
}

}  // namespace migscope::report
