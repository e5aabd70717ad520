// Energy attribution: static power by partition size (or of the GPU's capacity, or to idle),
// dynamic energy by each job's marginal power plus a busy-time share of the rest (or, without
// marginal powers, by SM-seconds; with no activity by partition size or unattributed).
#include "telemetry/attribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

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

void require_non_negative(double value, const std::string& field) {
    if (!std::isfinite(value) || value < 0)
        throw input_error("attribution: " + field + " must be a finite number >= 0, not " +
                          std::to_string(value));
}

void check(const AttributionInput& in) {
    const size_t n = in.partition_sms.size();
    if (in.busy_s.size() != n || (!in.partition_share.empty() && in.partition_share.size() != n) ||
        (!in.without_dynamic_w.empty() && in.without_dynamic_w.size() != n))
        throw input_error(
            "attribution: partition sizes, busy times, shares and marginal powers differ in "
            "length");
    require_non_negative(in.energy_j, "energy_j");
    require_non_negative(in.duration_s, "duration_s");
    if (in.idle_power_w)
        require_non_negative(*in.idle_power_w, "idle_power_w");
    for (size_t i = 0; i < n; ++i)
        require_non_negative(in.partition_sms[i], "partition_sms[" + std::to_string(i) + "]");
    if (in.static_share == StaticShare::kOfCapacity && !(std::isfinite(in.capacity) &&
                                                         in.capacity > 0))
        throw input_error("attribution: capacity must be > 0 to split static power of it");
}

// The static energy per job, and the part no job holds.
std::vector<double> static_parts(const AttributionInput& in, double static_j,
                                 double& unowned_j) {
    const size_t n = in.partition_sms.size();
    std::vector<double> weight = in.partition_sms;
    for (size_t i = 0; i < n && !in.partition_share.empty(); ++i)
        weight[i] *= in.partition_share[i];
    std::vector<double> out(n, 0.0);
    unowned_j = 0;
    switch (in.static_share) {
        case StaticShare::kByPartitionSize: {
            if (n == 0) {
                unowned_j = static_j;
                break;
            }
            const std::vector<double> by_size = shares(weight);
            for (size_t i = 0; i < n; ++i)
                out[i] = static_j * by_size[i];
            break;
        }
        case StaticShare::kOfCapacity: {
            // Sizes over the capacity (a broken reading could exceed it: then by share of the
            // sizes held, and nothing unowned).
            const double held = sum(weight);
            const double denominator = std::max(in.capacity, held);
            for (size_t i = 0; i < n; ++i)
                out[i] = static_j * weight[i] / denominator;
            unowned_j = static_j * (denominator - held) / denominator;
            break;
        }
        case StaticShare::kUnowned:
            unowned_j = static_j;
            break;
    }
    return out;
}

const char* static_words(StaticShare share) {
    switch (share) {
        case StaticShare::kByPartitionSize:
            return "split by partition size";
        case StaticShare::kOfCapacity:
            return "split by partition size of the GPU's capacity, what no one holds to idle";
        case StaticShare::kUnowned:
            return "to idle (no process holds a partition)";
    }
    return "";
}

}  // namespace

Attribution attribute_energy(const AttributionInput& in) {
    check(in);
    const size_t n = in.partition_sms.size();
    Attribution a;
    a.energy_j.assign(n, 0.0);
    std::vector<double> busy(n), activity(n);
    for (size_t i = 0; i < n; ++i) {
        busy[i] = std::isfinite(in.busy_s[i]) ? std::clamp(in.busy_s[i], 0.0, in.duration_s) : 0.0;
        activity[i] = in.partition_sms[i] * busy[i];
    }
    const bool active = sum(activity) > 0;

    if (in.idle_power_w) {
        a.idle_energy_j = std::clamp(*in.idle_power_w * in.duration_s, 0.0, in.energy_j);
        a.method = fmt::format("static: idle power ({:.0f} W, {}) × window, {}; ",
                               *in.idle_power_w, in.idle_source, static_words(in.static_share));
    } else {
        a.method = "no idle power measured, all energy is dynamic; ";
    }
    const std::vector<double> static_j = static_parts(in, a.idle_energy_j, a.unowned_j);
    const double dynamic_j = in.energy_j - a.idle_energy_j;
    const bool marginal = !in.without_dynamic_w.empty() && active &&
                          std::all_of(in.without_dynamic_w.begin(), in.without_dynamic_w.end(),
                                      [](double w) { return std::isfinite(w); });
    std::vector<double> dynamic_share(n, 0.0);
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
        a.method += in.without_activity == WithoutActivity::kUnattributed
                        ? "dynamic: by partition size × measured activity (no marginal powers: "
                          "live, nothing can be paused to probe)"
                        : "dynamic: by partition size × busy seconds (no marginal powers: "
                          "--marginal-probe splits it by what each job draws)";
    } else if (in.without_activity == WithoutActivity::kUnattributed || n == 0) {
        a.unattributed_j = dynamic_j;
        a.method += "dynamic: no consumer was measured busy, unattributed";
    } else {
        std::vector<double> weight = in.partition_sms;
        for (size_t i = 0; i < n && !in.partition_share.empty(); ++i)
            weight[i] *= in.partition_share[i];
        const std::vector<double> by_size = shares(weight);
        for (size_t i = 0; i < n; ++i)
            dynamic_share[i] = dynamic_j * by_size[i];
        a.method += "dynamic: no job was busy, split by partition size";
    }
    for (size_t i = 0; i < n; ++i)
        a.energy_j[i] = static_j[i] + dynamic_share[i];
    return a;
}

}  // namespace migscope::telemetry
