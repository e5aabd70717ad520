// CSV / JSON-lines trace output.
#include "report/trace_writer.h"

#include <fmt/format.h>

namespace migscope::report {
namespace {
template <typename T>
std::optional<double> as_double(const std::optional<T>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}
}  // namespace

const std::vector<TraceField>& trace_fields() {
    using telemetry::Sample;
    static const std::vector<TraceField> fields = {
        {"power_instant_w", [](const Sample& s) { return s.power_instant_w; }},
        {"power_average_w", [](const Sample& s) { return s.power_average_w; }},
        {"sm_clock_mhz", [](const Sample& s) { return as_double(s.sm_clock_mhz); }},
        {"memory_clock_mhz", [](const Sample& s) { return as_double(s.memory_clock_mhz); }},
        {"gpu_utilization_pct", [](const Sample& s) { return as_double(s.gpu_utilization_pct); }},
        {"memory_utilization_pct",
         [](const Sample& s) { return as_double(s.memory_utilization_pct); }},
        {"memory_used_mib", [](const Sample& s) { return s.memory_used_mib; }},
        {"temperature_c", [](const Sample& s) { return as_double(s.temperature_c); }},
        {"clocks_event_reasons", [](const Sample& s) { return as_double(s.clocks_event_reasons); }},
    };
    return fields;
}

TraceWriter::TraceWriter(std::ostream& out, TraceFormat format, SteadyTime origin,
                         std::optional<double> energy_origin_j)
    : out_(out), format_(format), origin_(origin), energy_origin_j_(energy_origin_j) {}

void TraceWriter::write_header() {
    if (format_ != TraceFormat::kCsv)
        return;
    out_ << "t_s,energy_j";
    for (const TraceField& f : trace_fields())
        out_ << ',' << f.name;
    out_ << '\n';
}

void TraceWriter::write(const telemetry::Sample& sample) {
    const double t_s = seconds_between(origin_, sample.time);
    std::optional<double> energy_j;
    if (sample.energy_j && energy_origin_j_)
        energy_j = *sample.energy_j - *energy_origin_j_;
    auto number = [](double v) { return fmt::format("{:.9g}", v); };
    if (format_ == TraceFormat::kCsv) {
        std::string line = fmt::format("{:.6f},", t_s) + (energy_j ? number(*energy_j) : "");
        for (const TraceField& f : trace_fields()) {
            auto v = f.value(sample);
            line += ',' + (v ? number(*v) : std::string());
        }
        out_ << line << '\n';
    } else {
        std::string line = fmt::format("{{\"t_s\":{:.6f},\"energy_j\":{}", t_s,
                                       energy_j ? number(*energy_j) : "null");
        for (const TraceField& f : trace_fields()) {
            auto v = f.value(sample);
            line += fmt::format(",\"{}\":{}", f.name, v ? number(*v) : "null");
        }
        out_ << line << "}\n";
    }
}

}  // namespace migscope::report
