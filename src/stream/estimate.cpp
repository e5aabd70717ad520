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

std::optional<ErrorEnds> error_ends(const plan::ModelError* error, const SimulationOptions& options,
                                    std::string& unknown_why) {
    if (!error) {
        unknown_why = "no residuals (--model-error none)";
        return std::nullopt;
    }
    using plan::ResidualKind;
    const plan::ErrorBand alone = plan::error_band(*error, ResidualKind::kSpeed, {"alone"});
    const plan::ErrorBand mix = plan::error_band(*error, ResidualKind::kSpeed, {"mix"});
    const plan::ErrorBand energy =
        plan::error_band(*error, ResidualKind::kDynamicEnergy, plan::group_chain("mix/plain"));
    if (!alone.known() || !mix.known() || !energy.known()) {
        unknown_why = "too few residuals for the speed (alone, mix) or energy bands";
        return std::nullopt;
    }
    ErrorEnds ends{options, options};
    ends.slow.series_bin_s = ends.fast.series_bin_s = 0;  // the series is the point's
    ends.slow.speed_ratio_whole = alone.lo;
    ends.slow.speed_ratio_partitioned = mix.lo;
    ends.slow.dynamic_energy_ratio = energy.hi;
    ends.fast.speed_ratio_whole = alone.hi;
    ends.fast.speed_ratio_partitioned = mix.hi;
    ends.fast.dynamic_energy_ratio = energy.lo;
    return ends;
}

StreamEstimate spanned(StreamResult point, const StreamResult& s, const StreamResult& f,
                       const std::vector<StreamJob>& jobs, double tardiness_weight_w) {
    StreamEstimate e;
    e.point = std::move(point);
    e.known = true;
    e.tardiness_weight_w = tardiness_weight_w;
    const auto combined = [&](const StreamResult& r) {
        return energy_tardiness_j(r, tardiness_weight_w);
    };
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

StreamEstimate point_only(StreamResult point, const std::vector<StreamJob>& jobs,
                          double tardiness_weight_w, std::string why) {
    StreamEstimate e = spanned(point, point, point, jobs, tardiness_weight_w);
    e.known = false;
    e.unknown_why = std::move(why);
    return e;
}

StreamEstimate estimate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                        const PolicyFactory& make_policy, const SimulationOptions& options,
                        const plan::ModelError* error, double tardiness_weight_w) {
    StreamResult point = simulate(problem, jobs, *make_policy(), options);
    std::string why;
    const std::optional<ErrorEnds> ends = error_ends(error, options, why);
    if (!ends)
        return point_only(std::move(point), jobs, tardiness_weight_w, why);
    const StreamResult s = simulate(problem, jobs, *make_policy(), ends->slow);
    const StreamResult f = simulate(problem, jobs, *make_policy(), ends->fast);
    return spanned(std::move(point), s, f, jobs, tardiness_weight_w);
}

}  // namespace migscope::stream
