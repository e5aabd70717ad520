// The results store: round trips (every field, NULLs kept), listing, the schema version check, the
// migration from version 1, what resume skips, and consistency after a writer is killed mid-sweep.
#include "store/store.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <fstream>
#include <functional>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "store/schema.h"

namespace migscope::store {
namespace {

namespace fs = std::filesystem;

fs::path fresh_path(const std::string& name) {
    const fs::path dir = fs::path(testing::TempDir()) / "store-test";
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"})
        fs::remove(path.string() + suffix);
    return path;
}

// Every field set, with values that do not collide with defaults.
RunRecord full_record() {
    RunRecord r;
    r.started_at = "2026-11-30T03:34:15Z";
    r.role = RunRole::kBaseline;
    r.label = "sweep A, cell 3";
    r.experiment = "sweep A";
    r.cell_key = "section=mixed;backend=green;rep=1";
    r.backend = "green";
    r.mode = "duration";
    r.layout = "3g.71gb+1g.18gb";
    r.window_s = 60.25;
    r.counter_energy_j = 41000.5;
    r.trace_energy_j = 41010.25;
    r.disagreement_pct = 0.025;
    r.average_power_w = 680.5;
    r.peak_power_w = 701.0;
    r.power_samples = 603;
    r.max_gap_s = 0.125;
    r.idle_power_w = 110.5;
    r.idle_state = "clocks-up";
    r.deep_idle_power_w = 80.25;
    r.sm_clock_mhz = 1755;
    r.attribution_method = "idle by SMs, dynamic by activity";
    r.aggregate_normalised_throughput = 1.09;
    r.interrupted = true;
    r.warnings = {"first, with a comma", "second \"quoted\""};
    r.provenance = {"0.4.0",     "abc1234", "NVIDIA H200", "GPU-1234",
                    "580.82.07", "13.0",    "2.11.0",      "disabled"};
    r.provenance.power_limit_w = 700;
    r.provenance.cuda_injection = "migscope-activity kernels";
    JobRecord j;
    j.name = "resnet50";
    j.workload = "resnet50";
    j.command = {};
    j.mode = "train";
    j.batch = 64;
    j.partition = "3g.71gb";
    j.sms_requested = 60;
    j.sms = 56;
    j.memory_limit_gib = 70.5;
    j.status = "ok";
    j.message = "";
    j.item_unit = "images";
    j.steps = 120;
    j.items = 7680;
    j.busy_s = 59.5;
    j.items_per_s = 129.1;
    j.step_time_p50_s = 0.49;
    j.step_time_p95_s = 0.52;
    j.mfu = 0.41;
    j.peak_memory_bytes = 12345678901;
    j.finish_s = 58.75;
    j.energy_j = 25000.25;
    j.energy_per_item_j = 3.25;
    j.normalised_throughput = 0.61;
    j.sm_clock_mhz = 1740;
    j.step_mode = "cuda-graph";
    j.memory_utilization_pct = 37.5;
    j.span_s = 19.8;
    j.items_per_s_spread_pct = 2.5;
    JobRecord e;  // an external command: most optionals empty
    e.name = "mine";
    e.command = {"python3", "train.py", "--lr", "1e-3"};
    e.mode = "train";
    e.partition = "1g.18gb";
    e.status = "crashed";
    e.message = "exit status 1";
    r.jobs = {j, e};
    r.trace = {{0.0, 100.5, 101.0, 5000.0, 1755.0, 2048.0, 99.0, 41.0},
               {0.1, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                std::nullopt, std::nullopt},
               {0.2, 300.25, 290.0, 5030.0, 1740.0, 4096.0, 100.0, 12.0}};
    return r;
}

void expect_same_job(const JobRecord& a, const JobRecord& b) {
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.workload, b.workload);
    EXPECT_EQ(a.command, b.command);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.batch, b.batch);
    EXPECT_EQ(a.partition, b.partition);
    EXPECT_EQ(a.sms_requested, b.sms_requested);
    EXPECT_EQ(a.sms, b.sms);
    EXPECT_EQ(a.memory_limit_gib, b.memory_limit_gib);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.message, b.message);
    EXPECT_EQ(a.item_unit, b.item_unit);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.items, b.items);
    EXPECT_EQ(a.busy_s, b.busy_s);
    EXPECT_EQ(a.items_per_s, b.items_per_s);
    EXPECT_EQ(a.step_time_p50_s, b.step_time_p50_s);
    EXPECT_EQ(a.step_time_p95_s, b.step_time_p95_s);
    EXPECT_EQ(a.mfu, b.mfu);
    EXPECT_EQ(a.peak_memory_bytes, b.peak_memory_bytes);
    EXPECT_EQ(a.finish_s, b.finish_s);
    EXPECT_EQ(a.energy_j, b.energy_j);
    EXPECT_EQ(a.energy_per_item_j, b.energy_per_item_j);
    EXPECT_EQ(a.normalised_throughput, b.normalised_throughput);
    EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
    EXPECT_EQ(a.step_mode, b.step_mode);
    EXPECT_EQ(a.memory_utilization_pct, b.memory_utilization_pct);
    EXPECT_EQ(a.span_s, b.span_s);
    EXPECT_EQ(a.items_per_s_spread_pct, b.items_per_s_spread_pct);
}

