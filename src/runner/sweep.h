// The sweep of an experiment spec: every cell checked on this machine, what the store already
// holds, what is left with its time estimate (the plan), then the cells run one after another,
// each stored as it finishes; a cell of `gpus = N` runs on N GPUs at once (runner/host_run.h).
// Callers print; the sweep reports through an observer.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "experiment/expand.h"
#include "experiment/spec.h"
#include "runner/cell.h"
#include "runner/host_run.h"
#include "store/store.h"

namespace migscope::runner {

struct SweepOptions {
    std::string spec_path;
    std::string db;  // empty: migscope-runs/NAME.db
    bool resume = false;
    std::vector<std::string> only;  // sections; empty: all
    std::string run_dir;            // empty: migscope-runs/NAME-DATE
    // Plan only: without a GPU and with only GPU sections selected, the plan is the one a GPU
    // host would run (cells checked against the built-in catalog, not this machine).
    bool dry_run = false;
    // The first GPU (NVML index, --gpu): a cell of gpus = N runs on GPUs gpu .. gpu + N - 1.
    unsigned gpu = 0;
};

struct PlannedCell {
    experiment::Cell cell;
    experiment::Estimate estimate;
    // "section: backend layout, jobs, window, repetition r/n[, on GPUs 0-1 at once]"
    std::string description;
    std::string run_dir;  // ROOT/NNN-SECTION-BACKEND[-LAYOUT]-rR
};

// What a sweep will do on this machine, before anything runs.
struct SweepPlan {
    experiment::Spec spec;
    mig::GpuModel model;               // the layouts' GPU model
    bool on_gpu = false;               // false: no GPU here, the CPU sections run
    std::string for_gpu_host;          // a dry run's plan for a GPU host without one here: why
    size_t all_cells = 0;              // in the spec
    size_t selected_cells = 0;         // by --only and the machine
    std::vector<std::string> skipped;  // cells whose jobs are known not to fit, with why
    size_t already_stored = 0;         // selected cells the store holds (finished, with baseline)
    std::vector<PlannedCell> todo;
    double estimate_s = 0;
    size_t baselines = 0;
    bool estimate_without_work = false;  // fixed-work cells: their own time is not estimated
    std::string db_path;
    std::string root;        // run directories
    bool resume = false;     // todo holds only the cells the store lacked
    unsigned first_gpu = 0;  // SweepOptions::gpu
    int64_t max_gpus = 1;    // the most GPUs a cell of todo runs on
};

// Reads the spec, expands and checks every cell (errors name the cell; misfits are skipped unless
// `force`) and sees what the store at the plan's path holds (when it exists). A cell of several
// GPUs needs that many GPUs from `options.gpu` on in NVML's list (else an input error naming the
// spec's gpus field) and is checked on each (check_host: layout, memory, MIG mode); a dry run
// without a GPU checks none of this. A host run's cell counts as stored when its rows of all its
// GPUs are and none of its jobs has "gpu failed".

SweepPlan plan_sweep(const SweepOptions& options, const Machine& machine, bool force);

// A finished cell: run on one GPU (`cell`) or on several at once (`host`).
struct SweepCellOutcome {
    std::optional<CellOutcome> cell;
    std::optional<HostOutcome> host;
    bool all_ok() const { return cell ? cell->all_ok() : host->all_ok(); }
    const std::optional<UnstoredRuns>& unstored() const {
        return cell ? cell->unstored : host->unstored;
    }
    const std::string& run_dir_problem() const {
        return cell ? cell->run_dir_problem : host->run_dir_problem;
    }
    bool interrupted() const { return cell ? cell->interrupted() : host->interrupted(); }
};

// Hears about a sweep's progress; the CLI prints it.
class SweepObserver {
  public:
    virtual ~SweepObserver() = default;
    // Cell `index` of plan.todo starts; `elapsed_s` since the first, `eta_s` for what is left.
    virtual void cell_started(size_t index, double elapsed_s, double eta_s) = 0;
    virtual void cell_finished(size_t index, const SweepCellOutcome& outcome) = 0;
    // A cool-down between cells: called about every 100 ms with the seconds left.
    virtual void cooling_down(double left_s) = 0;
};

struct SweepResult {
    double wall_s = 0;
    bool interrupted = false;
    bool all_ok = true;  // every job of every run ended ok
    // What was measured but not kept as it should be: a run directory's file that could not be
    // written, or the run the store could not take (runner/unstored.h: where it is instead).
    // The sweep stops at the first cell the store could not take (`unstored`).
    std::vector<std::string> problems;
    bool unstored = false;
};

// Runs plan.todo in order, each cell stored in `db` in its own transactions (a cell of several
// GPUs through run_host on GPUs plan.first_gpu on, each the cell's layout and jobs, its
// baseline on the same GPUs; a GPU that fails keeps the others' rows); stops early when
// `hooks.interrupt` is set (what finished is stored). One sweep of an experiment per store at a
// time: it holds the lock file `DB.sweep-NAME.lock` (NAME the spec's name as a slug) and a second
// one is refused (runtime error naming the holder's process id); a resumed plan whose cells were
// stored by another sweep after it was made is refused too ("run --resume again"). A resumed
// sweep replaces a cell's unfinished attempts (store::EarlierAttempts) when it stores the cell
// finished, so each repetition is stored once.
SweepResult run_sweep(const SweepPlan& plan, const Machine& machine, const Measurement& m,
                      store::Store& db, const RunHooks& hooks, SweepObserver& observer);

// "resnet18:32,bert-base:finetune:4" (with each job's own steps under matched work).
std::string jobs_text(const std::vector<partition::JobSpec>& jobs);

}  // namespace migscope::runner
