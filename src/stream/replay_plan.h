// A policy's simulated schedule on one GPU as runs to execute for real (`migscope stream
// replay`, runner/stream_replay.h): one run per layout (an epoch, from one layout change to the
// next), in it each job's stretch on its partition with its share of the work in steps, the job
// before it on that partition, and the arrival it must not start before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stream/simulator.h"
#include "stream/trace.h"

namespace migscope::stream {

// One job's stretch on one partition of an epoch's layout.
struct ReplayJob {
    size_t job = 0;        // stream job (the trace's index)
    size_t segment = 0;    // StreamResult::segments
    size_t partition = 0;  // in the epoch's layout: its instances' order (0: the whole GPU)
    int64_t steps = 0;     // its share of the job's work, > 0
    // The job before it on its partition in this epoch (an index into ReplayEpoch::jobs): it
    // starts when that one has ended.
    std::optional<size_t> after;
    double arrival_s = 0;                           // it starts no earlier (the trace's clock)
    double planned_start_s = 0, planned_end_s = 0;  // the simulator's, on the trace's clock
    bool stopped = false;  // the next layout change stops it: the rest of its work follows
};

struct ReplayEpoch {
    size_t layout_event = 0;  // StreamResult::layouts
    GpuLayout layout;         // none: the whole GPU
    // The layout's partitions in order, as the simulator labels them ("2g.35gb@4"; "whole GPU").
    std::vector<std::string> partitions;
    double change_s = 0;          // when the simulator changed to this layout (0: the first)
    double ready_s = 0;           // when jobs may run on it: change_s plus the change's cost
    std::vector<ReplayJob> jobs;  // in the order they start in the simulation
};

struct ReplayPlan {
    std::vector<ReplayEpoch> epochs;  // every layout the GPU had, in time order
};

// An epoch's start on the replay's clock: its layout changes at its simulated change time, or
// when the previous epoch's work ended if that is later, and its work starts after the change's
// simulated cost.
double epoch_start_s(const ReplayEpoch& epoch, double previous_end_s);

// Each trace job's work in steps: a replay runs built-in workloads' fixed work, whose steps the
// planner's model predicts. An input error naming `origin` and the job ("trace.json: jobs[2]
// .command: ...") for a job that runs a command or whose amount is a duration.
std::vector<int64_t> replay_job_steps(const Trace& trace, const std::string& origin);

// The schedule of `result` (simulated on one GPU, with its segments) as epochs. `job_steps` is
// each stream job's work in steps (the trace's `work`). A stretch's steps are the simulator's
// fraction of the work done in it, rounded so that a job's stretches add up to its steps; a
// stretch rounded to no step is left out (the job did less than half a step there). Input error
// when the schedule has jobs on more than one GPU or `job_steps` does not match the jobs.
ReplayPlan replay_plan(const StreamResult& result, const std::vector<StreamJob>& jobs,
                       const std::vector<int64_t>& job_steps);

}  // namespace migscope::stream
