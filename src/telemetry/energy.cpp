// Window energy from the counter and from the trace, with the disagreement between them.
#include "telemetry/energy.h"

#include <algorithm>
#include <cmath>

namespace migscope::telemetry {

double integrate_trapezoid(const std::vector<std::pair<double, double>>& points) {
    double energy_j = 0;
    for (size_t i = 1; i < points.size(); ++i) {
        const double dt = points[i].first - points[i - 1].first;
        energy_j += 0.5 * (points[i].second + points[i - 1].second) * dt;
    }
    return energy_j;
}

EnergySummary summarize_window(const std::vector<Sample>& trace, const Sample& start,
                               const Sample& end) {
    EnergySummary s;
    s.duration_s = seconds_between(start.time, end.time);
    if (s.duration_s <= 0) {
        s.warnings.push_back("empty window: nothing measured");
        return s;
    }

    // Instant power when every point has it; otherwise fall back to the 1 s average.
    std::vector<const Sample*> points{&start};
    for (const Sample& x : trace) {
        if (x.time > start.time && x.time < end.time)
            points.push_back(&x);
    }
    points.push_back(&end);
    std::stable_sort(points.begin(), points.end(),
                     [](const Sample* a, const Sample* b) { return a->time < b->time; });
    const bool all_instant = std::all_of(points.begin(), points.end(), [](const Sample* x) {
        return x->power_instant_w.has_value();
    });
    s.trace_is_one_second_average = !all_instant;
    std::vector<std::pair<double, double>> curve;
    for (const Sample* x : points) {
        std::optional<double> w = all_instant ? x->power_instant_w : x->power_average_w;
        if (w)
            curve.emplace_back(seconds_between(start.time, x->time), *w);
    }
    s.power_samples = curve.size();
    if (curve.size() >= 2) {
        s.trace_energy_j = integrate_trapezoid(curve);
        double gap = 0, peak = curve.front().second;
        for (size_t i = 1; i < curve.size(); ++i) {
            gap = std::max(gap, curve[i].first - curve[i - 1].first);
            peak = std::max(peak, curve[i].second);
        }
        s.max_gap_s = gap;
        s.peak_power_w = peak;
        if (s.trace_is_one_second_average) {
            s.warnings.push_back("no instant power field: integrated the driver's 1 s average");
        }
    } else {
        s.warnings.push_back("fewer than two power readings in the window: no trace energy");
    }

    if (start.energy_j && end.energy_j) {
        if (*end.energy_j >= *start.energy_j) {
            s.counter_energy_j = *end.energy_j - *start.energy_j;
        } else {
            s.warnings.push_back(
                "energy counter went backwards (driver reload?): no counter energy");
        }
    } else {
        s.warnings.push_back("energy counter unavailable: trace energy only");
    }

    if (s.counter_energy_j && s.trace_energy_j && *s.counter_energy_j > 0) {
        s.disagreement_pct =
            100.0 * (*s.trace_energy_j - *s.counter_energy_j) / *s.counter_energy_j;
    }
    if (s.counter_energy_j) {
        s.average_power_w = *s.counter_energy_j / s.duration_s;
    } else if (s.trace_energy_j) {
        s.average_power_w = *s.trace_energy_j / s.duration_s;
    }
    return s;
}

}  // namespace migscope::telemetry
