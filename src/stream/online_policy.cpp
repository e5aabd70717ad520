// migscope's online policy: change a GPU's layout when the jobs waiting there are predicted to end
// better after the change, its cost included.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "stream/policies.h"

namespace migscope::stream {

MinGain MinGain::all(double fraction) {
    MinGain m;
    m.by_bucket.fill(fraction);
    return m;
}

bool MinGain::uniform() const {
    return std::all_of(by_bucket.begin(), by_bucket.end(),
                       [&](double f) { return f == by_bucket.front(); });
}

std::string MinGain::text() const {
    if (uniform())
        return fmt::format("{:.1f} %", 100 * by_bucket.front());
    std::string out;
    for (size_t b = 0; b < by_bucket.size(); ++b) {
        out += fmt::format("{}{:.1f} % ({}{})", b ? ", " : "", 100 * by_bucket[b],
                           plan::gain_bucket_name(b), b ? "" : " partitions");
    }
    return out;
}

OnlineRepartition::OnlineRepartition(const plan::Problem& problem,
                                     const std::vector<StreamJob>& jobs, SimulationOptions options,
                                     StreamObjective objective, MinGain min_gain)
    : problem_(problem),
      jobs_(jobs),
      options_(options),
      objective_(objective),
      min_gain_(min_gain) {
    options_.series_bin_s = 0;  // its look-aheads need no series
    for (const double fraction : min_gain.by_bucket) {
        if (!(fraction >= 0) || !std::isfinite(fraction))
            throw input_error("online policy: the least gain must be a fraction >= 0");
    }
    candidates_.push_back(std::nullopt);
    for (mig::Layout& l : problem.layouts())
        candidates_.emplace_back(std::move(l));
}

std::vector<LayoutChange> OnlineRepartition::on_arrival(const StreamView& view) {
    std::vector<LayoutChange> changes;
    SimulationOptions one = options_;
    one.gpus = 1;
    // The arriving job counts on the GPU with the fewest jobs (the first of equals), where it
    // most likely goes: the simulator places it after the changes, where it is predicted to end
    // first.
    size_t newcomer_gpu = 0;
    for (size_t g = 1; g < view.waiting.size(); ++g) {
        if (view.waiting[g] < view.waiting[newcomer_gpu])
            newcomer_gpu = g;
    }
    for (size_t g = 0; g < view.layouts.size(); ++g) {
        const bool newcomer = view.arriving && g == newcomer_gpu;
        if (view.jobs[g].empty() && !newcomer)
            continue;
        // The GPU's jobs as they stand: running ones first, with their work left.
        std::vector<StreamJob> waiting;
        for (size_t i = 0; i < view.jobs[g].size(); ++i) {
            const StreamJob& j = jobs_[view.jobs[g][i]];
            StreamJob now{j.job, 0, {}};
            now.work_left = view.work_left[g][i];
            // Its deadline on the look-ahead's clock, which starts now (already past: negative).
            if (j.deadline_s)
                now.deadline_s = *j.deadline_s - view.now_s;
            waiting.push_back(now);
        }
        if (newcomer) {
            const StreamJob& j = jobs_[*view.arriving];
            StreamJob now{j.job, 0, {}};
            if (j.deadline_s)
                now.deadline_s = *j.deadline_s - view.now_s;
            waiting.push_back(now);
        }
        // On the current layout, the running jobs go on without a new start-up (approximately:
        // every job is placed afresh).
        std::vector<StreamJob> as_is = waiting;
        for (size_t i = 0; i < as_is.size(); ++i)
            as_is[i].startup_done = as_is[i].work_left < 1;
        StaticLayout current(view.layouts[g]);
        const double keep = score(simulate(problem_, as_is, current, one), objective_);
        double best = keep;
        const GpuLayout* choice = nullptr;
        for (const GpuLayout& layout : candidates_) {
            if (layout == view.layouts[g] || !holds_every_job(problem_, waiting, layout))
                continue;
            SimulationOptions changed = one;
            const size_t instances = (view.layouts[g] ? view.layouts[g]->instances.size() : 0) +
                                     (layout ? layout->instances.size() : 0);
            changed.initial_block_s = options_.reconfiguration.orchestrator_s +
                                      options_.reconfiguration.per_instance_s * double(instances);
            StaticLayout candidate(layout);
            const double s = score(simulate(problem_, waiting, candidate, changed), objective_);
            if (s < best) {
                best = s;
                choice = &layout;
            }
        }
        const auto partitions = [](const GpuLayout& l) {
            return l ? l->instances.size() : size_t{1};
        };
        if (choice && keep - best > min_gain_.for_partitions(std::max(partitions(view.layouts[g]),
                                                                      partitions(*choice))) *
                                        std::abs(keep))
            changes.push_back({g, *choice});
    }
    return changes;
}

}  // namespace migscope::stream
