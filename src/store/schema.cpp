// The results store's schema: version 1 (runs, their jobs and power traces, with provenance) and
// the migrations to the current version.
#include "store/schema.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"

namespace migscope::store {
namespace {

constexpr const char* kCreateV1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('run', 'baseline')),
  parent_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  backend TEXT NOT NULL,
  mode TEXT NOT NULL,
  layout TEXT,
  window_s REAL NOT NULL,
  counter_energy_j REAL,
  trace_energy_j REAL,
  disagreement_pct REAL,
  average_power_w REAL,
  peak_power_w REAL,
  power_samples INTEGER NOT NULL,
  max_gap_s REAL,
  idle_power_w REAL,
  sm_clock_mhz REAL,
  attribution_method TEXT NOT NULL,
  aggregate_normalised_throughput REAL,
  interrupted INTEGER NOT NULL,
  warnings TEXT NOT NULL,
  migscope_version TEXT NOT NULL,
  migscope_commit TEXT NOT NULL,
  gpu_name TEXT,
  gpu_uuid TEXT,
  driver_version TEXT,
  cuda_driver_version TEXT,
  torch_version TEXT,
  mig_mode TEXT
);
CREATE INDEX runs_parent ON runs(parent_id);
CREATE TABLE jobs (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  workload TEXT,
  command TEXT NOT NULL,
  mode TEXT NOT NULL,
  batch INTEGER,
  partition TEXT NOT NULL,
  sms_requested INTEGER,
  sms INTEGER,
  memory_limit_gib REAL,
  status TEXT NOT NULL,
  message TEXT NOT NULL,
  item_unit TEXT,
  steps INTEGER NOT NULL,
  items REAL NOT NULL,
  busy_s REAL NOT NULL,
  items_per_s REAL,
  step_time_p50_s REAL,
  step_time_p95_s REAL,
  mfu REAL,
  peak_memory_bytes INTEGER,
  finish_s REAL,
  energy_j REAL,
  energy_per_item_j REAL,
  normalised_throughput REAL,
  sm_clock_mhz REAL,
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
CREATE TABLE power_samples (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  t_s REAL NOT NULL,
  power_instant_w REAL,
  power_average_w REAL,
  energy_j REAL,
  sm_clock_mhz REAL,
  memory_used_mib REAL,
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
)sql";

// Migrations, in order: kMigrations[k] takes version k + 1 to k + 2. A new store is created at
// version 1 and migrated like an old one, so every migration runs in every test that opens a store.
constexpr const char* kMigrations[] = {
    // 1 -> 2: experiment sweeps. A run made by `migscope run SPEC` names its experiment and the
    // cell of the sweep it measured, so that --resume can tell which cells are done.
    R"sql(
ALTER TABLE runs ADD COLUMN experiment TEXT;
ALTER TABLE runs ADD COLUMN cell_key TEXT;
CREATE INDEX runs_cell ON runs(experiment, cell_key);
)sql",
    // 2 -> 3: how a built-in workload stepped ("cuda-graph" or "eager"): CUDA graphs change a
    // small-batch job's whole-GPU throughput by up to 2x, so results of either kind must say it.
    R"sql(
ALTER TABLE jobs ADD COLUMN step_mode TEXT;
)sql",
    // 3 -> 4: idle states. A run's idle power is named by the state it was measured in (idle
    // with the SM clock up or deep idle: 132 W against 81 W on the H200), and deep idle is kept.
    R"sql(
ALTER TABLE runs ADD COLUMN idle_state TEXT;
ALTER TABLE runs ADD COLUMN deep_idle_power_w REAL;
)sql",
    // 4 -> 5: runs over several GPUs of one host (runner/host_run.h). Each GPU's run is a row of
    // its own (jobs, energy, trace) with the GPU's NVML index; the rows of one host run share
    // host_run_id, the id of its first GPU's row. Both stay NULL for a one-GPU run.
    R"sql(
ALTER TABLE runs ADD COLUMN gpu_index INTEGER;
ALTER TABLE runs ADD COLUMN host_run_id INTEGER;
CREATE INDEX runs_host ON runs(host_run_id);
)sql",
    // 5 -> 6: memory intensity. NVML's memory-controller busy % (and the GPU's busy %) in the
    // trace, and its median in each job's window: a job alone on a partition is what that figure
    // measures, and sharing memory bandwidth is what slows jobs side by side (docs/planner.md,
    // "What the correction stands for").
    R"sql(
