// Prometheus text exposition (format 0.0.4), written and read back: metric families with HELP and
// TYPE lines, samples with escaped label values. Label values are untrusted text (process names,
// cgroup paths).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "exporter/energy_ledger.h"

namespace migscope::exporter {

// The Content-Type of a scrape's answer.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kGauge, kCounter };

struct MetricSample {
    Labels labels;
    double value = 0;
};

struct MetricFamily {
    std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*
    std::string help;
    MetricType type = MetricType::kGauge;
    std::vector<MetricSample> samples;
};

// A label value as the text format wants it: `\` -> `\\`, `"` -> `\"`, newline -> `\n`, and
// valid UTF-8: each byte that begins no UTF-8 character becomes U+FFFD (valid text is unchanged).
std::string escape_label_value(std::string_view value);
// HELP text: `\` -> `\\`, newline -> `\n`, invalid UTF-8 as in label values.
std::string escape_help(std::string_view help);
// Whether `name` is in the format's alphabet: [a-zA-Z_][a-zA-Z0-9_]* for a label,
// [a-zA-Z_:][a-zA-Z0-9_:]* for a metric.
bool valid_name(std::string_view name, bool metric);
// A sample value: shortest text that reads back to the same double; NaN, +Inf, -Inf.
std::string format_value(double value);

// Every family with at least one sample: "# HELP", "# TYPE", then one line per sample. Throws an
// input error for a metric or label name outside the format's alphabet (names are ours, so that
// is a bug, but never put on the wire).
std::string write_exposition(const std::vector<MetricFamily>& families);

// Parses a text exposition (this exporter's or any other's) into families in the order their
// first line comes; samples without HELP/TYPE lines form untyped (gauge) families, timestamps are
// dropped. Throws an input error naming `origin` and the line for text that breaks the format.
std::vector<MetricFamily> read_exposition(std::string_view text, const std::string& origin);

}  // namespace migscope::exporter
