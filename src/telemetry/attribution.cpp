// Energy attribution: static power by partition size, dynamic energy by each job's marginal power
// plus a busy-time share of the rest (or, without marginal powers, by SM-seconds).
#include "telemetry/attribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"

namespace migscope::telemetry {
namespace {

double sum(const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
}

std::vector<double> shares(const std::vector<double>& weights) {
    const double total = sum(weights);
    std::vector<double> out(weights.size(), weights.empty() ? 0.0 : 1.0 / weights.size());
    if (total > 0) {
        for (size_t i = 0; i < weights.size(); ++i)
            out[i] = weights[i] / total;
    }
    return out;
}

// Marginal power × busy seconds plus the rest by busy seconds; negative shares become zero and
// the positive ones are scaled so that the dynamic energy is kept.
std::vector<double> by_marginal_power(double dynamic_j, double duration_s,
                                      const std::vector<double>& without_w,
                                      const std::vector<double>& busy_s, double& rest_j) {
    const size_t n = without_w.size();
    const double mix_w = duration_s > 0 ? dynamic_j / duration_s : 0;
    std::vector<double> marginal_j(n);
    for (size_t i = 0; i < n; ++i)
        marginal_j[i] = std::max(0.0, mix_w - without_w[i]) * busy_s[i];
    rest_j = dynamic_j - sum(marginal_j);
    const std::vector<double> by_busy = shares(busy_s);
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i)
        out[i] = std::max(0.0, marginal_j[i] + rest_j * by_busy[i]);
    const double kept = sum(out);
    for (double& e : out)
        e = kept > 0 ? e * dynamic_j / kept : 0;
    return out;
}

}  // namespace

Attribution attribute_energy(const AttributionInput& in) {
    const size_t n = in.partition_sms.size();
    if (in.busy_s.size() != n || (!in.partition_share.empty() && in.partition_share.size() != n) ||
        (!in.without_dynamic_w.empty() && in.without_dynamic_w.size() != n))
        throw runtime_error(
            "attribution: partition sizes, busy times, shares and marginal powers differ in "
            "length");
    Attribution a;
    a.energy_j.assign(n, 0.0);
    if (n == 0)
        return a;
    std::vector<double> busy(n), activity(n);
    for (size_t i = 0; i < n; ++i) {
        busy[i] = std::clamp(in.busy_s[i], 0.0, in.duration_s);
        activity[i] = in.partition_sms[i] * busy[i];
    }
    const bool active = sum(activity) > 0;
    std::vector<double> static_weight = in.partition_sms;
    for (size_t i = 0; i < n && !in.partition_share.empty(); ++i)
        static_weight[i] *= in.partition_share[i];
    const std::vector<double> by_size = shares(static_weight);

    if (in.idle_power_w) {
        a.idle_energy_j = std::clamp(*in.idle_power_w * in.duration_s, 0.0, in.energy_j);
        a.method = fmt::format("static: idle power ({:.0f} W, {}) × window, split by partition "
                               "size; ",
                               *in.idle_power_w, in.idle_source);
    } else {
        a.method = "no idle power measured, all energy is dynamic; ";
    }
    const double dynamic_j = in.energy_j - a.idle_energy_j;
    const bool marginal = !in.without_dynamic_w.empty() && active &&
                          std::all_of(in.without_dynamic_w.begin(), in.without_dynamic_w.end(),
                                      [](double w) { return std::isfinite(w); });
    std::vector<double> dynamic_share(n);
    if (marginal) {
        double rest_j = 0;
        dynamic_share =
            by_marginal_power(dynamic_j, in.duration_s, in.without_dynamic_w, busy, rest_j);
        a.rest_j = rest_j;
        a.method += fmt::format(
            "dynamic: each job's marginal power (the mix's minus the mix's without it, from a "
            "{}) × busy seconds, the rest ({:+.0f} J, {:+.0f} % of the dynamic energy) split by "
            "busy seconds",
            in.without_source, rest_j, dynamic_j > 0 ? 100.0 * rest_j / dynamic_j : 0.0);
    } else if (active) {
        const std::vector<double> by_activity = shares(activity);
        for (size_t i = 0; i < n; ++i)
            dynamic_share[i] = dynamic_j * by_activity[i];
        a.method += "dynamic: by partition size × busy seconds (no marginal powers: "
                    "--marginal-probe splits it by what each job draws)";
    } else {
        for (size_t i = 0; i < n; ++i)
            dynamic_share[i] = dynamic_j * by_size[i];
        a.method += "dynamic: no job was busy, split by partition size";
    }
    for (size_t i = 0; i < n; ++i)
        a.energy_j[i] = a.idle_energy_j * by_size[i] + dynamic_share[i];
    return a;
}

}  // namespace migscope::telemetry
