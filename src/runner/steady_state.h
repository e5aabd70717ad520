// When a job is in steady state: the spread of its most recent step times is small.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace migscope::runner {

struct SteadyStateCriterion {
    size_t window_steps = 5;  // the most recent measured steps looked at
    double max_cv = 0.10;     // their coefficient of variation (stddev / mean) at most this
};

struct SteadyCheck {
    bool steady = false;
    std::optional<double> cv;  // of the last window_steps steps; empty while too few steps
};

// `step_times_s`: the job's measured (post-warm-up) step times, oldest first.
SteadyCheck check_steady(const std::vector<double>& step_times_s,
                         const SteadyStateCriterion& criterion);

}  // namespace migscope::runner
