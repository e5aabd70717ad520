// `migscope stream check`'s output: a trace's summary (stream/trace.h, summarize) as a JSON
// document (--format json) and as a few lines of text (--format table).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/printers.h"
#include "stream/trace.h"

namespace migscope::stream {

// `trace_path` is the file as given: each output escapes it its own way.
nlohmann::ordered_json trace_summary_json(const std::string& trace_path, const Trace& trace);

// That the trace is valid, its source, arrivals, amounts, deadlines and its first eight
// workloads with their jobs.
void write_trace_summary(const std::string& trace_path, const Trace& trace, std::ostream& out);

// A trace file as `stream check` read it.
struct CheckedTrace {
    const std::string& trace_path;  // as given
    const Trace& trace;
};
// table (write_trace_summary), json (trace_summary_json).
const Printers<CheckedTrace>& trace_summary_printers();

}  // namespace migscope::stream