void expect_same_run(const RunRecord& a, const RunRecord& b) {
    EXPECT_EQ(a.started_at, b.started_at);
    EXPECT_EQ(a.role, b.role);
    EXPECT_EQ(a.parent_id, b.parent_id);
    EXPECT_EQ(a.label, b.label);
    EXPECT_EQ(a.experiment, b.experiment);
    EXPECT_EQ(a.cell_key, b.cell_key);
    EXPECT_EQ(a.backend, b.backend);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.layout, b.layout);
    EXPECT_EQ(a.window_s, b.window_s);
    EXPECT_EQ(a.counter_energy_j, b.counter_energy_j);
    EXPECT_EQ(a.trace_energy_j, b.trace_energy_j);
    EXPECT_EQ(a.disagreement_pct, b.disagreement_pct);
    EXPECT_EQ(a.average_power_w, b.average_power_w);
    EXPECT_EQ(a.peak_power_w, b.peak_power_w);
    EXPECT_EQ(a.power_samples, b.power_samples);
    EXPECT_EQ(a.max_gap_s, b.max_gap_s);
    EXPECT_EQ(a.idle_power_w, b.idle_power_w);
    EXPECT_EQ(a.idle_state, b.idle_state);
    EXPECT_EQ(a.deep_idle_power_w, b.deep_idle_power_w);
    EXPECT_EQ(a.sm_clock_mhz, b.sm_clock_mhz);
    EXPECT_EQ(a.attribution_method, b.attribution_method);
    EXPECT_EQ(a.aggregate_normalised_throughput, b.aggregate_normalised_throughput);
    EXPECT_EQ(a.interrupted, b.interrupted);
    EXPECT_EQ(a.warnings, b.warnings);
    const Provenance &p = a.provenance, &q = b.provenance;
    EXPECT_EQ(p.migscope_version, q.migscope_version);
    EXPECT_EQ(p.migscope_commit, q.migscope_commit);
    EXPECT_EQ(p.gpu_name, q.gpu_name);
    EXPECT_EQ(p.gpu_uuid, q.gpu_uuid);
    EXPECT_EQ(p.driver_version, q.driver_version);
    EXPECT_EQ(p.cuda_driver_version, q.cuda_driver_version);
    EXPECT_EQ(p.torch_version, q.torch_version);
    EXPECT_EQ(p.mig_mode, q.mig_mode);
    EXPECT_EQ(p.power_limit_w, q.power_limit_w);
    EXPECT_EQ(p.cuda_injection, q.cuda_injection);
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    for (size_t i = 0; i < a.jobs.size(); ++i)
        expect_same_job(a.jobs[i], b.jobs[i]);
}

TEST(Store, AFullRecordRoundTripsWithItsJobsAndTrace) {
    const fs::path path = fresh_path("full");
    RunRecord parent = full_record();
    parent.role = RunRole::kRun;
    RunRecord written = full_record();
    {
        Store store = Store::open(path.string());
        written.parent_id = store.add_run(parent);
        written.id = store.add_run(written);
    }
    Store store = Store::open(path.string(), OpenMode::kExisting);
    const std::optional<RunRecord> read = store.get_run(written.id, TraceLoad::kWith);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->id, written.id);
    expect_same_run(*read, written);
    ASSERT_EQ(read->trace.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(read->trace[i].t_s, written.trace[i].t_s);
        EXPECT_EQ(read->trace[i].power_instant_w, written.trace[i].power_instant_w);
        EXPECT_EQ(read->trace[i].power_average_w, written.trace[i].power_average_w);
        EXPECT_EQ(read->trace[i].energy_j, written.trace[i].energy_j);
        EXPECT_EQ(read->trace[i].sm_clock_mhz, written.trace[i].sm_clock_mhz);
        EXPECT_EQ(read->trace[i].memory_used_mib, written.trace[i].memory_used_mib);
        EXPECT_EQ(read->trace[i].gpu_utilization_pct, written.trace[i].gpu_utilization_pct);
        EXPECT_EQ(read->trace[i].memory_utilization_pct, written.trace[i].memory_utilization_pct);
    }
    EXPECT_TRUE(store.get_run(written.id)->trace.empty());  // without the trace by default
}

TEST(Store, EmptyOptionalsStayNullNotZero) {
    const fs::path path = fresh_path("nulls");
    RunRecord r;
    r.started_at = "2026-01-01T00:00:00Z";
    r.backend = "cpu";
    r.mode = "work";
    r.provenance.migscope_version = "0.4.0";
    r.provenance.migscope_commit = "unknown";
    JobRecord j;
    j.name = "a";
    j.mode = "train";
    j.partition = "cores 0-1";
    j.status = "ok";
    r.jobs = {j};
    Store store = Store::open(path.string());
    r.id = store.add_run(r);
    const RunRecord read = *store.get_run(r.id);
    expect_same_run(read, r);
    EXPECT_FALSE(read.counter_energy_j);
    EXPECT_FALSE(read.provenance.gpu_name);
    EXPECT_FALSE(read.provenance.power_limit_w);
    EXPECT_FALSE(read.provenance.cuda_injection);
    EXPECT_FALSE(read.jobs[0].items_per_s);
    EXPECT_FALSE(read.jobs[0].batch);
    EXPECT_FALSE(read.layout);
}

TEST(Store, ListsRunsInIdOrderWithJobsAndIdsIncrease) {
    const fs::path path = fresh_path("list");
    Store store = Store::open(path.string());
    RunRecord r = full_record();
    r.trace.clear();
    const int64_t first = store.add_run(r);
    r.label = "second";
    const int64_t second = store.add_run(r);
    EXPECT_GT(second, first);
    const std::vector<RunRecord> runs = store.list_runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].id, first);
    EXPECT_EQ(runs[1].id, second);
    EXPECT_EQ(runs[1].label, "second");
    EXPECT_EQ(runs[1].jobs.size(), 2u);
    EXPECT_TRUE(runs[0].trace.empty());
    EXPECT_FALSE(store.get_run(second + 100));
}

