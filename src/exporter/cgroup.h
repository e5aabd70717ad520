// The lines of /proc/PID/cgroup ("hierarchy-id:controllers:path", v1 or v2) as the paths they
// name, split into segments: what the pod and Slurm-job readers walk.
#pragma once

#include <string_view>
#include <vector>

namespace migscope::exporter {

// Each line's path, in order (lines without two ':' are left out).
std::vector<std::string_view> cgroup_paths(std::string_view cgroup_text);
// A path's non-empty segments: "/a//b/" gives a, b.
std::vector<std::string_view> path_segments(std::string_view path);

}  // namespace migscope::exporter
