// A simulated schedule as epochs of runs: the stretches of each layout, their steps and queues.
#include "stream/replay_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::stream {
namespace {

// The partitions of a layout in the simulator's order and words.
std::vector<std::string> partition_labels(const GpuLayout& layout) {
    if (!layout)
        return {"whole GPU"};
    std::vector<std::string> out;
    for (const mig::Instance& i : layout->instances)
        out.push_back(i.profile + "@" + std::to_string(i.start));
    return out;
}

// Steps of `steps` done once `left` of the work is left (rounded half up).
int64_t done_steps(int64_t steps, double left) {
    return std::llround(static_cast<double>(steps) * (1 - std::min(1.0, std::max(0.0, left))));
}

}  // namespace

std::vector<int64_t> replay_job_steps(const Trace& trace, const std::string& origin) {
    std::vector<int64_t> steps;
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
        const TraceJob& t = trace.jobs[i];
        const std::string path = user_text::shown(origin) + ": jobs[" + std::to_string(i) + "]";
        if (t.job.external())
            throw input_error(path +
                              ".command: a replay runs built-in workloads (their work in steps "
                              "is what the planner's model predicts)");
        if (!t.work_steps)
            throw input_error(path +
                              ".duration_s: a replay runs fixed work: give the job's work in "
                              "steps (work)");
        steps.push_back(*t.work_steps);
    }
    return steps;
}

ReplayPlan replay_plan(const StreamResult& result, const std::vector<StreamJob>& jobs,
                       const std::vector<int64_t>& job_steps) {
    if (job_steps.size() != jobs.size())
        throw input_error("replay: " + std::to_string(job_steps.size()) + " step counts for " +
                          std::to_string(jobs.size()) + " jobs");
    for (size_t j = 0; j < job_steps.size(); ++j) {
        if (job_steps[j] <= 0)
            throw input_error("replay: jobs[" + std::to_string(j) + "].work: must be > 0 steps");
    }
    ReplayPlan plan;
    std::vector<size_t> epoch_of(result.layouts.size(), SIZE_MAX);
    for (size_t e = 0; e < result.layouts.size(); ++e) {
        const LayoutEvent& l = result.layouts[e];
        if (l.gpu != 0)
            throw input_error("replay: the schedule uses GPU " + std::to_string(l.gpu) +
                              "; a replay runs one GPU's schedule (--gpus 1)");
        ReplayEpoch epoch;
        epoch.layout_event = e;
        epoch.layout = l.gpu_layout;
        epoch.partitions = partition_labels(l.gpu_layout);
        epoch.change_s = l.at_s;
        epoch.ready_s = l.ready_s;
        epoch_of[e] = plan.epochs.size();
        plan.epochs.push_back(std::move(epoch));
    }
    for (size_t s = 0; s < result.segments.size(); ++s) {
        const RunSegment& seg = result.segments[s];
        if (seg.job >= jobs.size() || seg.layout_event >= epoch_of.size())
            throw input_error("replay: a stretch of the schedule names no job or layout");
        const int64_t steps = done_steps(job_steps[seg.job], seg.work_left_to) -
                              done_steps(job_steps[seg.job], seg.work_left_from);
        if (steps <= 0)
            continue;
        ReplayEpoch& epoch = plan.epochs[epoch_of[seg.layout_event]];
        ReplayJob r;
        r.job = seg.job;
        r.segment = s;
        r.partition = seg.partition;
        r.steps = steps;
        r.arrival_s = jobs[seg.job].arrival_s;
        r.planned_start_s = seg.start_s;
        r.planned_end_s = seg.end_s;
        r.stopped = seg.stopped;
        for (size_t k = epoch.jobs.size(); k-- > 0;) {
            if (epoch.jobs[k].partition == r.partition) {
                r.after = k;
                break;
            }
        }
        epoch.jobs.push_back(r);
    }
    return plan;
}

double epoch_start_s(const ReplayEpoch& epoch, double previous_end_s) {
    const double change_s = std::max(epoch.change_s, previous_end_s);
    return change_s + std::max(0.0, epoch.ready_s - epoch.change_s);
}

}  // namespace migscope::stream
