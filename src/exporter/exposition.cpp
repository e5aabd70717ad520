// Writing metric families in the Prometheus text format.
#include "exporter/exposition.h"

#include <charconv>
#include <cmath>

#include "core/error.h"
#include "core/user_text.h"

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

enum class Quotes { kEscaped, kKept };

// Text as the format wants it: valid UTF-8 (Prometheus refuses a whole scrape over one invalid
// byte, and a process name is any bytes, cut at 15 by the kernel even inside a character), so
// each byte that begins no UTF-8 character becomes U+FFFD; `\` and newline escaped, and `"` in
// label values.
std::string escape_text(std::string_view text, Quotes quotes) {
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const size_t length = user_text::utf8_character_length(text.substr(i));
        if (length == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
            ++i;
            continue;
        }
        const char c = text[i];
        if (c == '\\')
            out += "\\\\";
        else if (c == '"' && quotes == Quotes::kEscaped)
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.append(text, i, length);
        i += length;
    }
    return out;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
    return escape_text(value, Quotes::kEscaped);
}

std::string escape_help(std::string_view help) {
    return escape_text(help, Quotes::kKept);
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
