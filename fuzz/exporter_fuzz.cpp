// Fuzz target: the exporter's untrusted text: /proc/PID/cgroup contents read into a pod UID and
// container id and a Slurm job id, process names (any bytes) written as label values and HELP
// text in the Prometheus text format, where each sample must stay one line of valid UTF-8 that
// reads back (by hand and by read_exposition), any text given to read_exposition, any datagram
// as an activity report, which must encode back to the same report, and the options an operator
// types: `--listen HOST:PORT`, whose address written reads back to itself, and a tenant
// query's `LABEL=VALUE`.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "activity/report.h"
#include "exporter/exposition.h"
#include "exporter/kubernetes.h"
#include "exporter/listen_socket.h"
#include "exporter/slurm.h"
#include "exporter/tenant_energy.h"
#include "fuzz_check.h"

namespace {

using migscope::fuzz::fail;

bool is_lower_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// What parse_pod_cgroup promises (kubernetes.h): a UID of 36 characters, lowercase hex digits and
// dashes; a container id empty (the pod's own cgroup) or at least 12 lowercase hex digits.
void check_pod_identity(const migscope::exporter::PodIdentity& pod, std::string_view text) {
    if (pod.pod_uid.size() != 36)
        fail("a pod UID that is not 36 characters long", pod.pod_uid.c_str());
    for (const char c : pod.pod_uid) {
        if (!is_lower_hex(c) && c != '-')
            fail("a pod UID with a character no UID has", pod.pod_uid.c_str());
    }
    if (!pod.container_id.empty() && pod.container_id.size() < 12)
        fail("a container id shorter than 12 digits", pod.container_id.c_str());
    for (const char c : pod.container_id) {
        if (!is_lower_hex(c))
            fail("a container id with a character no id has", pod.container_id.c_str());
    }
    if (text.find("kubepods") == std::string_view::npos)
        fail("a pod read from a cgroup text that names no kubepods", pod.pod_uid.c_str());
}

// RFC 3629 UTF-8, as Prometheus checks label values and HELP text: no overlong forms, no
// surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        size_t length = 0;
        unsigned code_point = 0;
        if (lead < 0x80) {
            ++i;
            continue;
        } else if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
            code_point = lead & 0x1F;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            code_point = lead & 0x0F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            code_point = lead & 0x07;
        } else {
            return false;
        }
        if (i + length > text.size())
            return false;
        for (size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80)
                return false;
            code_point = (code_point << 6) | (next & 0x3F);
        }
        const unsigned smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
        if (code_point < smallest || code_point > 0x10FFFF ||
            (code_point >= 0xD800 && code_point <= 0xDFFF))
            return false;
        i += length;
    }
    return true;
}

// A reader of the one family write_exposition writes here, as a scraper reads it: lines end at
// "\n" and nowhere else; a label value ends at its first unescaped quote.
class ExpositionReader {
  public:
    explicit ExpositionReader(std::string_view text) : text_(text) {}

    std::string_view next_line() {
        const size_t end = text_.find('\n');
        if (end == std::string_view::npos)
            fail("exposition text that does not end with a newline", std::string(text_).c_str());
        const std::string_view line = text_.substr(0, end);
        text_.remove_prefix(end + 1);
        return line;
    }
    bool at_end() const { return text_.empty(); }

    // HELP text after "# HELP NAME ": `\\` and `\n` are its only escapes.
    static std::string unescape_help(std::string_view escaped) {
        std::string out;
        for (size_t i = 0; i < escaped.size(); ++i) {
            if (escaped[i] != '\\') {
                out += escaped[i];
                continue;
            }
            if (++i == escaped.size())
                fail("HELP text that ends in a lone backslash", std::string(escaped).c_str());
            if (escaped[i] == '\\')
                out += '\\';
            else if (escaped[i] == 'n')
                out += '\n';
            else
                fail("HELP text with an escape the format does not have",
                     std::string(escaped).c_str());
        }
        return out;
    }

