// Steady-state criterion over chunks of step times (steady_state.h says why chunks).
#include "runner/steady_state.h"

#include <algorithm>
#include <cmath>

namespace migscope::runner {

SteadyCheck check_steady(const std::vector<double>& step_times_s,
                         const SteadyStateCriterion& criterion) {
    const size_t n = std::max<size_t>(criterion.window_chunks, 2);
    // Mean step time of each chunk, newest chunk first.
    std::vector<double> means;
    means.reserve(n);
    double chunk_sum = 0;
    size_t chunk_steps = 0;
    for (size_t i = step_times_s.size(); i-- > 0 && means.size() < n;) {
        chunk_sum += step_times_s[i];
        ++chunk_steps;
        if (chunk_sum >= criterion.min_chunk_s) {
            means.push_back(chunk_sum / static_cast<double>(chunk_steps));
            chunk_sum = 0;
            chunk_steps = 0;
        }
    }
    if (means.size() < n)
        return {};
    double sum = 0;
    for (double m : means)
        sum += m;
    const double mean = sum / static_cast<double>(n);
    double squares = 0;
    for (double m : means)
        squares += (m - mean) * (m - mean);
    const double cv = mean > 0 ? std::sqrt(squares / static_cast<double>(n - 1)) / mean : 0.0;
    return {cv <= criterion.max_cv, cv};
}

}  // namespace migscope::runner
