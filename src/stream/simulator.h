// A discrete-event simulator of training jobs that keep arriving at N GPUs whose layouts a policy
// chooses and changes, built on the planner's model (plan/model.h): each job's time, start-up,
// power and memory traffic on each partition size, and the same phases of a mix (phase_rate:
// interference, the power cap's clock, shared memory bandwidth) and wait of jobs starting together
// on green partitions (plan/start_delay.h) that plan predicts a batch with.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "mig/layout.h"
#include "plan/model.h"

namespace migscope::stream {

// One job of a stream: a job of the Problem (its workload and work), when it arrives, and when
// it is due.
struct StreamJob {
    size_t job = 0;  // index into Problem::jobs
    double arrival_s = 0;
    std::optional<double> deadline_s;
    // For a policy's look-ahead at jobs already under way: the fraction of the work still to do,
    // and whether its start-up is paid (it goes on without one until a layout change stops it).
    double work_left = 1;
    bool startup_done = false;
};

// What changing a GPU's layout costs (docs/streams.md, "Reconfiguration"). Each job stopped by the
// change keeps its progress (a checkpoint) and pays its measured start-up again where it resumes.
struct ReconfigurationCost {
    double per_instance_s = 0.2;  // creating or destroying one GPU instance (A100: 0.05-0.3 s)
    double orchestrator_s = 60;   // the orchestrator's own part (mig-manager: tens of s to ~2 min)
};

// A GPU's layout: none is the whole GPU, not partitioned.
using GpuLayout = std::optional<mig::Layout>;

// What a policy sees when it decides.
struct StreamView {
    double now_s = 0;
    std::vector<GpuLayout> layouts;  // per GPU, current
    std::vector<size_t> waiting;     // per GPU: jobs queued or running
    // Per GPU: those jobs (stream indices, running first) and the fraction of each one's work
    // still to do.
    std::vector<std::vector<size_t>> jobs;
    std::vector<std::vector<double>> work_left;
    // The job arriving now (a stream index): not in `jobs` yet; it is placed after the policy's
    // changes.
    std::optional<size_t> arriving;
};

struct LayoutChange {
    size_t gpu = 0;
    GpuLayout layout;
};

// A policy chooses the GPUs' layouts at the start and may change them when a job arrives. Jobs go
// to the partition where they are predicted to end first (simulator.cpp, dispatch), whatever the
// policy. Policies are small named units: stream/policies.h.
class Policy {
  public:
    virtual ~Policy() = default;
    virtual std::string name() const = 0;
    virtual std::vector<GpuLayout> initial_layouts(size_t gpus) = 0;
    // Whether on_arrival decides anything: a policy that never does spares the simulator the
    // view of every GPU at each arrival.
    virtual bool decides_on_arrival() const { return true; }
    virtual std::vector<LayoutChange> on_arrival(const StreamView& view) {
        (void)view;
        return {};
    }
};

struct SimulationOptions {
    size_t gpus = 1;
    ReconfigurationCost reconfiguration;
    // Measured / predicted ratios applied to every job (the model's known error, for intervals):
    // its speed on a partitioned GPU and on a whole one, and the dynamic energy.
    double speed_ratio_partitioned = 1, speed_ratio_whole = 1, dynamic_energy_ratio = 1;
    // Seconds every GPU spends in a layout change before anything runs (a policy's look-ahead at
    // a change it considers).
    double initial_block_s = 0;
    // The figures over time, at the end of each bin of this many seconds (StreamResult::series);
    // 0: none. Bins twice as long, as often as needed to keep at most kMaxSeriesBins.
    double series_bin_s = 0;
    // One GPU only: per stream job, the partition it waits for (its index in the layout's
    // instances, 0 the whole GPU), whatever the others (a schedule replayed as it was planned,
    // replay_estimate.h). Empty: each job goes where it is predicted to end first.
    std::vector<size_t> pinned_partition;
};

inline constexpr size_t kMaxSeriesBins = 2000;

// A stream's figures from 0 to the end of one bin: what a plot of energy and tardiness over time
// draws (the layout changes are StreamResult::layouts).
struct SeriesPoint {
    double end_s = 0;     // the bin's end; the last bin ends at the horizon
    double energy_j = 0;  // drawn from 0 to end_s: every GPU's idle power and the jobs' dynamic
    // Late seconds accrued by end_s: the sum over jobs with a deadline of
    // max(0, min(job's end, end_s) - deadline); the last is StreamResult::tardiness_s.
    double tardiness_s = 0;
    size_t jobs_done = 0;  // ended by end_s
};

struct JobOutcome {
    size_t gpu = 0;
    std::string partition;  // its last partition: "2g.35gb@4" or "whole GPU"
    double start_s = 0, end_s = 0;
    unsigned restarts = 0;  // times a layout change stopped it
};

// One stretch of a job on one partition: from when it started there to when it ended or a
// layout change stopped it. A job has one per start (JobOutcome::restarts + 1); they are what a
// replay of the schedule runs (stream/replay_plan.h).
struct RunSegment {
    size_t job = 0;  // stream job
    size_t gpu = 0;
    size_t partition = 0;     // in the GPU's layout then: its instances' order (0: the whole GPU)
    std::string label;        // "2g.35gb@4" or "whole GPU"
    size_t layout_event = 0;  // StreamResult::layouts' entry of the layout it ran on
    double start_s = 0, end_s = 0;
    // The fraction of the job's work still to do when the stretch began and when it ended.
    double work_left_from = 1, work_left_to = 0;
    bool stopped = false;  // a layout change stopped it
};

struct LayoutEvent {
    double at_s = 0;
    size_t gpu = 0;
    std::string layout;  // plan::describe's words
    GpuLayout gpu_layout;  // the layout itself (none: whole)
    // When the GPU runs jobs again: at_s plus the change's cost (the first layout's:
    // SimulationOptions::initial_block_s).
    double ready_s = 0;
};

struct StreamResult {
    std::string policy;
    double horizon_s = 0;  // from 0 to the last job's end: every GPU draws idle power throughout
    double energy_j = 0;
    double mean_completion_s = 0, p95_completion_s = 0;  // end - arrival
    double tardiness_s = 0;                               // summed over jobs with a deadline
    size_t late_jobs = 0;
    double busy_fraction = 0;  // of GPU-seconds with at least one job running
    size_t reconfigurations = 0;
    std::vector<JobOutcome> jobs;  // per stream job
    std::vector<LayoutEvent> layouts;
    // Every job's stretches on partitions, in the order they began (ties: GPU, then partition).
    std::vector<RunSegment> segments;
    std::vector<SeriesPoint> series;  // empty unless SimulationOptions::series_bin_s > 0
    double series_bin_s = 0;          // their bins' length: the option's, doubled as needed
};

// A stream's completion figures from its jobs' ends: over the jobs that ended (an end of none
// leaves the job out), the mean and 95th percentile of end - arrival, and the late seconds past
// their deadlines.
struct CompletionFigures {
    double mean_completion_s = 0, p95_completion_s = 0;
    double tardiness_s = 0;
    size_t late_jobs = 0;
};
CompletionFigures completion_figures(const std::vector<StreamJob>& jobs,
                                     const std::vector<std::optional<double>>& end_s);

// Runs the stream to its last job's end. Jobs must be sorted by arrival (an input error names the
// first out of order); a job that no partition of any GPU can hold when it arrives is an input
// error naming it and the layouts.
StreamResult simulate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                      Policy& policy, const SimulationOptions& options);

}  // namespace migscope::stream
