// Small statistics over measured values: percentiles of step times, clocks and the like.
#pragma once
#include <optional>
#include <vector>

namespace migscope {

// Linear-interpolated percentile (q in [0, 1]) of unsorted values; empty for no values.
std::optional<double> percentile(std::vector<double> values, double q);

}  // namespace migscope
