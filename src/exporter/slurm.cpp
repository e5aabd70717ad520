// Reading a Slurm job id out of cgroup paths.
#include "exporter/slurm.h"

#include <algorithm>

namespace migscope::exporter {
namespace {

bool ends_with(std::string_view text, std::string_view tail) {
    return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

// "slurm" or "slurm_NODE" (v1), "slurmstepd.scope" or "NODE_slurmstepd.scope" (v2).
bool is_slurm_root(std::string_view segment) {
    return segment == "slurm" || segment.substr(0, 6) == "slurm_" ||
           ends_with(segment, "slurmstepd.scope");
}

std::optional<std::string> job_id_of(std::string_view segment) {
    if (segment.substr(0, 4) != "job_")
        return std::nullopt;
    const std::string_view digits = segment.substr(4);
    if (digits.empty() || digits.size() > 20 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::string(digits);
}

}  // namespace

std::optional<std::string> parse_slurm_job_cgroup(std::string_view cgroup_text) {
    size_t line_start = 0;
    while (line_start < cgroup_text.size()) {
        size_t line_end = cgroup_text.find('\n', line_start);
        if (line_end == std::string_view::npos)
            line_end = cgroup_text.size();
        const std::string_view line = cgroup_text.substr(line_start, line_end - line_start);
        line_start = line_end + 1;
        // hierarchy-id:controllers:path
        const size_t first = line.find(':');
        const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos)
            continue;
        std::string_view path = line.substr(second + 1);
        bool under_slurm = false;
        while (!path.empty()) {
            const size_t slash = path.find('/');
            const std::string_view segment = path.substr(0, slash);
            path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
            if (!under_slurm) {
                under_slurm = is_slurm_root(segment);
            } else if (auto id = job_id_of(segment)) {
                return id;
            }
        }
    }
    return std::nullopt;
}

}  // namespace migscope::exporter
