// The union of kernel intervals, batch by batch.
#include "activity/busy_time.h"

#include <algorithm>

namespace migscope::activity {

void BusyTime::add(uint64_t start_ns, uint64_t end_ns) {
    if (end_ns < start_ns)
        return;
    batch_.emplace_back(start_ns, end_ns);
}

void BusyTime::flush() {
    std::sort(batch_.begin(), batch_.end());
    for (const auto& [start_ns, end_ns] : batch_) {
        const uint64_t from_ns = std::max(start_ns, covered_until_ns_);
        if (end_ns > from_ns)
            busy_ns_ += end_ns - from_ns;
        covered_until_ns_ = std::max(covered_until_ns_, end_ns);
        ++kernels_;
    }
    batch_.clear();
}

}  // namespace migscope::activity
