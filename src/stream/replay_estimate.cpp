// A replayed schedule's figures at the model's point and at the ends of its known error.
#include "stream/replay_estimate.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/error.h"
#include "stream/policies.h"

namespace migscope::stream {

StreamResult replay_run(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                        const ReplayPlan& plan, const std::vector<int64_t>& job_steps,
                        const SimulationOptions& options) {
    if (job_steps.size() != jobs.size())
        throw input_error("replay: " + std::to_string(job_steps.size()) + " jobs' steps for " +
                          std::to_string(jobs.size()) + " jobs");
    StreamResult out;
    out.jobs.resize(jobs.size());
    std::vector<std::optional<double>> ends(jobs.size());
    std::vector<bool> started(jobs.size(), false);
    double previous_end_s = 0, windows_s = 0, windows_j = 0;
    for (const ReplayEpoch& epoch : plan.epochs) {
        const double start_s = epoch_start_s(epoch, previous_end_s);
        previous_end_s = start_s;
        if (epoch.jobs.empty())
            continue;
        // The epoch's stretches as a stream of their own on its start's clock, in the order
        // they arrive there and, on one partition, in the replay's order (its queue).
        std::vector<size_t> order(epoch.jobs.size());
        std::iota(order.begin(), order.end(), size_t{0});
        const auto arrival = [&](size_t k) {
            return std::max(0.0, jobs.at(epoch.jobs[k].job).arrival_s - start_s);
        };
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return arrival(a) < arrival(b); });
        std::vector<StreamJob> stretches;
        SimulationOptions o = options;
        o.gpus = 1;
        o.initial_block_s = 0;
        o.series_bin_s = 0;
        o.pinned_partition.clear();
        for (size_t k : order) {
            const ReplayJob& r = epoch.jobs[k];
            StreamJob s;
            s.job = jobs[r.job].job;
            s.arrival_s = arrival(k);
            s.work_left = static_cast<double>(r.steps) / static_cast<double>(job_steps.at(r.job));
            stretches.push_back(s);
            o.pinned_partition.push_back(r.partition);
        }
        StaticLayout layout(epoch.layout);
        const StreamResult run = simulate(problem, stretches, layout, o);
        for (size_t i = 0; i < order.size(); ++i) {
            const size_t job = epoch.jobs[order[i]].job;
            JobOutcome& j = out.jobs[job];
            if (!started[job])
                j.start_s = start_s + run.jobs[i].start_s;
            started[job] = true;
            j.end_s = std::max(j.end_s, start_s + run.jobs[i].end_s);
            j.partition = run.jobs[i].partition;
            ends[job] = j.end_s;
        }
        previous_end_s = start_s + run.horizon_s;
        windows_s += run.horizon_s;
        windows_j += run.energy_j;
    }
    out.horizon_s = previous_end_s;
    // Between the epochs' work (changes, waits) the GPU idles, as the simulator charges it.
    out.energy_j = windows_j + problem.idle_power_w * std::max(0.0, out.horizon_s - windows_s);
    const CompletionFigures c = completion_figures(jobs, ends);
    out.mean_completion_s = c.mean_completion_s;
    out.p95_completion_s = c.p95_completion_s;
    out.tardiness_s = c.tardiness_s;
    out.late_jobs = c.late_jobs;
    return out;
}

StreamEstimate replay_estimate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                               const StreamResult& schedule, const ReplayPlan& plan,
                               const std::vector<int64_t>& job_steps,
                               const SimulationOptions& options, const plan::ModelError* error,
                               double tardiness_weight_w) {
    std::string why;
    const std::optional<ErrorEnds> ends = error_ends(error, options, why);
    if (!ends)
        return point_only(schedule, jobs, tardiness_weight_w, why);
    return spanned(schedule, replay_run(problem, jobs, plan, job_steps, ends->slow),
                   replay_run(problem, jobs, plan, job_steps, ends->fast), jobs,
                   tardiness_weight_w);
}

}  // namespace migscope::stream
