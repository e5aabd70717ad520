// Splitting /proc/PID/cgroup text into paths and segments.
#include "exporter/cgroup.h"

#include <algorithm>

namespace migscope::exporter {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(separator, start), text.size());
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

}  // namespace

std::vector<std::string_view> cgroup_paths(std::string_view cgroup_text) {
    std::vector<std::string_view> paths;
    for (std::string_view line : split(cgroup_text, '\n')) {
        const size_t first = line.find(':');
        const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second != std::string_view::npos)
            paths.push_back(line.substr(second + 1));
    }
    return paths;
}

std::vector<std::string_view> path_segments(std::string_view path) {
    std::vector<std::string_view> segments;
    for (std::string_view s : split(path, '/')) {
        if (!s.empty())
            segments.push_back(s);
    }
    return segments;
}

}  // namespace migscope::exporter
