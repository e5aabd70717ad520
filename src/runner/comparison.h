// A partitioned run against the sequential baseline of the same jobs, for the same work.
#pragma once

#include "report/comparison.h"
#include "runner/run.h"

namespace migscope::runner {

using report::Comparison;

// report::compare_with_baseline over the runs' records: one arithmetic for fresh and stored runs.
Comparison compare_with_baseline(const RunResult& run, const RunResult& baseline);

}  // namespace migscope::runner
