// Monotonic time helpers: one steady clock for every timestamp migscope records.
#pragma once

#include <chrono>

namespace migscope {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

inline double seconds_between(SteadyTime from, SteadyTime to) {
    return std::chrono::duration<double>(to - from).count();
}

}  // namespace migscope
