// The results store: runs with their jobs, power traces and provenance in one SQLite file.
// Each run is written in one transaction, so an interrupted sweep leaves only whole runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/record.h"
#include "store/sqlite.h"

namespace migscope::store {

enum class TraceLoad { kWithout, kWith };

// A finished (not interrupted) run of an experiment's cell, and whether its baseline is stored
// and finished too.
struct StoredCell {
    std::string cell_key;
    bool has_baseline = false;
};

class Store {
  public:
    // Creates the file and schema (kCreate) or requires an existing store (kExisting); checks the
    // schema version; WAL journal, foreign keys on, a busy timeout for concurrent writers.
    static Store open(const std::string& path, OpenMode mode = OpenMode::kCreate);

    // Writes the run, its jobs and its trace in one transaction; returns the run's id.
    int64_t add_run(const RunRecord& run);
    // Every run in id order, with jobs, without traces.
    std::vector<RunRecord> list_runs();
    std::optional<RunRecord> get_run(int64_t id, TraceLoad trace = TraceLoad::kWithout);
    // The experiment's finished runs (role run), in id order: what --resume skips.
    std::vector<StoredCell> stored_cells(const std::string& experiment);

  private:
    explicit Store(Database db) : db_(std::move(db)) {}
    Database db_;
};

}  // namespace migscope::store