ALTER TABLE jobs ADD COLUMN memory_utilization_pct REAL;
ALTER TABLE power_samples ADD COLUMN gpu_utilization_pct REAL;
ALTER TABLE power_samples ADD COLUMN memory_utilization_pct REAL;
)sql",
    // 6 -> 7: the board's enforced power limit, the cap behind a busy board's lower SM clock
    // (docs/results-h200.md): results say under which cap they were measured.
    R"sql(
ALTER TABLE runs ADD COLUMN power_limit_w REAL;
)sql",
    // 7 -> 8: the CUDA injection library the workers loaded. The activity probe (the exporter's
    // per-process signal) slows a job and lowers its power: profiles say whether theirs had it.
    // And each job's span, its counted steps plus the time between them, which a rate over the
    // steps' own time leaves out.
    R"sql(
ALTER TABLE runs ADD COLUMN cuda_injection TEXT;
ALTER TABLE jobs ADD COLUMN span_s REAL;
)sql",
    // 8 -> 9: each job's throughput spread within its window (its steps in three parts), so a
    // throughput is never printed without how much it moved while it was measured.
    R"sql(
ALTER TABLE jobs ADD COLUMN items_per_s_spread_pct REAL;
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion - 1, "one migration per version step");

void migrate(Database& db, int64_t from) {
    for (int64_t v = from; v < kSchemaVersion; ++v)
        db.exec(kMigrations[v - 1]);
    Statement s(db, "UPDATE schema_version SET version = ?");
    s.bind(1, kSchemaVersion).run();
}

bool has_table(const Database& db, const std::string& name) {
    Statement s(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    s.bind(1, name);
    return s.step();
}

// The version an existing store holds; any value but a whole number from 1 up to ours is a
// damaged or foreign file, never a migration. So is a file in UTF-16: migscope writes UTF-8.
int64_t checked_version(const Database& db) {
    Statement encoding(db, "PRAGMA encoding");
    if (encoding.step() && encoding.text_at(0) != "UTF-8")
        throw input_error(db.path() + " is not a migscope results store (its text is " +
                          encoding.text_at(0) + ", not UTF-8)");
    Statement s(db, "SELECT typeof(max(version)), max(version) FROM schema_version");
    if (!s.step() || s.is_null(1))
        throw input_error(db.path() + ": schema_version is empty");
    if (s.text_at(0) != "integer" || s.int64_at(1) < 1) {
        const std::string held =
            s.text_at(0) == "integer" ? std::to_string(s.int64_at(1)) : "a " + s.text_at(0);
        throw input_error(db.path() + ": schema_version holds " + held +
                          ", not a results schema version (1 to " + std::to_string(kSchemaVersion) +
                          ")");
    }
    const int64_t version = s.int64_at(1);
    if (version > kSchemaVersion) {
        throw input_error(db.path() + " has results schema version " + std::to_string(version) +
                          ", newer than this migscope's version " + std::to_string(kSchemaVersion) +
                          ": use a newer migscope");
    }
    return version;
}

// Each table of a database (SQLite's own left out) and its columns in order.
using TableColumns = std::map<std::string, std::vector<std::string>>;
TableColumns table_columns(const Database& db) {
    TableColumns out;
    Statement tables(db,
                     "SELECT name FROM sqlite_master WHERE type = 'table' "
                     "AND name NOT LIKE 'sqlite_%' ORDER BY name");
    while (tables.step()) {
        const std::string table = tables.text_at(0);
        Statement columns(db, "SELECT name FROM pragma_table_info(?) ORDER BY cid");
        columns.bind(1, table);
        std::vector<std::string>& names = out[table];
        while (columns.step())
            names.push_back(columns.text_at(0));
    }
    return out;
}

// The tables and columns a store of this version holds: a new store's, made in memory once.
const TableColumns& expected_columns() {
    static const TableColumns expected = [] {
        Database db = Database::in_memory("(the results schema)");
        db.exec(kCreateV1);
        db.exec("INSERT INTO schema_version (version) VALUES (1)");
        migrate(db, 1);
        return table_columns(db);
    }();
    return expected;
}

// A store of this version that lacks a table or a column of ours is damaged (a user's DROP, a
// broken copy, another program's writes): an input error naming the table, before anything
// reads or writes it. Tables and columns of its own are left alone.
void check_tables(const Database& db) {
    const TableColumns held = table_columns(db);
    for (const auto& [table, columns] : expected_columns()) {
        const auto it = held.find(table);
        if (it == held.end())
            throw input_error(db.path() + " is damaged: it has no table " + table +
                              " (results schema version " + std::to_string(kSchemaVersion) + ")");
        for (const std::string& column : columns) {
            if (std::find(it->second.begin(), it->second.end(), column) == it->second.end())
                throw input_error(db.path() + " is damaged: table " + table + " has no column " +
                                  column + " (results schema version " +
                                  std::to_string(kSchemaVersion) + ")");
        }
    }
}

// PATH.schema-vN.bak, or PATH.schema-vN.K.bak with the first K not taken.
std::string free_backup_path(const std::string& path, int64_t version) {
    const std::string stem = path + ".schema-v" + std::to_string(version);
    std::string candidate = stem + ".bak";
    for (int k = 1; std::filesystem::exists(candidate); ++k)
        candidate = stem + "." + std::to_string(k) + ".bak";
    return candidate;
}

}  // namespace

