// The activity report's one-line text form, written by the probe and read by the exporter.
#include "activity/report.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

namespace migscope::activity {
namespace {

constexpr std::string_view kMagic = "migscope-activity 1";
constexpr size_t kMaxUuidBytes = 96;
constexpr size_t kMaxJobBytes = 128;
// MPS takes whole percents; a thousandth keeps four decimals enough to read back.
constexpr double kMinSmShare = 0.001;

bool valid_uuid(std::string_view uuid) {
    if (uuid.empty() || uuid.size() > kMaxUuidBytes)
        return false;
    for (char c : uuid) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
            return false;
    }
    return true;
}

bool parse_u64(std::string_view text, uint64_t& out) {
    if (text.empty())
        return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

bool parse_share(std::string_view text, double& out) {
    // std::from_chars for double is in libstdc++ 11+; strtod would read past the view.
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size() &&
           std::isfinite(out) && out >= kMinSmShare && out <= 1;
}

}  // namespace

bool valid_job_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxJobBytes)
        return false;
    for (char c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' &&
            c != '+' && c != '-')
            return false;
    }
    return true;
}

uint64_t monotonic_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

std::string encode(const ActivityReport& r) {
    std::string line(kMagic);
    line += " gpu=" + r.gpu_uuid;
    line += " busy_ns=" + std::to_string(r.busy_ns);
    line += " kernels=" + std::to_string(r.kernels);
    line += " dropped=" + std::to_string(r.dropped);
    line += " started_ns=" + std::to_string(r.started_ns);
    line += " sent_ns=" + std::to_string(r.sent_ns);
    if (r.traced_ns)
        line += " traced_ns=" + std::to_string(*r.traced_ns);
    if (r.sm_share) {
        char share[32];
        std::snprintf(share, sizeof share, "%.4f", *r.sm_share);
        line += std::string(" sm_share=") + share;
    }
    if (!r.job.empty())
        line += " job=" + r.job;
    if (!r.records.empty())
        line += " records=" + r.records;
    return line;
}

std::optional<ActivityReport> decode(std::string_view line) {
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    if (line.substr(0, kMagic.size()) != kMagic)
        return std::nullopt;
    line.remove_prefix(kMagic.size());
    ActivityReport r;
    std::set<std::string_view> seen;
    while (!line.empty()) {
        if (line.front() != ' ')
            return std::nullopt;
        line.remove_prefix(1);
        const size_t end = line.find(' ');
        const std::string_view field = line.substr(0, end);
        line.remove_prefix(end == std::string_view::npos ? line.size() : end);
        const size_t eq = field.find('=');
        if (eq == std::string_view::npos)
            return std::nullopt;
        const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
        if (!seen.insert(key).second)
            return std::nullopt;
        bool ok = false;
        if (key == "gpu") {
            ok = valid_uuid(value);
            r.gpu_uuid = std::string(value);
        } else if (key == "busy_ns") {
            ok = parse_u64(value, r.busy_ns);
        } else if (key == "kernels") {
            ok = parse_u64(value, r.kernels);
        } else if (key == "dropped") {
            ok = parse_u64(value, r.dropped);
        } else if (key == "started_ns") {
            ok = parse_u64(value, r.started_ns);
        } else if (key == "sent_ns") {
            ok = parse_u64(value, r.sent_ns);
        } else if (key == "traced_ns") {
            uint64_t traced = 0;
            ok = parse_u64(value, traced);
            r.traced_ns = traced;
        } else if (key == "sm_share") {
            double share = 0;
            ok = parse_share(value, share);
            r.sm_share = share;
        } else if (key == "job") {
            ok = valid_job_name(value);
            r.job = std::string(value);
        } else if (key == "records") {
            ok = value == "kernels" || value == "kernels-sampled" || value == "graphs";
            r.records = std::string(value);
        }
        if (!ok)
            return std::nullopt;
    }
    for (std::string_view required :
         {"gpu", "busy_ns", "kernels", "dropped", "started_ns", "sent_ns"}) {
        if (!seen.count(required))
            return std::nullopt;
    }
    if (r.started_ns > r.sent_ns)
        return std::nullopt;
    return r;
}

}  // namespace migscope::activity
