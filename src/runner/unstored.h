// A measured run the results store could not take (disk full, a damaged store, a lock held past
// the busy timeout) is kept in a results store file of its own in the run directory, which
// `migscope results import FILE --db STORE` loads later: no measured run is lost to the store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace migscope::runner {

// The file in the run directory that keeps what the store could not take.
inline constexpr const char* kUnstoredFile = "unstored-runs.db";

struct UnstoredRuns {
    std::string store_problem;  // what the results store said
    std::string file;           // RUN_DIR/unstored-runs.db: the run and its baseline, every row
    std::string file_problem;   // not empty: the file could not be written either
};

// "the results store STORE could not take the run (WHY); it is kept in FILE: load it with
// `migscope results import FILE --db STORE`", or, when the file failed too, where the
// measured results still are (result.json).
std::string describe(const UnstoredRuns& unstored, const std::string& db_path,
                     const std::string& run_dir);

// A measured cell's rows as the store takes them: the run's (one row, or a host run's GPU rows,
// stored together) and its baseline's (parent_id is set here).
struct CellRows {
    std::vector<store::RunRecord> run;
    std::vector<store::RunRecord> baseline;
    bool host = false;
};

struct StoredIds {
    std::vector<int64_t> run, baseline;  // empty: not in the store
};

// Adds the rows to `db`: the run, then its baseline naming the run's first row, one transaction
// each, `earlier` on both (store::EarlierAttempts). When the store throws, every row of the cell
// (the run too, if it was stored before the baseline failed: `results import` knows it) is
// written to RUN_DIR/unstored-runs.db and `unstored` says so; the ids are those stored.
StoredIds store_cell(store::Store& db, const CellRows& rows, store::EarlierAttempts earlier,
                     const std::string& run_dir, std::optional<UnstoredRuns>& unstored);

}  // namespace migscope::runner
