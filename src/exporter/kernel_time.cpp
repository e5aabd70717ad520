// Kernel busy-time ratios from the probe's cumulative reports.
#include "exporter/kernel_time.h"

#include <algorithm>

namespace migscope::exporter {

std::optional<double> KernelTimeRatios::ratio(unsigned pid, const activity::ActivityReport& r,
                                              uint64_t now_ns) {
    if (now_ns > r.sent_ns && now_ns - r.sent_ns > kStaleAfterNs)
        return std::nullopt;
    auto it = last_.find(pid);
    if (it != last_.end() && it->second.sent_ns == r.sent_ns &&
        it->second.started_ns == r.started_ns)
        return it->second.ratio;
    const bool from_last = it != last_.end() && it->second.started_ns == r.started_ns &&
                           it->second.sent_ns < r.sent_ns && it->second.busy_ns <= r.busy_ns &&
                           it->second.traced_ns <= r.traced_ns.value_or(0);
    const Last base = from_last ? it->second : Last{0, r.started_ns, r.started_ns, 0, 0};
    // The time the busy delta was counted in: the records' time on for a sampling probe, else
    // the time between the sendings.
    const uint64_t counted_ns =
        r.traced_ns ? *r.traced_ns - base.traced_ns : r.sent_ns - base.sent_ns;
    if (r.traced_ns && counted_ns == 0 && from_last) {  // no records on since the last report
        it->second.sent_ns = r.sent_ns;
        return it->second.ratio;
    }
    double ratio = 0;
    if (counted_ns > 0 && r.busy_ns >= base.busy_ns)
        ratio = std::clamp(
                    static_cast<double>(r.busy_ns - base.busy_ns) / static_cast<double>(counted_ns),
                    0.0, 1.0) *
                r.sm_share.value_or(1.0);
    last_[pid] = Last{r.busy_ns, r.sent_ns, r.started_ns, r.traced_ns.value_or(0), ratio};
    return ratio;
}

void KernelTimeRatios::forget_except(const std::set<unsigned>& live) {
    for (auto it = last_.begin(); it != last_.end();)
        it = live.count(it->first) ? std::next(it) : last_.erase(it);
}

}  // namespace migscope::exporter
