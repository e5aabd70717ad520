// Energy attribution: static power by partition size, dynamic energy by SM-seconds of activity.
#include "runner/attribution.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/error.h"

namespace migscope::runner {
namespace {

std::vector<double> shares(const std::vector<double>& weights) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<double> out(weights.size(), weights.empty() ? 0.0 : 1.0 / weights.size());
    if (total > 0) {
        for (size_t i = 0; i < weights.size(); ++i)
            out[i] = weights[i] / total;
    }
    return out;
}

}  // namespace

Attribution attribute_energy(const AttributionInput& in) {
    const size_t n = in.partition_sms.size();
    if (in.busy_s.size() != n || (!in.partition_share.empty() && in.partition_share.size() != n))
        throw runtime_error("attribution: partition sizes, busy times and shares differ in length");
    Attribution a;
    a.energy_j.assign(n, 0.0);
    if (n == 0)
        return a;
    std::vector<double> activity(n);
    for (size_t i = 0; i < n; ++i)
        activity[i] = in.partition_sms[i] * std::clamp(in.busy_s[i], 0.0, in.duration_s);
    const bool active = std::accumulate(activity.begin(), activity.end(), 0.0) > 0;
    std::vector<double> static_weight = in.partition_sms;
    for (size_t i = 0; i < n && !in.partition_share.empty(); ++i)
        static_weight[i] *= in.partition_share[i];
    const std::vector<double> by_size = shares(static_weight);
    const std::vector<double> by_activity = active ? shares(activity) : by_size;

    if (in.idle_power_w) {
        a.idle_energy_j = std::clamp(*in.idle_power_w * in.duration_s, 0.0, in.energy_j);
        char method[256];
        std::snprintf(method, sizeof method,
                      "idle power (%.0f W, measured before the run) × window split by partition "
                      "size; the rest by partition size × busy seconds",
                      *in.idle_power_w);
        a.method = method;
    } else {
        a.method = "no idle power measured: all energy split by partition size × busy seconds";
    }
    const double dynamic_j = in.energy_j - a.idle_energy_j;
    for (size_t i = 0; i < n; ++i)
        a.energy_j[i] = a.idle_energy_j * by_size[i] + dynamic_j * by_activity[i];
    if (!active)
        a.method += " (no job was busy: split by partition size)";
    return a;
}

}  // namespace migscope::runner
