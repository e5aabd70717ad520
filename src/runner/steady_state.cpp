// Steady-state criterion over step times, and percentiles of step times.
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

std::optional<double> percentile(std::vector<double> values, double q) {
    if (values.empty())
        return std::nullopt;
    std::sort(values.begin(), values.end());
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace migscope::runner
