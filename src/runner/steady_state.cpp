// Steady-state criterion over step times.
#include "runner/steady_state.h"

#include <algorithm>
#include <cmath>

namespace migscope::runner {

SteadyCheck check_steady(const std::vector<double>& step_times_s,
                         const SteadyStateCriterion& criterion) {
    const size_t n = std::max<size_t>(criterion.window_steps, 2);
    if (step_times_s.size() < n)
        return {};
    double sum = 0;
    for (size_t i = step_times_s.size() - n; i < step_times_s.size(); ++i)
        sum += step_times_s[i];
    const double mean = sum / static_cast<double>(n);
    double squares = 0;
    for (size_t i = step_times_s.size() - n; i < step_times_s.size(); ++i)
        squares += (step_times_s[i] - mean) * (step_times_s[i] - mean);
    const double cv = mean > 0 ? std::sqrt(squares / static_cast<double>(n - 1)) / mean : 0.0;
    return {cv <= criterion.max_cv, cv};
}

}  // namespace migscope::runner
