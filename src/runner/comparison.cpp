// Same-work comparison of a partitioned run with the sequential baseline, through its records.
#include "runner/comparison.h"

#include "runner/run_record.h"

namespace migscope::runner {

Comparison compare_with_baseline(const RunResult& run, const RunResult& baseline) {
    return report::compare_with_baseline(to_run_record(run, {}), to_run_record(baseline, {}));
}

}  // namespace migscope::runner