TEST(Store, RefusesANewerSchemaVersionNamingBoth) {
    const fs::path path = fresh_path("newer");
    { Store::open(path.string()); }
    {
        Database db = Database::open(path.string(), OpenMode::kExisting);
        db.exec("UPDATE schema_version SET version = " + std::to_string(kSchemaVersion + 41));
    }
    try {
        Store::open(path.string(), OpenMode::kExisting);
        FAIL() << "a newer schema was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        const std::string message = e.what();
        EXPECT_NE(message.find("version " + std::to_string(kSchemaVersion + 41)), std::string::npos)
            << message;
        EXPECT_NE(message.find("version " + std::to_string(kSchemaVersion)), std::string::npos)
            << message;
    }
}

// A damaged version (0, negative, text, fractional) is bad input naming the file, never a
// migration: it once indexed the migration table out of bounds.
TEST(Store, RefusesAVersionThatIsNotOneOfOurs) {
    for (const std::string value : {"0", "-100000", "'three'", "2.5", "X'00'"}) {
        const fs::path path = fresh_path("bad-version");
        { Store::open(path.string()); }
        {
            Database db = Database::open(path.string(), OpenMode::kExisting);
            db.exec("UPDATE schema_version SET version = " + value);
        }
        for (const OpenMode mode : {OpenMode::kRead, OpenMode::kExisting, OpenMode::kCreate}) {
            try {
                Store::open(path.string(), mode);
                ADD_FAILURE() << "schema_version " << value << " was accepted";
            } catch (const Error& e) {
                EXPECT_EQ(e.kind(), ErrorKind::kInput) << value;
                EXPECT_NE(std::string(e.what()).find("not a results schema version"),
                          std::string::npos)
                    << e.what();
            }
        }
    }
}

// A reader that finds the file another migscope has only just created must not make it a store
// itself (both would create the schema at once).
TEST(Store, AReaderNeverCreatesTheSchemaInAnEmptyFile) {
    const fs::path path = fresh_path("empty");
    std::ofstream(path.string()).close();
    for (const OpenMode mode : {OpenMode::kRead, OpenMode::kExisting}) {
        try {
            Store::open(path.string(), mode);
            ADD_FAILURE();
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            EXPECT_NE(std::string(e.what()).find("not a migscope results store"),
                      std::string::npos);
        }
    }
    {
        Database db = Database::open(path.string(), OpenMode::kExisting);
        Statement tables(db, "SELECT count(*) FROM sqlite_master");
        ASSERT_TRUE(tables.step());
        EXPECT_EQ(tables.int64_at(0), 0);
    }
    Store::open(path.string(), OpenMode::kCreate);  // a writer does
}

TEST(Store, AMissingFileOrAForeignDatabaseIsAnInputError) {
    const fs::path path = fresh_path("missing");
    try {
        Store::open(path.string(), OpenMode::kExisting);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
    }
    {
        Database db = Database::open(path.string(), OpenMode::kCreate);
        db.exec("CREATE TABLE other (x INTEGER)");
    }
    EXPECT_THROW(Store::open(path.string()), Error);
    // A folder is said to be one, in every mode (SQLite itself says "disk I/O error").
    const fs::path folder = fresh_path("folder");
    fs::create_directories(folder);
    for (const OpenMode mode : {OpenMode::kRead, OpenMode::kExisting, OpenMode::kCreate}) {
        try {
            Store::open(folder.string(), mode);
            FAIL();
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            EXPECT_EQ(std::string(e.what()),
                      "no results database " + folder.string() + ": it is a folder");
        }
    }
}

// The full record as a version-1 store holds it: without the fields versions 2 to 9 added.
RunRecord version_one_record() {
    RunRecord old = full_record();
    old.experiment.reset();
    old.cell_key.reset();
    old.idle_state.reset();
    old.deep_idle_power_w.reset();
    old.provenance.power_limit_w.reset();
    old.provenance.cuda_injection.reset();
    for (JobRecord& j : old.jobs) {
        j.step_mode.reset();
        j.memory_utilization_pct.reset();
        j.span_s.reset();
        j.items_per_s_spread_pct.reset();
    }
    for (TraceSample& t : old.trace) {
        t.gpu_utilization_pct.reset();
        t.memory_utilization_pct.reset();
    }
    return old;
}

// A store as migscope wrote it before experiment sweeps: one run, schema version 1.
void make_version_one_store(const fs::path& path) {
    for (const char* backup : {".schema-v1.bak", ".schema-v1.1.bak"})
        fs::remove(path.string() + backup);
    {
        Store store = Store::open(path.string());
        store.add_run(version_one_record());
    }
    // back to version 1: the columns and indexes versions 2 to 9 added are dropped
    Database db = Database::open(path.string(), OpenMode::kExisting);
    db.exec(
        "ALTER TABLE jobs DROP COLUMN memory_utilization_pct; ALTER TABLE power_samples DROP "
        "COLUMN gpu_utilization_pct; ALTER TABLE power_samples DROP COLUMN "
        "memory_utilization_pct; "
        "DROP INDEX runs_host; ALTER TABLE runs DROP COLUMN gpu_index; ALTER TABLE runs DROP "
        "COLUMN host_run_id; "
        "DROP INDEX runs_cell; ALTER TABLE runs DROP COLUMN experiment; ALTER TABLE runs "
        "DROP COLUMN cell_key; ALTER TABLE jobs DROP COLUMN step_mode; "
        "ALTER TABLE runs DROP COLUMN idle_state; ALTER TABLE runs DROP COLUMN deep_idle_power_w; "
        "ALTER TABLE runs DROP COLUMN power_limit_w; ALTER TABLE runs DROP COLUMN cuda_injection; "
        "ALTER TABLE jobs DROP COLUMN span_s; ALTER TABLE jobs DROP COLUMN items_per_s_spread_pct; "
        "UPDATE schema_version SET version = 1");
}

