// Percentiles.
#include "core/statistics.h"

#include <algorithm>

namespace migscope {

std::optional<double> percentile(std::vector<double> values, double q) {
    if (values.empty())
        return std::nullopt;
    std::sort(values.begin(), values.end());
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace migscope
