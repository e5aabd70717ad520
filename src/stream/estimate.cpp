// A stream's figures at the model's point and at the ends of its known error.
#include "stream/estimate.h"

#include <algorithm>

#include "stream/policies.h"

namespace migscope::stream {
namespace {

plan::Bounds span(double a, double b, double c) {
    return {std::min({a, b, c}), std::max({a, b, c})};
}

}  // namespace

StreamEstimate estimate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                        const PolicyFactory& make_policy, const SimulationOptions& options,
                        const plan::ModelError* error, double tardiness_weight_w) {
    StreamEstimate e;
    e.point = simulate(problem, jobs, *make_policy(), options);
    e.tardiness_weight_w = tardiness_weight_w;
    const auto combined = [&](const StreamResult& r) {
        return energy_tardiness_j(r, tardiness_weight_w);
    };
    const auto point_only = [&](std::string why) {
        e.unknown_why = std::move(why);
        e.energy_j = {e.point.energy_j, e.point.energy_j};
        e.mean_completion_s = {e.point.mean_completion_s, e.point.mean_completion_s};
        e.p95_completion_s = {e.point.p95_completion_s, e.point.p95_completion_s};
        e.tardiness_s = {e.point.tardiness_s, e.point.tardiness_s};
        e.energy_tardiness_j = {combined(e.point), combined(e.point)};
        for (size_t j = 0; j < jobs.size(); ++j) {
            const double c = e.point.jobs[j].end_s - jobs[j].arrival_s;
            e.job_completion_s.push_back({c, c});
        }
        return e;
    };
    if (!error)
        return point_only("no residuals (--model-error none)");
    using plan::ResidualKind;
    const plan::ErrorBand alone = plan::error_band(*error, ResidualKind::kSpeed, {"alone"});
    const plan::ErrorBand mix = plan::error_band(*error, ResidualKind::kSpeed, {"mix"});
    const plan::ErrorBand energy =
        plan::error_band(*error, ResidualKind::kDynamicEnergy, plan::group_chain("mix/plain"));
    if (!alone.known() || !mix.known() || !energy.known())
        return point_only("too few residuals for the speed (alone, mix) or energy bands");
    SimulationOptions slow = options, fast = options;
    slow.series_bin_s = fast.series_bin_s = 0;  // the series is the point's
    slow.speed_ratio_whole = alone.lo;
    slow.speed_ratio_partitioned = mix.lo;
    slow.dynamic_energy_ratio = energy.hi;
    fast.speed_ratio_whole = alone.hi;
    fast.speed_ratio_partitioned = mix.hi;
    fast.dynamic_energy_ratio = energy.lo;
    const StreamResult s = simulate(problem, jobs, *make_policy(), slow);
    const StreamResult f = simulate(problem, jobs, *make_policy(), fast);
    e.known = true;
    e.energy_j = span(e.point.energy_j, s.energy_j, f.energy_j);
    e.mean_completion_s = span(e.point.mean_completion_s, s.mean_completion_s, f.mean_completion_s);
    e.p95_completion_s = span(e.point.p95_completion_s, s.p95_completion_s, f.p95_completion_s);
    e.tardiness_s = span(e.point.tardiness_s, s.tardiness_s, f.tardiness_s);
    e.energy_tardiness_j = span(combined(e.point), combined(s), combined(f));
    for (size_t j = 0; j < jobs.size(); ++j) {
        e.job_completion_s.push_back(span(e.point.jobs[j].end_s - jobs[j].arrival_s,
                                          s.jobs[j].end_s - jobs[j].arrival_s,
                                          f.jobs[j].end_s - jobs[j].arrival_s));
    }
    return e;
}

}  // namespace migscope::stream
