// The sweep of an experiment spec: every cell checked on this machine, what the store already
// holds, what is left with its time estimate (the plan), then the cells run one after another,
// each stored as it finishes. Callers print; the sweep reports through an observer.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "experiment/expand.h"
#include "experiment/spec.h"
#include "runner/cell.h"
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
};

struct PlannedCell {
    experiment::Cell cell;
    experiment::Estimate estimate;
    std::string description;  // "section: backend layout, jobs, window, repetition r/n"
    std::string run_dir;      // ROOT/NNN-SECTION-BACKEND[-LAYOUT]-rR
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
    std::string root;  // run directories
    bool resume = false;  // todo holds only the cells the store lacked
};

// Reads the spec, expands and checks every cell (errors name the cell; misfits are skipped unless
// `force`) and sees what the store at the plan's path holds (when it exists).
SweepPlan plan_sweep(const SweepOptions& options, const Machine& machine, bool force);

// Hears about a sweep's progress; the CLI prints it.
class SweepObserver {
  public:
    virtual ~SweepObserver() = default;
    // Cell `index` of plan.todo starts; `elapsed_s` since the first, `eta_s` for what is left.
    virtual void cell_started(size_t index, double elapsed_s, double eta_s) = 0;
    virtual void cell_finished(size_t index, const CellOutcome& outcome) = 0;
    // A cool-down between cells: called about every 100 ms with the seconds left.
    virtual void cooling_down(double left_s) = 0;
};

struct SweepResult {
    double wall_s = 0;
    bool interrupted = false;
    bool all_ok = true;  // every job of every run ended ok
};

// Runs plan.todo in order, each cell stored in `db` in its own transactions; stops early when
// `hooks.interrupt` is set (what finished is stored). One sweep of an experiment per store at a
// time: it holds the lock file `DB.sweep-NAME.lock` (NAME the spec's name as a slug) and a second
// one is refused (runtime error naming the holder's process id); a resumed plan whose cells were
// stored by another sweep after it was made is refused too ("run --resume again").
SweepResult run_sweep(const SweepPlan& plan, const Machine& machine, const Measurement& m,
                      store::Store& db, const RunHooks& hooks, SweepObserver& observer);

// "resnet18:32,bert-base:finetune:4" (with each job's own steps under matched work).
std::string jobs_text(const std::vector<partition::JobSpec>& jobs);

}  // namespace migscope::runner
