// Energy over a window: board counter delta, integrated power trace, and how far they disagree.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/sample.h"

namespace migscope::telemetry {

// Trapezoidal integral of (time_s, power_w) points, which must be sorted by time.
double integrate_trapezoid(const std::vector<std::pair<double, double>>& points);

struct EnergySummary {
    double duration_s = 0;
    size_t power_samples = 0;                  // trace points inside the window, ends included
    std::optional<double> max_gap_s;           // longest gap between trace points
    std::optional<double> counter_energy_j;    // energy counter at end - at start
    std::optional<double> trace_energy_j;      // integral of the power trace
    std::optional<double> disagreement_pct;    // (trace - counter) / counter
    std::optional<double> average_power_w;     // counter energy / duration (else trace)
    std::optional<double> peak_power_w;        // highest trace point
    bool trace_is_one_second_average = false;  // no instant power: the 1 s average was integrated
    std::vector<std::string> warnings;
};

// Summarises the window [start.time, end.time]: `start` and `end` are reads taken at the window's
// edges; `trace` may hold samples outside the window, which are ignored.
EnergySummary summarize_window(const std::vector<Sample>& trace, const Sample& start,
                               const Sample& end);

}  // namespace migscope::telemetry