int64_t version_in(const fs::path& path) {
    Database db = Database::open(path.string(), OpenMode::kRead);
    Statement version(db, "SELECT version FROM schema_version");
    EXPECT_TRUE(version.step());
    const int64_t v = version.int64_at(0);
    EXPECT_FALSE(version.step()) << "one version row";
    return v;
}

// A version-1 store is migrated when a writer opens it, once, after a copy of it is kept: its
// runs are kept, the new columns are NULL, and new runs can use them.
TEST(Store, AWriterMigratesAVersionOneStoreAfterKeepingACopy) {
    const fs::path path = fresh_path("v1");
    make_version_one_store(path);
    Store store = Store::open(path.string(), OpenMode::kExisting);
    ASSERT_TRUE(store.upgrade().has_value());
    EXPECT_EQ(store.upgrade()->from_version, 1);
    EXPECT_EQ(store.upgrade()->backup_path, path.string() + ".schema-v1.bak");
    EXPECT_EQ(version_in(path), kSchemaVersion);
    EXPECT_EQ(version_in(store.upgrade()->backup_path), 1);
    EXPECT_NE(describe(*store.upgrade(), path.string()).find(store.upgrade()->backup_path),
              std::string::npos);
    EXPECT_FALSE(Store::open(path.string()).upgrade().has_value()) << "migrated once";

    const std::vector<RunRecord> runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    expect_same_run(runs[0], version_one_record());
    const int64_t id = store.add_run(full_record());
    EXPECT_EQ(store.get_run(id)->cell_key, full_record().cell_key);

    make_version_one_store(path);  // a second old store there: its copy gets a free name
    std::ofstream(path.string() + ".schema-v1.bak") << "an earlier copy";
    EXPECT_EQ(Store::open(path.string()).upgrade()->backup_path,
              path.string() + ".schema-v1.1.bak");
}

// A reader converts an old store in memory and leaves the file as it was.
TEST(Store, AReaderReadsAVersionOneStoreWithoutMigratingIt) {
    const fs::path path = fresh_path("v1-read");
    make_version_one_store(path);
    Store store = Store::open(path.string(), OpenMode::kRead);
    EXPECT_FALSE(store.upgrade().has_value());
    const std::vector<RunRecord> runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    expect_same_run(runs[0], version_one_record());
    EXPECT_EQ(store.stored_cells("anything").size(), 0u);
    EXPECT_EQ(version_in(path), 1);
    EXPECT_FALSE(fs::exists(path.string() + ".schema-v1.bak"));
}

// A host run's GPU rows: one transaction, each with its GPU index and the first row's id.
TEST(Store, AHostRunsGpuRowsShareTheFirstRowsId) {
    const fs::path path = fresh_path("host");
    Store store = Store::open(path.string());
    store.add_run(full_record());  // an earlier one-GPU run
    std::vector<RunRecord> gpus(3, full_record());
    for (size_t g = 0; g < gpus.size(); ++g)
        gpus[g].gpu_index = static_cast<int64_t>(g);
    const std::vector<int64_t> ids = store.add_host_run(gpus);
    ASSERT_EQ(ids.size(), 3u);
    for (size_t g = 0; g < ids.size(); ++g) {
        const std::optional<RunRecord> row = store.get_run(ids[g], TraceLoad::kWith);
        ASSERT_TRUE(row);
        EXPECT_EQ(row->gpu_index, static_cast<int64_t>(g));
        EXPECT_EQ(row->host_run_id, ids.front());
        EXPECT_EQ(row->trace.size(), full_record().trace.size());
    }
    EXPECT_FALSE(store.get_run(1)->host_run_id);
    // Store::host_run: the host run's rows in id order with their jobs, no trace; none for a
    // one-GPU run's id.
    const std::vector<RunRecord> host = store.host_run(ids.front());
    ASSERT_EQ(host.size(), 3u);
    for (size_t g = 0; g < host.size(); ++g) {
        EXPECT_EQ(host[g].id, ids[g]);
        EXPECT_EQ(host[g].jobs.size(), full_record().jobs.size());
        EXPECT_TRUE(host[g].trace.empty());
    }
    EXPECT_TRUE(store.host_run(1).empty());
}

