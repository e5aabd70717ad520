// A sweep's plan, its summary table of the runs, and each run's table, as text; a cell of several
// GPUs with a row per GPU and the host's total.
#pragma once

#include <ostream>
#include <string>

#include "report/table.h"
#include "runner/sweep.h"

namespace migscope::runner {

// 42 s, 5 min 10 s, 2 h 05 min.
std::string duration_text(double seconds);

// What will run: cells selected, skipped and already stored, the estimate, where results go.
void print_sweep_plan(const SweepPlan& plan, const std::string& spec_path, bool resume,
                      std::ostream& out);

// "stored as run 12, baseline 13" or, for a cell of several GPUs, "stored as runs 12-14 (GPUs
// 0-2), baselines 15-17"; "not stored: kept in RUN_DIR/unstored-runs.db" when the store could
// not take it.
std::string stored_text(const SweepCellOutcome& outcome);

// A finished cell's full table (its run's and baseline's, or the host run's per GPU), for its
// run directory's table.txt.
void print_cell(const PlannedCell& cell, const SweepCellOutcome& outcome, std::ostream& out);

// One row per finished run (status, energy, normalised throughput, change against its baseline,
// stored id); printed at the end with the sweep's totals.
class SweepSummary {
  public:
    explicit SweepSummary(const SweepPlan& plan);
    void add(size_t index, const SweepCellOutcome& outcome);
    void print(const SweepResult& result, std::ostream& out) const;

  private:
    void add_host(size_t index, const HostOutcome& host);
    const SweepPlan& plan_;
    bool gpu_column_;  // the plan has cells of several GPUs: a row per GPU
    report::TextTable table_;
    std::string single_table_;  // a sweep of one run (the quickstart) shows its full table
};

}  // namespace migscope::runner