    // A sample line: NAME{label="value",...} VALUE. Returns the labels read and the value text.
    static migscope::exporter::Labels read_sample(std::string_view line, std::string_view name,
                                                  std::string& value_text) {
        const std::string copy(line);
        if (line.substr(0, name.size()) != name || line.size() <= name.size() ||
            line[name.size()] != '{')
            fail("a sample line that does not start with its name and labels", copy.c_str());
        size_t i = name.size() + 1;
        migscope::exporter::Labels labels;
        while (true) {
            const size_t equals = line.find('=', i);
            if (equals == std::string_view::npos || equals + 1 >= line.size() ||
                line[equals + 1] != '"')
                fail("a label without =\"", copy.c_str());
            std::string label_name(line.substr(i, equals - i));
            std::string value;
            i = equals + 2;
            while (true) {
                if (i >= line.size())
                    fail("a label value without its closing quote", copy.c_str());
                const char c = line[i++];
                if (c == '"')
                    break;
                if (c != '\\') {
                    value += c;
                    continue;
                }
                if (i >= line.size())
                    fail("a label value that ends in a lone backslash", copy.c_str());
                const char escaped = line[i++];
                if (escaped == '\\' || escaped == '"')
                    value += escaped;
                else if (escaped == 'n')
                    value += '\n';
                else
                    fail("a label value with an escape the format does not have", copy.c_str());
            }
            labels.emplace_back(std::move(label_name), std::move(value));
            if (i >= line.size())
                fail("labels without their closing brace", copy.c_str());
            if (line[i] == ',') {
                ++i;
                continue;
            }
            if (line[i] != '}')
                fail("labels followed by neither , nor }", copy.c_str());
            ++i;
            break;
        }
        if (i >= line.size() || line[i] != ' ')
            fail("a sample without a space before its value", copy.c_str());
        value_text = std::string(line.substr(i + 1));
        return labels;
    }

  private:
    std::string_view text_;
};

// What a value reads back as: the same text when it was valid UTF-8; otherwise valid UTF-8 (the
// writer replaces invalid bytes), never empty.
void check_read_back(const std::string& written, const std::string& read, const char* what) {
    if (valid_utf8(written)) {
        if (read != written)
            fail(what, "reads back as another value");
        return;
    }
    if (!valid_utf8(read))
        fail(what, "reads back as text that is not UTF-8");
    if (read.empty())
        fail(what, "a non-empty value reads back empty");
}

