// Merging one results store into another: the runs a study measured in several places (device
// calls that each started from an older copy) brought together in one store, each run once.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "store/store.h"

namespace migscope::store {

struct MergeCount {
    int64_t added = 0;    // runs (GPU rows of host runs counted one by one) copied in
    int64_t already = 0;  // runs the target held already (same identity), not copied again
};

// What makes two rows the same run, in two stores or one (a merged copy): its start time, role,
// label, experiment cell, GPU UUID and GPU index.
using RunIdentity =
    std::tuple<std::string, std::string, std::string, std::string, std::string, int64_t>;
RunIdentity run_identity(const RunRecord& r);

// Copies every run of `source` that `target` does not hold into `target`, with its jobs and
// trace, in the source's id order; each gets a new id there, and a baseline's parent_id and a
// host run's host_run_id are mapped to the target's ids. A run is the same run when its
// run_identity() is: merging a store into a copy of itself, or twice, adds nothing. Each run (a
// host run's rows together) is written in one transaction, so an interrupted merge can be run
// again. Throws an input error for a source baseline whose parent is not in the source.
MergeCount merge_store(Store& target, Store& source);

}  // namespace migscope::store
