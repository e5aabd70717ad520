// `migscope stream check`'s JSON document and text (stream/trace_summary_output.h).
#include "stream/trace_summary_output.h"

#include <fmt/format.h>

#include "core/user_text.h"

namespace migscope::stream {
namespace {

// Seconds as a person reads them: "90 s", "45 min", "36 h", three significant digits.
std::string time_text(double s) {
    if (s < 120)
        return fmt::format("{:.3g} s", s);
    if (s < 7200)
        return fmt::format("{:.3g} min", s / 60);
    return fmt::format("{:.3g} h", s / 3600);
}

// The workloads listed by name; the rest counted.
constexpr size_t kListedWorkloads = 8;

}  // namespace

nlohmann::ordered_json trace_summary_json(const std::string& trace_path, const Trace& trace) {
    const TraceSummary s = summarize(trace);
    nlohmann::ordered_json j;
    j["file"] = user_text::as_utf8(trace_path);
    j["version"] = kTraceVersion;
    j["source"] = trace.source;
    j["jobs"] = s.jobs;
    j["first_arrival_s"] = s.first_arrival_s;
    j["last_arrival_s"] = s.last_arrival_s;
    j["span_s"] = s.span_s;
    j["arrival_rate_per_h"] = s.arrival_rate_per_h;
    j["jobs_with_work"] = s.jobs_with_work;
    j["total_work_steps"] = s.total_work_steps;
    j["jobs_with_duration"] = s.jobs_with_duration;
    j["total_duration_s"] = s.total_duration_s;
    j["jobs_with_deadline"] = s.jobs_with_deadline;
    j["workloads"] = nlohmann::ordered_json::object();
    for (const WorkloadCount& w : s.workloads)
        j["workloads"][w.workload] = w.jobs;
    return j;
}

void write_trace_summary(const std::string& trace_path, const Trace& trace, std::ostream& out) {
    const TraceSummary s = summarize(trace);
    out << user_text::escaped(trace_path) << ": valid trace (version " << kTraceVersion << "), "
        << s.jobs << " jobs\n";
    if (!trace.source.empty())
        out << "  source      " << user_text::escaped(trace.source) << '\n';
    out << "  arrivals    " << time_text(s.first_arrival_s) << " to " << time_text(s.last_arrival_s)
        << " (span " << time_text(s.span_s) << "), " << fmt::format("{:.3g}", s.arrival_rate_per_h)
        << " per hour\n";
    out << "  amounts     " << s.jobs_with_work << " in steps (total "
        << fmt::format("{:.0f}", s.total_work_steps) << "), " << s.jobs_with_duration
        << " in seconds (total " << time_text(s.total_duration_s) << ")\n";
    out << "  deadlines   " << s.jobs_with_deadline << " jobs\n";
    out << "  workloads   ";
    for (size_t i = 0; i < s.workloads.size(); ++i) {
        if (i == kListedWorkloads) {
            out << ", " << s.workloads.size() - i << " more";
            break;
        }
        out << (i ? ", " : "") << s.workloads[i].workload << " " << s.workloads[i].jobs;
    }
    out << '\n';
}

const Printers<CheckedTrace>& trace_summary_printers() {
    static const Printers<CheckedTrace> printers(
        "stream check",
        {{"table", [](const CheckedTrace& c,
                      std::ostream& out) { write_trace_summary(c.trace_path, c.trace, out); }},
         {"json", [](const CheckedTrace& c, std::ostream& out) {
              out << trace_summary_json(c.trace_path, c.trace).dump(2) << '\n';
          }}});
    return printers;
}

}  // namespace migscope::stream
