// Trace windows of a sampling probe: clipping and their total length.
#include "activity/trace_windows.h"

#include <algorithm>

namespace migscope::activity {

void TraceWindows::add(uint64_t start_ns, uint64_t end_ns) {
    if (end_ns < start_ns || (!windows_.empty() && start_ns < windows_.back().second))
        return;
    windows_.emplace_back(start_ns, end_ns);
    traced_ns_ += end_ns - start_ns;
    if (windows_.size() > kKeptWindows)
        windows_.pop_front();
}

std::vector<std::pair<uint64_t, uint64_t>> TraceWindows::clip(uint64_t start_ns,
                                                              uint64_t end_ns) const {
    std::vector<std::pair<uint64_t, uint64_t>> parts;
    for (const auto& [from_ns, to_ns] : windows_) {
        const uint64_t a = std::max(start_ns, from_ns), b = std::min(end_ns, to_ns);
        if (a < b)
            parts.emplace_back(a, b);
    }
    return parts;
}

}  // namespace migscope::activity
