// The report's figures: plot descriptions with captions, made from findings and power traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/findings.h"
#include "report/gnuplot.h"
#include "store/record.h"

namespace migscope::report {

enum class Section { kScaling, kLayouts, kPareto, kTraces };

struct Figure {
    Section section = Section::kScaling;
    Plot plot;
    std::string caption;  // what is shown, its window or method and its spread
};

// The layouts whose power traces are plotted: at most `max_layouts`, each its latest repetition.
constexpr size_t kMaxTracedLayouts = 8;
// Ids of the runs (and their baselines) whose traces the figures need.
std::vector<int64_t> traced_run_ids(const Findings& findings);

// Scaling (throughput and energy per item against SMs, one pair per workload), layouts against
// the baseline (energy change and speedup bars), one Pareto plot per job set, and one power trace
// per traced layout from `traced_runs` (runs read with their traces; others are ignored).
std::vector<Figure> report_figures(const Findings& findings,
                                   const std::vector<store::RunRecord>& traced_runs);

}  // namespace migscope::report
