// Reading a Slurm job id out of cgroup paths.
#include "exporter/slurm.h"

#include <algorithm>

#include "exporter/cgroup.h"

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
    for (std::string_view path : cgroup_paths(cgroup_text)) {
        bool under_slurm = false;
        for (std::string_view segment : path_segments(path)) {
            if (!under_slurm)
                under_slurm = is_slurm_root(segment);
            else if (auto id = job_id_of(segment))
                return id;
        }
    }
    return std::nullopt;
}

}  // namespace migscope::exporter
