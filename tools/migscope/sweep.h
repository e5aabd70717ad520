// `migscope run SPEC.toml`: the sweep an experiment spec describes, one cell after another, each
// stored as it finishes, with a plan, progress and ETA on stderr and a summary table at the end.
#pragma once

#include <string>
#include <vector>

#include "run_cell.h"

namespace migscope::cli {

struct SweepOptions {
    std::string spec_path;
    std::string db;  // empty: migscope-runs/NAME.db
    bool resume = false;
    std::vector<std::string> only;  // sections; empty: all
    bool dry_run = false;
    std::string run_dir;  // empty: migscope-runs/NAME-DATE
    std::string output;   // the summary table; empty: stdout
    unsigned gpu = 0;
    Measurement measurement;
};

// Exit code: 0 every job ok, 1 a job failed, 130 interrupted; errors in the spec (exit 2) and a
// missing GPU (exit 3) are thrown before anything runs.
int run_sweep(const SweepOptions& options);

}  // namespace migscope::cli
