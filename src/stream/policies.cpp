// The static policies, and the search of the best static layout for a stream.
#include "stream/policies.h"

#include <cmath>
#include <stdexcept>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::stream {

std::string StaticLayout::name() const {
    return kind_ + " " + plan::describe(plan::GpuPlan{layout_, {}});
}

double energy_tardiness_j(const StreamResult& result, double tardiness_weight_w) {
    return result.energy_j + tardiness_weight_w * result.tardiness_s;
}

const std::vector<StreamObjectiveDefinition>& stream_objectives() {
    using Kind = StreamObjective::Kind;
    static const std::vector<StreamObjectiveDefinition> objectives = {
        {Kind::kEnergy, "energy", [](const StreamResult& r, double) { return r.energy_j; },
         {plan::Objective::kEnergy}, false},
        {Kind::kMeanCompletion, "completion",
         [](const StreamResult& r, double) { return r.mean_completion_s; },
         {plan::Objective::kMakespan}, false},
        // Energy and time both: the wider of their bands.
        {Kind::kEnergyTardiness, "energy-tardiness", energy_tardiness_j,
         {plan::Objective::kEnergy, plan::Objective::kMakespan}, true},
    };
    return objectives;
}

const StreamObjectiveDefinition& definition(StreamObjective::Kind kind) {
    for (const StreamObjectiveDefinition& d : stream_objectives()) {
        if (d.kind == kind)
            return d;
    }
    throw std::logic_error("a stream objective without its definition");
}

const std::vector<std::string>& stream_objective_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const StreamObjectiveDefinition& d : stream_objectives())
            out.push_back(d.name);
        return out;
    }();
    return names;
}

StreamObjective parse_stream_objective(const std::string& text, double tardiness_weight_w) {
    if (!(tardiness_weight_w >= 0) || !std::isfinite(tardiness_weight_w))
        throw input_error(
            "--tardiness-weight-w: the weight of a late second must be a power in W, "
            "finite and >= 0");
    for (const StreamObjectiveDefinition& d : stream_objectives()) {
        if (d.name == text)
            return {d.kind, tardiness_weight_w};
    }
    throw input_error("--objective: unknown stream objective '" + user_text::shown(text) + "' (" +
                      text::join(stream_objective_names(), ", ") + ")");
}

double score(const StreamResult& result, const StreamObjective& objective) {
    return definition(objective.kind).score(result, objective.tardiness_weight_w);
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