// What --resume skips: finished runs of the experiment, with whether their baseline finished.
TEST(Store, StoredCellsAreTheExperimentsFinishedRunsWithTheirBaselines) {
    const fs::path path = fresh_path("cells");
    Store store = Store::open(path.string());
    auto add = [&](const std::string& experiment, const std::string& key, RunRole role,
                   std::optional<int64_t> parent, bool interrupted) {
        RunRecord r = full_record();
        r.experiment = experiment;
        r.cell_key = key;
        r.role = role;
        r.parent_id = parent;
        r.interrupted = interrupted;
        return store.add_run(r);
    };
    const int64_t a = add("x", "a", RunRole::kRun, std::nullopt, false);
    add("x", "a", RunRole::kBaseline, a, false);
    const int64_t b = add("x", "b", RunRole::kRun, std::nullopt, false);
    add("x", "b", RunRole::kBaseline, b, true);         // baseline interrupted
    add("x", "c", RunRole::kRun, std::nullopt, true);   // run interrupted
    add("y", "d", RunRole::kRun, std::nullopt, false);  // another experiment
    add("x", "e", RunRole::kRun, std::nullopt, false);  // no baseline
    const std::vector<StoredCell> cells = store.stored_cells("x");
    ASSERT_EQ(cells.size(), 3u);
    EXPECT_EQ(cells[0].cell_key, "a");
    EXPECT_TRUE(cells[0].has_baseline);
    EXPECT_EQ(cells[1].cell_key, "b");
    EXPECT_FALSE(cells[1].has_baseline);
    EXPECT_EQ(cells[2].cell_key, "e");
    EXPECT_FALSE(cells[2].has_baseline);
    EXPECT_TRUE(store.stored_cells("z").empty());
}

// --resume runs a cell again that did not finish: the finished attempt replaces the unfinished
// ones in the transaction that finishes it (its baseline's, or its run's without one), so each
// repetition is stored once; finished attempts and other cells are kept.
TEST(Store, AFinishedAttemptReplacesTheCellsUnfinishedOnes) {
    const fs::path path = fresh_path("attempts");
    Store store = Store::open(path.string());
    auto add = [&](const std::string& key, RunRole role, std::optional<int64_t> parent,
                   bool interrupted, EarlierAttempts earlier = EarlierAttempts::kKeep) {
        RunRecord r = full_record();
        r.experiment = "x";
        r.cell_key = key;
        r.role = role;
        r.parent_id = parent;
        r.interrupted = interrupted;
        return store.add_run(r, earlier);
    };
    // Cell a: a finished attempt (kept), one with its baseline interrupted, one interrupted.
    const int64_t a_done = add("a", RunRole::kRun, std::nullopt, false);
    add("a", RunRole::kBaseline, a_done, false);
    const int64_t a_cut = add("a", RunRole::kRun, std::nullopt, false);
    const int64_t a_cut_base = add("a", RunRole::kBaseline, a_cut, true);
    const int64_t a_stopped = add("a", RunRole::kRun, std::nullopt, true);
    // Cell b, and another experiment's cell a, with their baselines interrupted.
    const int64_t b_cut = add("b", RunRole::kRun, std::nullopt, false);
    add("b", RunRole::kBaseline, b_cut, true);
    RunRecord other = full_record();
    other.experiment = "y";
    other.cell_key = "a";
    other.role = RunRole::kRun;
    other.interrupted = false;
    const int64_t y_cut = store.add_run(other);
    ASSERT_EQ(store.list_runs().size(), 8u);

    // The resumed attempt of cell a: its run deletes only the interrupted attempt (the run with
    // an interrupted baseline may still be finished by it)...
    const int64_t a_new =
        add("a", RunRole::kRun, std::nullopt, false, EarlierAttempts::kReplaceUnfinished);
    auto ids = [&] {
        std::vector<int64_t> out;
        for (const RunRecord& r : store.list_runs())
            out.push_back(r.id);
        return out;
    };
    auto holds = [&](int64_t id) {
        const std::vector<int64_t> all = ids();
        return std::find(all.begin(), all.end(), id) != all.end();
    };
    EXPECT_FALSE(holds(a_stopped));
    EXPECT_TRUE(holds(a_cut));
    // ... an interrupted baseline of it replaces nothing ...
    add("a", RunRole::kBaseline, a_new, true, EarlierAttempts::kReplaceUnfinished);
    EXPECT_TRUE(holds(a_cut));
    // ... and its finished baseline replaces the attempt without one, with its baseline.
    const int64_t a_new_base =
        add("a", RunRole::kBaseline, a_new, false, EarlierAttempts::kReplaceUnfinished);
    EXPECT_FALSE(holds(a_cut));
    EXPECT_FALSE(holds(a_cut_base));
    EXPECT_TRUE(holds(a_done));
    EXPECT_TRUE(holds(a_new));
    EXPECT_TRUE(holds(a_new_base));
    EXPECT_TRUE(holds(b_cut));
    EXPECT_TRUE(holds(y_cut));
    // Cell a's runs: the finished attempts, each with its finished baseline.
    int runs_of_a = 0;
    for (const RunRecord& r : store.list_runs()) {
        if (r.experiment == "x" && r.cell_key == "a" && r.role == RunRole::kRun)
            ++runs_of_a;
    }
    EXPECT_EQ(runs_of_a, 2);
    const std::vector<StoredCell> cells = store.stored_cells("x");
    ASSERT_EQ(cells.size(), 3u);  // a twice (two finished attempts), b once
    EXPECT_TRUE(cells[0].has_baseline);
    EXPECT_TRUE(cells[2].has_baseline);
    // The deleted runs' jobs and traces went with them.
    Database db = Database::open(path.string(), OpenMode::kRead);
    Statement orphans(db,
                      "SELECT (SELECT count(*) FROM jobs WHERE run_id NOT IN (SELECT id FROM "
                      "runs)) + (SELECT count(*) FROM power_samples WHERE run_id NOT IN "
                      "(SELECT id FROM runs))");
    ASSERT_TRUE(orphans.step());
    EXPECT_EQ(orphans.int64_at(0), 0);
}

