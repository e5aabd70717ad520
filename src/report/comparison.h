// A partitioned run against the sequential baseline of the same jobs, for the same work, from
// stored records (the runner compares its fresh results through the same arithmetic).
#pragma once
#include <optional>

#include "store/record.h"

namespace migscope::report {

// For the work the partitioned run did (each job's items in its window, or its fixed work), what
// running the same jobs one after another would have taken, from each job's throughput and energy
// per item alone on the whole GPU. Empty fields where a job lacks a figure on either side.
struct Comparison {
    std::optional<double> run_energy_j;       // board energy of the partitioned run
    std::optional<double> baseline_energy_j;  // Σ items × energy per item alone
    std::optional<double> energy_change_pct;  // (run − baseline) / baseline
    std::optional<double> run_time_s;         // window or makespan
    std::optional<double> baseline_time_s;    // Σ items / throughput alone
    std::optional<double> speedup;            // baseline time / run time
};

// Jobs are matched by name; `run.mode` "work" uses the items done, else rate × window.
Comparison compare_with_baseline(const store::RunRecord& run, const store::RunRecord& baseline);

}  // namespace migscope::report