bool same_double(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// Writes one family whose HELP is `help` and whose one sample carries `values` (and the parsed
// pod, as the exporter labels a process) and `value`; reads it back.
void check_exposition(const std::string& help, const std::vector<std::string>& values,
                      double value) {
    using namespace migscope::exporter;
    MetricFamily family{"migscope_fuzz_joules_total", help, MetricType::kCounter, {}};
    Labels labels;
    for (size_t i = 0; i < values.size(); ++i)
        labels.emplace_back("label_" + std::to_string(i), values[i]);
    family.samples.push_back({labels, value});
    std::string text;
    if (!migscope::fuzz::accepts([&] { text = write_exposition({family}); }))
        fail("write_exposition refused label values or HELP text", help.c_str());
    if (!valid_utf8(text))
        fail("an exposition that is not UTF-8 (Prometheus refuses the scrape)", text.c_str());

    ExpositionReader reader(text);
    const std::string help_prefix = "# HELP " + family.name + ' ';
    const std::string_view help_line = reader.next_line();
    if (help_line.substr(0, help_prefix.size()) != help_prefix)
        fail("a HELP line that does not start with # HELP NAME", std::string(help_line).c_str());
    check_read_back(help, ExpositionReader::unescape_help(help_line.substr(help_prefix.size())),
                    "HELP text");
    if (reader.next_line() != "# TYPE " + family.name + " counter")
        fail("a TYPE line that is not # TYPE NAME counter", text.c_str());
    std::string value_text;
    const Labels read = ExpositionReader::read_sample(reader.next_line(), family.name, value_text);
    if (!reader.at_end())
        fail("one sample written as more than one line", text.c_str());
    if (read.size() != labels.size())
        fail("a sample read back with another number of labels", text.c_str());
    for (size_t i = 0; i < labels.size(); ++i) {
        if (read[i].first != labels[i].first)
            fail("a label read back under another name", text.c_str());
        check_read_back(labels[i].second, read[i].second, "a label value");
    }
    char* end = nullptr;
    const double read_value = std::strtod(value_text.c_str(), &end);
    if (value_text.empty() || *end != '\0' || !same_double(read_value, value))
        fail("a sample value that does not read back", value_text.c_str());
    // migscope's own reader (`migscope energy`) reads the same labels and value.
    std::vector<MetricFamily> back;
    if (!migscope::fuzz::accepts([&] { back = read_exposition(text, "fuzz"); }))
        fail("read_exposition refused what write_exposition wrote", text.c_str());
    if (back.size() != 1 || back[0].samples.size() != 1 || back[0].samples[0].labels != read ||
        !same_double(back[0].samples[0].value, read_value) || back[0].type != MetricType::kCounter)
        fail("read_exposition reads another family than the hand reader", text.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace migscope;
    const std::string text(reinterpret_cast<const char*>(data), size);

    std::optional<exporter::PodIdentity> pod;
    if (!fuzz::accepts([&] { pod = exporter::parse_pod_cgroup(text); }))
        fail("parse_pod_cgroup threw an input error (it returns none instead)", text.c_str());
    if (pod)
        check_pod_identity(*pod, text);
    // A Slurm job id is 1-20 digits (slurm.h), found only under Slurm's cgroup tree.
    if (const auto job = exporter::parse_slurm_job_cgroup(text)) {
        if (job->empty() || job->size() > 20 ||
            job->find_first_not_of("0123456789") != std::string::npos)
            fail("a Slurm job id that is not 1-20 digits", job->c_str());
        if (text.find("slurm") == std::string::npos)
            fail("a Slurm job read from a cgroup text that names no slurm", job->c_str());
    }
    // Any datagram as an activity report: a report read encodes and reads back the same.
    if (const auto report = activity::decode(text)) {
        const auto again = activity::decode(activity::encode(*report));
        if (!again || again->gpu_uuid != report->gpu_uuid || again->busy_ns != report->busy_ns ||
            again->sent_ns != report->sent_ns || again->started_ns != report->started_ns ||
            again->sent_ns < again->started_ns ||
            again->sm_share.has_value() != report->sm_share.has_value())
            fail("an activity report that does not read back after encoding", text.c_str());
    }
    // Any text as a scrape: read, or refused as an input error.
    fuzz::accepts([&] { exporter::read_exposition(text, "fuzz"); });
    // Any text as --listen: a port 0-65535, and the address as messages write it reads back.
    exporter::ListenAddress address;
    if (fuzz::accepts([&] { address = exporter::parse_listen_address(text); })) {
        const std::string written = exporter::address_text(address.host, address.port);
        exporter::ListenAddress back;
        if (address.port < 0 || address.port > 65535 ||
            !fuzz::accepts([&] { back = exporter::parse_listen_address(written); }) ||
            back.host != address.host || back.port != address.port)
            fail("a --listen address that does not read back as written", written.c_str());
    }
    fuzz::accepts([&] { exporter::parse_label_match(text, "--match"); });

    // Label values as the exporter writes them for a process: the whole input as its command
    // (a process may name itself with any bytes but NUL), each NUL-separated piece, and the pod.
    std::vector<std::string> values{text};
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = std::min(text.find('\0', start), text.size());
        if (end > start && (start > 0 || end < text.size()))
            values.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    if (pod) {
        values.push_back(pod->pod_uid);
        if (!pod->container_id.empty())
            values.push_back(pod->container_id);
    }
    double value = static_cast<double>(size);
    if (size >= sizeof(double))
        std::memcpy(&value, data, sizeof(double));
    check_exposition(text, values, value);
    return 0;
}
