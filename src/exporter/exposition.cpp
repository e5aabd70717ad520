// Writing metric families in the Prometheus text format, and reading the format back.
#include "exporter/exposition.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::exporter {
namespace {

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

bool valid_name(std::string_view name, bool metric) {
    if (name.empty())
        return false;
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                            (metric && c == ':');
        const bool digit = c >= '0' && c <= '9';
        if (!letter && !(digit && i > 0))
            return false;
    }
    return true;
}

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

namespace {

// One line's cursor; every error names the origin and the line.
class LineReader {
  public:
    LineReader(std::string_view line, std::string where) : line_(line), where_(std::move(where)) {}
    [[noreturn]] void fail(const std::string& what) const {
        throw input_error(where_ + ": " + what);
    }
    bool done() const { return at_ >= line_.size(); }
    char peek() const { return done() ? '\0' : line_[at_]; }
    bool take(char c) {
        if (peek() != c)
            return false;
        ++at_;
        return true;
    }
    void skip_blanks() {
        while (peek() == ' ' || peek() == '\t')
            ++at_;
    }
    std::string name(bool metric) {
        const size_t start = at_;
        while (!done() && (std::isalnum(static_cast<unsigned char>(line_[at_])) ||
                           line_[at_] == '_' || (metric && line_[at_] == ':')))
            ++at_;
        std::string out(line_.substr(start, at_ - start));
        if (!valid_name(out, metric))
            fail(std::string("expected a ") + (metric ? "metric" : "label") + " name");
        return out;
    }
    std::string quoted() {
        if (!take('"'))
            fail("expected '\"' to open a label value");
        std::string out;
        while (true) {
            if (done())
                fail("unterminated label value");
            const char c = line_[at_++];
            if (c == '"')
                return out;
            if (c != '\\') {
                out += c;
                continue;
            }
            const char e = peek();
            ++at_;
            if (e == 'n')
                out += '\n';
            else if (e == '\\' || e == '"')
                out += e;
            else
                fail("bad escape in a label value");
        }
    }
    std::string_view rest() const { return line_.substr(std::min(at_, line_.size())); }

  private:
    std::string_view line_;
    size_t at_ = 0;
    std::string where_;
};

double read_sample_value(std::string_view text, const LineReader& reader) {
    const std::string token(text.substr(0, text.find_first_of(" \t")));
    if (token == "NaN")
        return std::numeric_limits<double>::quiet_NaN();
    if (token == "+Inf" || token == "Inf")
        return std::numeric_limits<double>::infinity();
    if (token == "-Inf")
        return -std::numeric_limits<double>::infinity();
    double value = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (token.empty() || error != std::errc() || end != token.data() + token.size())
        reader.fail("bad sample value '" + user_text::shown(token) + "'");
    return value;
}

}  // namespace

std::vector<MetricFamily> read_exposition(std::string_view text, const std::string& origin) {
    std::vector<MetricFamily> families;
    std::map<std::string, size_t> index;
    const auto family_of = [&](const std::string& name) -> MetricFamily& {
        auto [it, added] = index.emplace(name, families.size());
        if (added)
            families.push_back(MetricFamily{name, "", MetricType::kGauge, {}});
        return families[it->second];
    };
    size_t number = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++number;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        LineReader r(line, origin + ":" + std::to_string(number));
        r.skip_blanks();
        if (r.done())
            continue;
        if (r.take('#')) {
            r.skip_blanks();
            const std::string_view rest = r.rest();
            const bool help = rest.rfind("HELP ", 0) == 0, type = rest.rfind("TYPE ", 0) == 0;
            if (!help && !type)
                continue;  // a comment
            LineReader d(rest.substr(5), origin + ":" + std::to_string(number));
            d.skip_blanks();
            MetricFamily& f = family_of(d.name(true));
            d.skip_blanks();
            if (help)
                f.help = std::string(d.rest());
            else
                f.type = d.rest().rfind("counter", 0) == 0 ? MetricType::kCounter
                                                           : MetricType::kGauge;
            continue;
        }
        const std::string name = r.name(true);
        MetricSample sample;
        r.skip_blanks();
        if (r.take('{')) {
            r.skip_blanks();
            while (!r.take('}')) {
                std::string label = r.name(false);
                r.skip_blanks();
                if (!r.take('='))
                    r.fail("expected '=' after label " + label);
                r.skip_blanks();
                sample.labels.emplace_back(std::move(label), r.quoted());
                r.skip_blanks();
                if (!r.take(',') && r.peek() != '}')
                    r.fail("expected ',' or '}' after a label value");
                r.skip_blanks();
            }
        }
        r.skip_blanks();
        sample.value = read_sample_value(r.rest(), r);
        family_of(name).samples.push_back(std::move(sample));
    }
    return families;
}

}  // namespace migscope::exporter
