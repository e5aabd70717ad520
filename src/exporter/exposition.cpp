// Writing metric families in the Prometheus text format.
#include "exporter/exposition.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace migscope::exporter {
namespace {

bool valid_name(std::string_view name, bool allow_colon) {
    if (name.empty())
        return false;
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                            (allow_colon && c == ':');
        const bool digit = c >= '0' && c <= '9';
        if (!letter && !(digit && i > 0))
            return false;
    }
    return true;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string escape_help(std::string_view help) {
    std::string out;
    out.reserve(help.size());
    for (const char c : help) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string format_value(double value) {
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    char buffer[64];
    const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    return std::string(buffer, end);
}

std::string write_exposition(const std::vector<MetricFamily>& families) {
    std::string out;
    for (const MetricFamily& family : families) {
        if (family.samples.empty())
            continue;
        if (!valid_name(family.name, true))
            throw input_error("exposition: bad metric name '" + family.name + "'");
        out += "# HELP " + family.name + ' ' + escape_help(family.help) + '\n';
        out += "# TYPE " + family.name + ' ' +
               (family.type == MetricType::kCounter ? "counter" : "gauge") + '\n';
        for (const MetricSample& sample : family.samples) {
            out += family.name;
            if (!sample.labels.empty()) {
                out += '{';
                bool first = true;
                for (const auto& [name, value] : sample.labels) {
                    if (!valid_name(name, false) || name.rfind("__", 0) == 0)
                        throw input_error("exposition: bad label name '" + name + "' in " +
                                          family.name);
                    if (!first)
                        out += ',';
                    first = false;
                    out += name + "=\"" + escape_label_value(value) + '"';
                }
                out += '}';
            }
            out += ' ' + format_value(sample.value) + '\n';
        }
    }
    return out;
}

}  // namespace migscope::exporter