std::optional<SchemaUpgrade> prepare_schema(Database& db, OpenMode mode) {
    if (mode == OpenMode::kRead) {
        if (!has_table(db, "schema_version"))
            throw input_error(db.path() + " is not a migscope results store (no schema)");
        const int64_t version = checked_version(db);
        if (version < kSchemaVersion) {
            db = db.copy_in_memory();
            // The migrations are tested on every version's schema: one that fails on this copy
            // has met a damaged file (found by fuzzing: a header whose text encoding SQLite
            // refuses only once the schema changes).
            try {
                Transaction tx(db);
                migrate(db, version);
                tx.commit();
            } catch (const Error& e) {
                throw input_error(db.path() + " (results schema version " +
                                  std::to_string(version) + ") cannot be read: " + e.what());
            }
        }
        check_tables(db);
        return std::nullopt;
    }
    if (sqlite3_db_readonly(db.handle(), "main") == 1)
        throw input_error(db.path() + " is read-only: the results of a run could not be stored");
    // An older store is copied before anything writes to it.
    std::optional<SchemaUpgrade> backup;
    if (has_table(db, "schema_version")) {
        if (const int64_t version = checked_version(db); version < kSchemaVersion) {
            backup = SchemaUpgrade{version, free_backup_path(db.path(), version)};
            db.back_up_to(backup->backup_path);
        }
    }

    Transaction tx(db);  // two migscopes opening a new file at once: one creates, one checks
    if (!has_table(db, "schema_version")) {
        // A reader never creates the schema: the file may be a store another migscope is
        // creating right now, or not a store at all.
        if (mode == OpenMode::kExisting)
            throw input_error(db.path() + " is not a migscope results store (no schema)");
        Statement any(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
        any.step();
        if (any.int64_at(0) != 0)
            throw input_error(db.path() +
                              " is an SQLite database but not a migscope results store");
        db.exec(kCreateV1);
        db.exec("INSERT INTO schema_version (version) VALUES (1)");
        migrate(db, 1);
        tx.commit();
        return std::nullopt;
    }
    const int64_t version = checked_version(db);  // again: another writer may have migrated
    std::optional<SchemaUpgrade> upgrade;
    if (version < kSchemaVersion) {
        migrate(db, version);  // in this transaction: all of it or nothing
        upgrade = backup;
    }
    check_tables(db);
    // A write that reaches the file, so that a store that cannot be written fails now, before a
    // run is measured, not when its results are inserted.
    db.exec("UPDATE schema_version SET version = version");
    tx.commit();
    return upgrade;
}

std::string describe(const SchemaUpgrade& upgrade, const std::string& path) {
    return "upgraded " + path + " from results schema version " +
           std::to_string(upgrade.from_version) + " to " + std::to_string(kSchemaVersion) +
           "; the old store is kept as " + upgrade.backup_path;
}

}  // namespace migscope::store