// A host run's attempt is replaced whole: every GPU row of it, and its baseline's.
TEST(Store, AFinishedHostAttemptReplacesEveryRowOfAnUnfinishedOne) {
    const fs::path path = fresh_path("host-attempts");
    Store store = Store::open(path.string());
    auto rows = [](RunRole role, std::optional<int64_t> parent, bool interrupted) {
        std::vector<RunRecord> out;
        for (int64_t g = 0; g < 2; ++g) {
            RunRecord r = full_record();
            r.experiment = "x";
            r.cell_key = "h";
            r.role = role;
            r.parent_id = parent;
            r.interrupted = interrupted;
            r.gpu_index = g;
            out.push_back(r);
        }
        return out;
    };
    const std::vector<int64_t> old_run = store.add_host_run(rows(RunRole::kRun, {}, false));
    store.add_host_run(rows(RunRole::kBaseline, old_run.front(), true));
    ASSERT_EQ(store.list_runs().size(), 4u);
    const std::vector<int64_t> run =
        store.add_host_run(rows(RunRole::kRun, {}, false), EarlierAttempts::kReplaceUnfinished);
    EXPECT_EQ(store.list_runs().size(), 6u);
    store.add_host_run(rows(RunRole::kBaseline, run.front(), false),
                       EarlierAttempts::kReplaceUnfinished);
    const std::vector<RunRecord> left = store.list_runs();
    ASSERT_EQ(left.size(), 4u);
    for (const RunRecord& r : left) {
        EXPECT_FALSE(r.interrupted);
        EXPECT_GE(r.id, run.front());
    }
}

// What a sweep's plan may meet when another sweep is creating the store: a file SQLite reads as
// a database without a table. A store, or a file that is no database, is not that.
TEST(Store, AnEmptyDatabaseIsOneWithoutATable) {
    const fs::path empty = fresh_path("empty-file");
    std::ofstream(empty.string()).flush();
    EXPECT_TRUE(is_empty_database(empty.string()));
    const fs::path store = fresh_path("not-empty");
    Store::open(store.string());
    EXPECT_FALSE(is_empty_database(store.string()));
    const fs::path text = fresh_path("text");
    std::ofstream(text.string()) << "not a database, but long enough to have a header......\n";
    EXPECT_FALSE(is_empty_database(text.string()));
    EXPECT_FALSE(is_empty_database((fs::path(testing::TempDir()) / "no-such.db").string()));
}

// A host run over several GPUs is one stored cell: its GPU count, its baseline (linked to its
// first row) and whether one of its GPUs failed.
TEST(Store, AHostRunIsOneStoredCellWithItsGpusAndWhetherOneFailed) {
    const fs::path path = fresh_path("host-cells");
    Store store = Store::open(path.string());
    auto host = [&](const std::string& key, size_t count, RunRole role,
                    std::optional<int64_t> parent, std::optional<size_t> failed_gpu) {
        std::vector<RunRecord> gpus(count, full_record());
        for (size_t g = 0; g < count; ++g) {
            gpus[g].experiment = "x";
            gpus[g].cell_key = key;
            gpus[g].role = role;
            gpus[g].parent_id = parent;
            gpus[g].gpu_index = static_cast<int64_t>(g);
            gpus[g].interrupted = false;
            for (JobRecord& j : gpus[g].jobs)
                j.status = failed_gpu == g ? "gpu failed" : "ok";
        }
        return store.add_host_run(gpus);
    };
    const std::vector<int64_t> a = host("a", 3, RunRole::kRun, std::nullopt, std::nullopt);
    host("a", 3, RunRole::kBaseline, a.front(), std::nullopt);
    host("b", 2, RunRole::kRun, std::nullopt, 1);
    const std::vector<StoredCell> cells = store.stored_cells("x");
    ASSERT_EQ(cells.size(), 2u);
    EXPECT_EQ(cells[0].cell_key, "a");
    EXPECT_EQ(cells[0].gpus, 3);
    EXPECT_TRUE(cells[0].has_baseline);
    EXPECT_FALSE(cells[0].gpu_failed);
    EXPECT_EQ(cells[1].cell_key, "b");
    EXPECT_EQ(cells[1].gpus, 2);
    EXPECT_TRUE(cells[1].gpu_failed);
}

int64_t count_runs(const fs::path& path) {
    Database db = Database::open(path.string(), OpenMode::kExisting);
    Statement s(db, "SELECT count(*) FROM runs");
    s.step();
    return s.int64_at(0);
}

