// The static policies, and the search of the best static layout for a stream.
#include "stream/policies.h"

#include <cmath>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::stream {

std::string StaticLayout::name() const {
    return "static " + plan::describe(plan::GpuPlan{layout_, {}});
}

const std::vector<std::string>& stream_objective_names() {
    static const std::vector<std::string> names = {"energy", "completion", "energy-tardiness"};
    return names;
}

StreamObjective parse_stream_objective(const std::string& text, double tardiness_weight_w) {
    if (!(tardiness_weight_w >= 0) || !std::isfinite(tardiness_weight_w))
        throw input_error(
            "--tardiness-weight-w: the weight of a late second must be a power in W, "
            "finite and >= 0");
    StreamObjective objective;
    objective.tardiness_weight_w = tardiness_weight_w;
    if (text == "energy")
        objective.kind = StreamObjective::Kind::kEnergy;
    else if (text == "completion")
        objective.kind = StreamObjective::Kind::kMeanCompletion;
    else if (text == "energy-tardiness")
        objective.kind = StreamObjective::Kind::kEnergyTardiness;
    else
        throw input_error("--objective: unknown stream objective '" + user_text::shown(text) +
                          "' (" + text::join(stream_objective_names(), ", ") + ")");
    return objective;
}

double energy_tardiness_j(const StreamResult& result, double tardiness_weight_w) {
    return result.energy_j + tardiness_weight_w * result.tardiness_s;
}

double score(const StreamResult& result, const StreamObjective& objective) {
    switch (objective.kind) {
        case StreamObjective::Kind::kEnergy:
            return result.energy_j;
        case StreamObjective::Kind::kMeanCompletion:
            return result.mean_completion_s;
        case StreamObjective::Kind::kEnergyTardiness:
            return energy_tardiness_j(result, objective.tardiness_weight_w);
    }
    return result.energy_j;
}

bool holds_every_job(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                     const GpuLayout& layout) {
    std::vector<size_t> sizes;
    if (layout) {
        for (const mig::Instance& i : layout->instances)
            sizes.push_back(problem.size_index(i.profile));
    } else {
        sizes.push_back(problem.whole());
    }
    for (const StreamJob& j : jobs) {
        bool fits = false;
        for (size_t s : sizes)
            fits = fits || problem.jobs[j.job].on[s].usable;
        if (!fits)
            return false;
    }
    return true;
}

StaticChoice best_static_layout(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                                const SimulationOptions& options,
                                const StreamObjective& objective) {
    std::vector<GpuLayout> candidates = {std::nullopt};
    for (mig::Layout& l : problem.layouts())
        candidates.emplace_back(std::move(l));
    StaticChoice best;
    bool have = false;
    for (const GpuLayout& layout : candidates) {
        if (!holds_every_job(problem, jobs, layout))
            continue;
        StaticLayout policy(layout);
        SimulationOptions search = options;
        search.series_bin_s = 0;  // a search needs no series
        StreamResult result = simulate(problem, jobs, policy, search);
        ++best.tried;
        if (!have || score(result, objective) < score(best.result, objective)) {
            best.layout = layout;
            best.result = std::move(result);
            have = true;
        }
    }
    if (!have)
        throw input_error("stream: no layout holds every job");
    return best;
}

}  // namespace migscope::stream
