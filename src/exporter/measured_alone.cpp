// Each process's power alone, from the intervals in which it ran alone.
#include "exporter/measured_alone.h"

#include <algorithm>
#include <set>
#include <vector>

namespace migscope::exporter {

void MeasuredPowersAlone::observe(const IntervalInput& input) {
    std::set<std::string> listed;
    const ConsumerActivity* alone = nullptr;
    int active = 0;
    for (const ConsumerActivity& c : input.consumers) {
        listed.insert(c.consumer.key);
        if (has_activity(c)) {
            ++active;
            alone = &c;
        }
    }
    for (auto it = alone_w_.begin(); it != alone_w_.end();)
        it = listed.count(it->first) ? std::next(it) : alone_w_.erase(it);
    if (input.sharing != Sharing::kShared || !input.idle_power_w || !(input.duration_s > 0) ||
        active != 1)
        return;
    // An MPS client's activity is its kernel time × its SM share: how busy it was is the first.
    const double share = alone->sm_share.value_or(1.0);
    if (!(share > 0) || *alone->activity_ratio / share < kMinActivity)
        return;
    const double dynamic_w = input.energy_j / input.duration_s - *input.idle_power_w;
    if (!(dynamic_w >= 0))
        return;
    std::deque<double>& kept = alone_w_[alone->consumer.key];
    kept.push_back(dynamic_w);
    if (kept.size() > kKept)
        kept.pop_front();
}

std::optional<double> MeasuredPowersAlone::dynamic_w(const std::string& key) const {
    const auto it = alone_w_.find(key);
    if (it == alone_w_.end() || it->second.size() < kMinIntervals)
        return std::nullopt;
    std::vector<double> w(it->second.begin(), it->second.end());
    std::sort(w.begin(), w.end());
    const size_t n = w.size();
    return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

}  // namespace migscope::exporter
