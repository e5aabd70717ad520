// The static policies, and the search of the best static layout for a stream.
#include "stream/policies.h"

#include "core/error.h"

namespace migscope::stream {

std::string StaticLayout::name() const {
    return "static " + plan::describe(plan::GpuPlan{layout_, {}});
}

StreamObjective parse_stream_objective(const std::string& text) {
    if (text == "energy")
        return StreamObjective::kEnergy;
    if (text == "completion")
        return StreamObjective::kMeanCompletion;
    throw input_error("unknown stream objective '" + text + "' (energy, completion)");
}

double score(const StreamResult& result, StreamObjective objective) {
    return objective == StreamObjective::kEnergy ? result.energy_j : result.mean_completion_s;
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
                                const SimulationOptions& options, StreamObjective objective) {
    std::vector<GpuLayout> candidates = {std::nullopt};
    for (mig::Layout& l : problem.layouts())
        candidates.emplace_back(std::move(l));
    StaticChoice best;
    bool have = false;
    for (const GpuLayout& layout : candidates) {
        if (!holds_every_job(problem, jobs, layout))
            continue;
        StaticLayout policy(layout);
        StreamResult result = simulate(problem, jobs, policy, options);
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
