// Each consumer's own dynamic power, learned live: a regression of the board's dynamic power on the
// consumers' activities over recent intervals, so that a job drawing more watts per unit of SM
// activity (a matmul job against a light CNN) is charged for it. Bounded memory; pure (the
// exporter feeds it, attribution.h uses what it learns as marginal powers).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace migscope::telemetry {

struct PowerRegressionOptions {
    // Intervals fade with this time constant: exp(-age / memory_s) is an interval's weight.
    double memory_s = 600;
    // Ridge toward the pooled watts per unit of activity (all consumers alike, the split by
    // activity), as a fraction of the mean diagonal of the normal matrix: where the intervals
    // cannot tell consumers apart (they were always active together in the same proportion), each
    // keeps the pooled figure.
    double ridge = 0.002;
    // Weighted intervals with activity the estimate needs before it is used.
    double min_weight = 20;
    size_t max_consumers = 256;  // beyond this the split stays by activity (bounded memory)
};

// One interval of one GPU: each consumer's activity (0-1, of the whole GPU) and the board's
// dynamic power (average power minus the static power).
struct PowerObservation {
    double duration_s = 0;
    double dynamic_w = 0;
    std::vector<std::pair<std::string, double>> activity;  // consumer key, activity
};

class PowerRegression {
  public:
    explicit PowerRegression(PowerRegressionOptions options = {});
    // Adds an interval. Consumers not in it leave the regression (a process that exited); an
    // interval without activity teaches nothing.
    void add(const PowerObservation& observation);
    // Each consumer's dynamic power at full activity (W), in `keys` order; none until enough
    // intervals were seen, or for more consumers than max_consumers. At least 0.
    std::optional<std::vector<double>> full_activity_power_w(
        const std::vector<std::string>& keys) const;
    double weight() const { return weight_; }  // the fading count of intervals with activity

  private:
    void drop(size_t index);
    PowerRegressionOptions options_;
    std::vector<std::string> keys_;                  // regression order
    std::map<std::string, size_t> index_;            // key -> position in keys_
    std::vector<std::vector<double>> normal_;        // sum w x x^T
    std::vector<double> moment_;                     // sum w x y
    double pooled_power_ = 0, pooled_activity_ = 0;  // sum w y, sum w (sum_i x_i)
    double weight_ = 0;
};

}  // namespace migscope::telemetry
