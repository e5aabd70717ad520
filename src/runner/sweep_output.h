// A sweep's plan, its summary table of the runs, and each run's table, as text.
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

// One row per finished run (status, energy, normalised throughput, change against its baseline,
// stored id); printed at the end with the sweep's totals.
class SweepSummary {
  public:
    explicit SweepSummary(const SweepPlan& plan);
    void add(size_t index, const CellOutcome& outcome);
    void print(const SweepResult& result, std::ostream& out) const;

  private:
    const SweepPlan& plan_;
    report::TextTable table_;
    std::string single_table_;  // a sweep of one run (the quickstart) shows its full table
};

}  // namespace migscope::runner