// Starts a child that adds `run` in a loop, waits until it has committed a few more runs, lets
// it go on for `delay`, and kills it with SIGKILL wherever it is.
void kill_a_writer(const fs::path& path, const RunRecord& run, std::chrono::milliseconds delay) {
    const int64_t before = count_runs(path);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        try {
            Store store = Store::open(path.string());
            for (;;)
                store.add_run(run);
        } catch (const std::exception&) {
            _exit(2);
        }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (count_runs(path) < before + 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(delay);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself: status " << status;
    ASSERT_GE(count_runs(path), before + 3) << "the writer committed too few runs to test";
}

// Writers killed with SIGKILL in the middle of a sweep leave only whole runs behind.
TEST(Store, AKilledWriterLeavesOnlyWholeRuns) {
    const fs::path path = fresh_path("killed");
    { Store::open(path.string()); }  // the schema exists before the first child writes
    RunRecord r = full_record();
    r.trace.resize(2000, r.trace[2]);  // large enough that a kill can land inside a transaction
    // Several kills at different moments, each after reopening what the previous one left.
    for (int delay_ms : {0, 1, 3, 7, 13})
        kill_a_writer(path, r, std::chrono::milliseconds(delay_ms));
    const size_t committed = static_cast<size_t>(count_runs(path));

    Store store = Store::open(path.string(), OpenMode::kExisting);
    {
        Database db = Database::open(path.string(), OpenMode::kExisting);
        Statement check(db, "PRAGMA integrity_check");
        ASSERT_TRUE(check.step());
        EXPECT_EQ(check.text_at(0), "ok");
        Statement orphans(db,
                          "SELECT (SELECT count(*) FROM jobs WHERE run_id NOT IN (SELECT id FROM "
                          "runs)) + (SELECT count(*) FROM power_samples WHERE run_id NOT IN "
                          "(SELECT id FROM runs))");
        orphans.step();
        EXPECT_EQ(orphans.int64_at(0), 0);
    }
    const std::vector<RunRecord> runs = store.list_runs();
    EXPECT_GE(runs.size(), committed);
    for (const RunRecord& listed : runs) {
        const RunRecord run = *store.get_run(listed.id, TraceLoad::kWith);
        EXPECT_EQ(run.jobs.size(), r.jobs.size()) << "run " << run.id;
        EXPECT_EQ(run.trace.size(), r.trace.size()) << "run " << run.id;
    }
    // The store still takes runs after the crash.
    EXPECT_GT(store.add_run(r), runs.back().id);
}

// Two processes writing one store at once: the busy timeout makes each wait its turn.
TEST(Store, ConcurrentWritersBothGetTheirRunsIn) {
    const fs::path path = fresh_path("concurrent");
    { Store::open(path.string()); }
    RunRecord r = full_record();
    r.trace.resize(500, r.trace[2]);
    std::vector<pid_t> children;
    for (int c = 0; c < 2; ++c) {
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            try {
                Store store = Store::open(path.string());
                for (int i = 0; i < 10; ++i)
                    store.add_run(r);
            } catch (const std::exception&) {
                _exit(2);
            }
            _exit(0);
        }
        children.push_back(child);
    }
    for (pid_t child : children) {
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    }
    Store store = Store::open(path.string(), OpenMode::kExisting);
    const std::vector<RunRecord> runs = store.list_runs();
    ASSERT_EQ(runs.size(), 20u);
    for (size_t i = 1; i < runs.size(); ++i)
        EXPECT_GT(runs[i].id, runs[i - 1].id);
}

// Damaged files found by fuzzing the reader (fuzz/store_fuzz.cpp) are input errors naming the
// file, never internal errors: here a version-2 store whose header's text encoding SQLite refused
// only while the reader converted it in memory.
// A second one: a schema that makes SQLite answer "out of memory" when a statement is prepared.
TEST(Store, ADamagedOldStoreIsAnInputErrorForAReader) {
    for (const char* name : {"damaged-encoding-v2", "fuzz-nomem-schema"}) {
        const fs::path path = fresh_path(name);
        fs::copy_file(fs::path(STORE_TEST_DATA_DIR) / (std::string(name) + ".db"), path);
        try {
            Store::open(path.string(), OpenMode::kRead).list_runs();
            FAIL() << "a damaged store was read: " << name;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
            EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
        }
    }
}

// What opening (and reading every run of) the store at `path` with `mode` throws: "" if nothing.
std::string open_error(const fs::path& path, OpenMode mode) {
    try {
        Store store = Store::open(path.string(), mode);
        for (const RunRecord& r : store.list_runs())
            store.get_run(r.id, TraceLoad::kWith);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
        return e.what();
    }
    return "";
}

// A store of our version without one of our tables or columns is damaged: readers and writers
// refuse it when they open it, naming the table (and the column).
TEST(Store, AStoreWithoutOneOfOurTablesOrColumnsIsDamagedNamingIt) {
    const fs::path path = fresh_path("no-table");
    Store::open(path.string()).add_run(full_record());
    Database::open(path.string(), OpenMode::kExisting).exec("DROP TABLE power_samples");
    for (OpenMode mode : {OpenMode::kRead, OpenMode::kExisting})
        EXPECT_EQ(open_error(path, mode),
                  path.string() +
                      " is damaged: it has no table power_samples (results schema "
                      "version " +
                      std::to_string(kSchemaVersion) + ")");

    const fs::path no_column = fresh_path("no-column");
    Store::open(no_column.string()).add_run(full_record());
    Database::open(no_column.string(), OpenMode::kExisting)
        .exec("ALTER TABLE jobs DROP COLUMN step_mode");
    for (OpenMode mode : {OpenMode::kRead, OpenMode::kCreate})
        EXPECT_EQ(open_error(no_column, mode),
                  no_column.string() +
                      " is damaged: table jobs has no column step_mode "
                      "(results schema version " +
                      std::to_string(kSchemaVersion) + ")");
    // A table or column of the user's own is no damage.
    const fs::path extra = fresh_path("extra");
    Store::open(extra.string()).add_run(full_record());
    Database::open(extra.string(), OpenMode::kExisting)
        .exec("CREATE TABLE notes (text TEXT); ALTER TABLE runs ADD COLUMN mine TEXT");
    EXPECT_EQ(open_error(extra, OpenMode::kRead), "");
}

