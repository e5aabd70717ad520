// Profiling for the planner: each job alone on each partition size (SM partitions sized like the
// MIG profiles, through green contexts or MPS, or MIG instances; sequential for the whole GPU),
// stored in a results store; `plan::profiles_from_runs` turns them into profiles. Built-in jobs
// are measured over a short steady-state window; an external command runs once to its end
// (its work is its whole run, start-up included).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "runner/cell.h"
#include "store/store.h"

namespace migscope::runner {

struct ProfileRequest {
    std::vector<partition::JobSpec> jobs;  // built-in workloads and external commands
    // What the sizes are: green (built-in jobs only: green contexts live in the worker), mps or
    // mig. The whole GPU is always the sequential backend.
    partition::BackendKind backend = partition::BackendKind::kGreen;
    std::vector<std::string> sizes;        // MIG profile names; empty: every one below the GPU
    double duration_s = 10;                // each run's steady-state window
    unsigned repetitions = 1;
    std::string label = "profile";
    std::string run_dir;  // a folder per run below it
};

// One run of a profile: a job alone on a size.
struct ProfileCell {
    size_t job = 0;    // index in ProfileRequest::jobs
    std::string size;  // MIG profile; empty: the whole GPU
    unsigned repetition = 1;
    std::string where() const { return size.empty() ? "whole GPU" : size; }
};

// The sizes to measure: the request's (checked against `model`), or every profile of the model
// below the full GPU without media extensions.
std::vector<std::string> profile_sizes(const ProfileRequest& request, const mig::GpuModel& model);

// Every (repetition, job, size) in the order they run: each job on the whole GPU, then its sizes.
std::vector<ProfileCell> profile_cells(const ProfileRequest& request,
                                       const std::vector<std::string>& sizes);

// The run cell that measures one profile cell: a duration window for a built-in job, fixed work
// (its command's one run) for an external command; its size parsed against `model` (the GPU's).
CellRequest profile_cell_request(const ProfileRequest& request, const ProfileCell& cell,
                                 const mig::GpuModel& model);
// Its run directory: RUN_DIR/JOB-SIZE-REPETITION ("whole" for the whole GPU).
std::string profile_run_dir(const ProfileRequest& request, const ProfileCell& cell);

// How long profile runs take, learnt as they run: a built-in job's run is its window plus what a
// run adds around it (the worker's start, warm-up and CUDA-graph capture, the idle probes),
// kProfileRunStartS + both idle probes until runs here have measured it; a command's run is as
// long as its longest run so far, unknown before its first.
// kProfileRunStartS: on the H200, 16 runs of 6 s windows with 2 s idle probes took 4.5 min
// (docs/planner.md, "Profiles"): 17 s each, 7 s beyond the window and the probes.
inline constexpr double kProfileRunStartS = 7;
struct ProfilePace {
    double overhead_s = 0;     // measured: mean seconds of a built-in run beyond its window
    size_t builtin_runs = 0;   // measured so far
    std::map<size_t, double> command_run_s;  // per job index: its longest run so far
    // Learns from a finished run that took `wall_s` of wall time.
    void record(const ProfileRequest& request, const ProfileCell& cell, double wall_s);
};

// What is left of `cells` from `next` on, roughly, at `pace`.
struct ProfileTimeLeft {
    size_t runs = 0;
    double seconds = 0;               // of the runs whose length is known
    size_t unknown_command_runs = 0;  // runs of commands that have not run once yet
};
ProfileTimeLeft profile_time_left(const ProfileRequest& request,
                                  const std::vector<ProfileCell>& cells, size_t next,
                                  const ProfilePace& pace, const Measurement& m);

// Hears about each profile run; the CLI prints.
class ProfileObserver {
  public:
    virtual ~ProfileObserver() = default;
    // Every run about to be made, in order, once the request has been checked.
    virtual void profile_started(const std::vector<ProfileCell>& cells) = 0;
    virtual void cell_started(size_t index, size_t count, const ProfileCell& cell) = 0;
    virtual void cell_finished(size_t index, const ProfileCell& cell,
                               const CellOutcome& outcome) = 0;
};

struct ProfileResult {
    size_t runs = 0;    // run cells started
    size_t failed = 0;  // with a job that did not end ok (e.g. out of memory on a small size)
    bool interrupted = false;
    double wall_s = 0;
};

// Checks every cell on this machine first (errors name the job and size), then opens the store
// at `db_path` (created if missing) and runs the cells in order, each stored as it finishes; a
// failed job does not stop the rest, an interrupt does.
ProfileResult run_profile(const ProfileRequest& request, const Machine& machine,
                          const Measurement& m, const std::string& db_path, const RunHooks& hooks,
                          ProfileObserver& observer);

}  // namespace migscope::runner
