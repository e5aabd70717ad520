// The results store: runs with their jobs, power traces and provenance in one SQLite file.
// Each run is written in one transaction, so an interrupted sweep leaves only whole runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/record.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace migscope::store {

enum class TraceLoad { kWithout, kWith };

// What adding a finished run of an experiment's cell does to the cell's earlier attempts that
// did not finish (`migscope run SPEC --resume` runs such a cell again): keeps them, or deletes
// them in the same transaction, so that each repetition is stored once.
enum class EarlierAttempts { kKeep, kReplaceUnfinished };

// A finished (not interrupted) run of an experiment's cell, and whether its baseline is stored
// and finished too. A host run over several GPUs is one StoredCell (its first GPU's row).
struct StoredCell {
    std::string cell_key;
    bool has_baseline = false;
    int64_t gpus = 1;         // a host run's GPU rows; 1 for a one-GPU run
    bool gpu_failed = false;  // a job of the host run (not its baseline) has "gpu failed"
};

class Store {
  public:
    // Creates the file and schema (kCreate) or requires an existing store (kExisting, kRead);
    // checks the schema version (prepare_schema: a writer proves it can write and migrates an
    // old store after a backup; a reader never writes); WAL journal, foreign keys on, a busy
    // timeout for concurrent writers.
    static Store open(const std::string& path, OpenMode mode = OpenMode::kCreate);

    const std::string& path() const { return db_.path(); }
    // The migration this writer made of an older store, if any: for a note to the user.
    const std::optional<SchemaUpgrade>& upgrade() const { return upgrade_; }

    // Writes the run, its jobs and its trace in one transaction; returns the run's id.
    // kReplaceUnfinished, for a run of an experiment's cell that finishes the cell (a run that
    // was not interrupted; a finished baseline, for a cell with one): the same transaction
    // deletes the cell's other runs that did not finish (interrupted, or, when `run` is a
    // baseline, without a finished baseline), their baselines, jobs and traces with them.
    int64_t add_run(const RunRecord& run, EarlierAttempts earlier = EarlierAttempts::kKeep);
    // Writes the GPU rows of one host run (runner/host_run.h) in one transaction, each with
    // host_run_id set to the first row's id (whatever `gpus` holds there); returns their ids.
    // `earlier` as add_run's, for the host run as a whole (all its GPU rows).
    std::vector<int64_t> add_host_run(const std::vector<RunRecord>& gpus,
                                      EarlierAttempts earlier = EarlierAttempts::kKeep);
    // Every run in id order, with jobs, without traces.
    std::vector<RunRecord> list_runs();
    std::optional<RunRecord> get_run(int64_t id, TraceLoad trace = TraceLoad::kWithout);
    // The GPU rows of the host run `host_run_id` (rows with that host_run_id), in id order, with
    // jobs, without traces; empty for none.
    std::vector<RunRecord> host_run(int64_t host_run_id);
    // The experiment's finished runs (role run), in id order, a host run once: what --resume
    // skips.
    std::vector<StoredCell> stored_cells(const std::string& experiment);

  private:
    int64_t insert_run(const RunRecord& run);  // within the caller's transaction
    // add_run's kReplaceUnfinished for `finished`, the first row of the run (or host run)
    // `run_id`, within the caller's transaction.
    void delete_unfinished_attempts(const RunRecord& finished, int64_t run_id);
    Store(Database db, std::optional<SchemaUpgrade> upgrade)
        : db_(std::move(db)), upgrade_(std::move(upgrade)) {}
    Database db_;
    std::optional<SchemaUpgrade> upgrade_;
};

// Whether `path` is an SQLite database without a table: an empty file, or a store another
// migscope is creating right now (its schema not yet committed). False for anything else,
// a file SQLite cannot read included (Store::open says what is wrong with it).
bool is_empty_database(const std::string& path);

}  // namespace migscope::store