// A damaged page under a table: reading it is an input error naming the store and the table.
TEST(Store, ADamagedPageIsAnInputErrorNamingTheTable) {
    const fs::path path = fresh_path("damaged-page");
    {
        Store store = Store::open(path.string());
        RunRecord run = full_record();
        const TraceSample sample = run.trace.front();
        run.trace.assign(5000, sample);  // several pages
        store.add_run(run);
    }
    int64_t root_page = 0, page_size = 0;
    {
        Database db = Database::open(path.string(), OpenMode::kExisting);
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        Statement root(db, "SELECT rootpage FROM sqlite_master WHERE name = 'power_samples'");
        ASSERT_TRUE(root.step());
        root_page = root.int64_at(0);
        Statement size(db, "PRAGMA page_size");
        ASSERT_TRUE(size.step());
        page_size = size.int64_at(0);
    }
    {
        std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp((root_page - 1) * page_size);
        const std::string garbage(static_cast<size_t>(page_size), '\xee');
        file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    const std::string error = open_error(path, OpenMode::kRead);
    EXPECT_NE(error.find(path.string() + " is damaged (table power_samples)"), std::string::npos)
        << error;
}

// Runs `body` as a user whom file permissions bind: this process when it is not root; as root
// (CI), a child process as `nobody` (65534), since root writes read-only files. Returns what
// body returns: "" when all was as expected, else what was not.
std::string as_unprivileged(const std::function<std::string()>& body) {
    if (geteuid() != 0)
        return body();
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return "pipe failed";
    const pid_t child = fork();
    if (child == 0) {
        close(pipe_fds[0]);
        std::string result;
        if (setgid(65534) != 0 || setuid(65534) != 0)
            result = "setuid(nobody) failed";
        else
            result = body();
        if (write(pipe_fds[1], result.data(), result.size()) < 0)
            _exit(3);
        _exit(0);
    }
    close(pipe_fds[1]);
    std::string result;
    char buffer[256];
    for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
        result.append(buffer, static_cast<size_t>(n));
    close(pipe_fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "the unprivileged child failed: status " + std::to_string(status);
    return result;
}

// "" when opening `path` for writing is refused as bad input naming the file.
std::string writer_refused(const fs::path& path, OpenMode mode) {
    try {
        Store::open(path.string(), mode);
        return "a writer opened " + path.string();
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInput)
            return std::string("not an input error: ") + e.what();
        if (std::string(e.what()).find(path.string()) == std::string::npos)
            return std::string("the file is not named: ") + e.what();
    }
    return "";
}

// "" when a reader lists the one run of the store at `path`.
std::string reader_lists(const fs::path& path) {
    try {
        Store store = Store::open(path.string(), OpenMode::kRead);
        const std::vector<RunRecord> runs = store.list_runs();
        if (runs.size() != 1)
            return "listed " + std::to_string(runs.size()) + " runs";
        if (!store.get_run(runs[0].id, TraceLoad::kWith))
            return "could not get the run";
    } catch (const std::exception& e) {
        return std::string("a reader failed: ") + e.what();
    }
    return "";
}

// A store in a folder of its own, with one run, written and closed (its -wal and -shm gone).
fs::path store_in_own_folder(const std::string& name) {
    const fs::path dir = fs::path(testing::TempDir()) / "store-test" / name;
    std::error_code ignored;  // a folder an earlier run left read-only
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::all);  // the unprivileged user may write here
    const fs::path path = dir / "results.db";
    Store::open(path.string()).add_run(full_record());
    return path;
}

std::string file_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A read-only store file: a writer is refused at open, before any run is measured (it once
// measured the whole run and then failed to insert it); a reader lists it and leaves every byte
// as it was.
TEST(Store, AReadOnlyStoreFileIsRefusedToWritersAndReadByReaders) {
    const fs::path path = store_in_own_folder("read-only-file");
    fs::permissions(path, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    const std::string before = file_bytes(path);
    EXPECT_EQ(as_unprivileged([&] { return writer_refused(path, OpenMode::kCreate); }), "");
    EXPECT_EQ(as_unprivileged([&] { return writer_refused(path, OpenMode::kExisting); }), "");
    EXPECT_EQ(as_unprivileged([&] { return reader_lists(path); }), "");
    EXPECT_EQ(file_bytes(path), before);
}

// A store in a read-only folder: a writer cannot make the journal files and is refused at open;
// a reader, which never writes, lists it (readers once took a write transaction and failed).
TEST(Store, AStoreInAReadOnlyFolderIsRefusedToWritersAndReadByReaders) {
    const fs::path path = store_in_own_folder("read-only-folder");
    const std::string before = file_bytes(path);
    fs::permissions(path.parent_path(), fs::perms::owner_read | fs::perms::owner_exec |
                                            fs::perms::group_read | fs::perms::group_exec |
                                            fs::perms::others_read | fs::perms::others_exec);
    EXPECT_EQ(as_unprivileged([&] { return writer_refused(path, OpenMode::kCreate); }), "");
    EXPECT_EQ(as_unprivileged([&] { return reader_lists(path); }), "");
    EXPECT_EQ(as_unprivileged(
                  [&] { return writer_refused(path.parent_path() / "new.db", OpenMode::kCreate); }),
              "");
    fs::permissions(path.parent_path(), fs::perms::owner_all, fs::perm_options::add);
    EXPECT_EQ(file_bytes(path), before);
    EXPECT_FALSE(fs::exists(path.string() + "-wal"));
}

// SQLite's own read-only mode (what a read-only mount gives, for root too): the write check
// made at open refuses it; a reader reads.
TEST(Store, AWriterCheckRefusesAConnectionThatCannotWrite) {
    const fs::path path = store_in_own_folder("read-only-connection");
    Database db = Database::open(path.string(), OpenMode::kRead);
    try {
        prepare_schema(db, OpenMode::kExisting);
        FAIL() << "a read-only connection passed the write check";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
    EXPECT_FALSE(prepare_schema(db, OpenMode::kRead).has_value());
}

}  // namespace
}  // namespace migscope::store
