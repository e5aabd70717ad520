// `migscope run SPEC.toml`: the sweep an experiment spec describes, printed as it runs.
#pragma once

#include <string>

#include "runner/cell.h"
#include "runner/sweep.h"

namespace migscope::cli {

struct SweepCommand {
    runner::SweepOptions sweep;  // sweep.dry_run: print the plan, run nothing
    std::string output;          // the summary table; empty: stdout
    unsigned gpu = 0;
    runner::Measurement measurement;
};

// Exit code: 0 every job ok, 1 a job failed, 130 interrupted; errors in the spec (exit 2) and a
// missing GPU (exit 3) are thrown before anything runs.
int sweep_command(const SweepCommand& command);

}  // namespace migscope::cli
