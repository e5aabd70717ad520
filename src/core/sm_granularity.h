// How SMs group into green-context partitions, and the SM count a request gets: pure arithmetic
// shared by the worker (which asks the driver for the granularity) and the planner (which knows it
// per GPU model).
#pragma once

#include <algorithm>

namespace migscope {

// At least `min_sms` SMs per group, in multiples of `step_sms` (CUDA 13: compute capability 8.x
// 4 and 2; 9.0 and later 8 and 8).
struct SmGranularity {
    int min_sms = 1;
    int step_sms = 1;
};

// The SMs a request of `requested_sms` gets: rounded up to the granularity.
inline int rounded_sm_count(int requested_sms, SmGranularity granularity) {
    const int step = std::max(1, granularity.step_sms);
    const auto round_up = [step](int n) { return (n + step - 1) / step * step; };
    return std::max(round_up(std::max(1, requested_sms)), round_up(granularity.min_sms));
}

}  // namespace migscope
