// A simulated stream schedule executed for real (`migscope stream replay`): one run cell of fixed
// work per layout epoch (stream/replay_plan.h), each job's stretch on its partition in the
// simulator's order, none before its arrival; the measured start, end and energy of every job
// on the replay's clock, and the totals the simulator predicts (docs/streams.md, "Replaying a
// schedule").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "partition/job.h"
#include "runner/cell.h"
#include "stream/estimate.h"
#include "stream/replay_plan.h"

namespace migscope::runner {

struct ReplayRequest {
    partition::BackendKind backend = partition::BackendKind::kGreen;  // green, mps or cpu
    stream::ReplayPlan plan;
    std::vector<partition::JobSpec> jobs;   // per stream job (the trace's order)
    std::vector<stream::StreamJob> stream;  // their arrivals and deadlines
    std::string run_dir;                    // each epoch's run cell in RUN_DIR/epoch-K
    std::string label;
};

// A replay runs on partitions of SMs or CPU cores: green, mps or cpu. An input error naming
// --backend and `name` (the backend as the user gave it) for any other.
void check_replay_backend(partition::BackendKind backend, const std::string& name);

// One job over the whole replay. Times on the replay's clock (the trace's: arrivals count from
// 0, the first epoch's work starts at 0).
struct ReplayedJob {
    size_t job = 0;
    std::vector<size_t> epochs;  // where it ran (ReplayResult::epochs)
    int64_t steps = 0;           // measured, over its stretches
    std::optional<double> start_s, end_s;
    std::optional<double> energy_j;  // attributed, summed over its stretches (all measured)
    JobStatus status = JobStatus::kOk;
    std::string message;
};

struct ReplayedEpoch {
    size_t epoch = 0;    // ReplayPlan::epochs
    std::string layout;  // as run ("3g.71gb@0+2g.35gb@4"; whole GPU: its full profile; cpu: "")
    size_t jobs = 0;
    double change_s = 0;  // the layout changed: the simulator's time, or later when the work
                          // before it ended later
    double start_s = 0;   // its work started: change_s plus the change's cost
    double window_s = 0;  // measured: its fixed work's makespan
    std::optional<double> energy_j;  // the board's over the window (energy counter)
    std::optional<double> idle_power_w;
    std::optional<int64_t> run_id;  // in the store, when there is one
    std::string run_dir;
    std::vector<std::string> warnings;
};

struct ReplayResult {
    std::vector<ReplayedJob> jobs;      // per stream job
    std::vector<ReplayedEpoch> epochs;  // the epochs that ran jobs
    double horizon_s = 0;               // the last job's end
    // Measured in the epochs' windows, summed (none when an epoch measured none).
    std::optional<double> window_energy_j;
    // The replay's seconds outside the windows (layout changes, idle between epochs), charged at
    // the measured idle power (the epochs' mean idle with clocks up): the simulator charges idle
    // power there too.
    double gap_s = 0;
    std::optional<double> idle_power_w;
    std::optional<double> energy_j;  // window_energy_j + gap_s x idle_power_w
    double mean_completion_s = 0, p95_completion_s = 0, tardiness_s = 0;  // over ended jobs
    size_t late_jobs = 0;
    bool interrupted = false;
    bool all_ok() const;
};

// Each job's start after its epoch's start (stream::epoch_start_s): its arrival less that start
// (0 when it arrived before). Pure: the part of replay_schedule that tests check alone.
std::vector<double> start_after_s(const stream::ReplayEpoch& epoch,
                                  const std::vector<stream::StreamJob>& stream, double start_s);

// One epoch as a run cell's request (the partitions it uses, each job's place, queue, steps and
// start; the whole GPU on green and mps: the model's full profile; on cpu: equal core shares).
CellRequest epoch_request(const ReplayRequest& r, const stream::ReplayEpoch& epoch,
                          const mig::GpuModel* model, double start_s, std::string& layout_text);

// Runs every epoch with jobs through run_cell (its runs stored in `db` when given), in order,
// after checking every epoch's cell first (check_cell: an input error before anything runs).
// Stops after an interrupted epoch (the jobs not yet run have no end).
ReplayResult replay_schedule(const Machine& machine, const Measurement& m, const ReplayRequest& r,
                             store::Store* db, const RunHooks& hooks);

// The simulator's figures against the replay's: per job its predicted start, end and completion
// with the completion's interval; totals with theirs, and whether each measure lies inside.
struct ReplayCheck {
    std::string figure;  // "energy_j", "mean_completion_s", "p95_completion_s", "tardiness_s"
    double predicted = 0;
    plan::Bounds interval;
    bool interval_known = false;
    std::optional<double> measured;
    std::optional<bool> inside;  // none when not measured or no interval
};
std::vector<ReplayCheck> replay_checks(const stream::StreamEstimate& estimate,
                                       const ReplayResult& replay);

}  // namespace migscope::runner
