// Writes telemetry samples as CSV or JSON lines, from one field schema shared by both formats.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace migscope::report {

enum class TraceFormat { kCsv, kJsonLines };

// One column of the trace: its name (with unit) and how to read it from a sample.
struct TraceField {
    const char* name;
    std::optional<double> (*value)(const telemetry::Sample&);
};
const std::vector<TraceField>& trace_fields();

class TraceWriter {
  public:
    // Times are written relative to `origin`, energy relative to `energy_origin_j` (when known).
    TraceWriter(std::ostream& out, TraceFormat format, SteadyTime origin,
                std::optional<double> energy_origin_j);
    void write_header();  // CSV header row; nothing for JSON lines
    void write(const telemetry::Sample& sample);

  private:
    std::ostream& out_;
    TraceFormat format_;
    SteadyTime origin_;
    std::optional<double> energy_origin_j_;
};

}  // namespace migscope::report
