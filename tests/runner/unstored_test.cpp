// A measured run the results store cannot take is kept in the run directory and imports back
// as the run the store would have held. The fault is a full disk made by an SQLite VFS that
// wraps the default one and fails writes to the store's files on request (unprivileged, in
// process); the cpu backend and the stand-in worker measure the run.
#include "runner/unstored.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "runner/cell.h"
#include "runner/run_record.h"
#include "runner/sweep.h"
#include "store/fields.h"
#include "store/merge.h"

namespace migscope::runner {
namespace {

namespace fs = std::filesystem;

// The VFS: every call goes to the default VFS; while `full` is set, writes and truncations of
// the files whose names start with `prefix` (a store, its -wal and -journal) fail as a full disk.
struct FullDisk {
    static inline std::atomic<bool> full{false};
    static inline std::string prefix;
    static inline sqlite3_vfs* real = nullptr;
    static inline sqlite3_vfs vfs{};
    static inline sqlite3_io_methods methods{};

    struct File {
        sqlite3_file base;
        sqlite3_file* real;
        bool watched;
    };
    static sqlite3_file* inner(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }
    static bool failing(sqlite3_file* f) { return full && reinterpret_cast<File*>(f)->watched; }

    static int open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out) {
        File* file = reinterpret_cast<File*>(f);
        file->real = reinterpret_cast<sqlite3_file*>(file + 1);
        file->watched = name && !prefix.empty() && std::string(name).rfind(prefix, 0) == 0;
        const int rc = real->xOpen(real, name, file->real, flags, out);
        file->base.pMethods = file->real->pMethods ? &methods : nullptr;
        return rc;
    }

    static void install() {
        if (real)
            return;
        real = sqlite3_vfs_find(nullptr);
        vfs = *real;
        vfs.zName = "full-disk";
        vfs.szOsFile = static_cast<int>(sizeof(File)) + real->szOsFile;
        vfs.xOpen = open;
        vfs.pAppData = nullptr;
        methods.iVersion = 3;
        methods.xClose = [](sqlite3_file* f) { return inner(f)->pMethods->xClose(inner(f)); };
        methods.xRead = [](sqlite3_file* f, void* p, int n, sqlite3_int64 o) {
            return inner(f)->pMethods->xRead(inner(f), p, n, o);
        };
        methods.xWrite = [](sqlite3_file* f, const void* p, int n, sqlite3_int64 o) {
            return failing(f) ? SQLITE_FULL : inner(f)->pMethods->xWrite(inner(f), p, n, o);
        };
        methods.xTruncate = [](sqlite3_file* f, sqlite3_int64 size) {
            return failing(f) ? SQLITE_FULL : inner(f)->pMethods->xTruncate(inner(f), size);
        };
        methods.xSync = [](sqlite3_file* f, int flags) {
            return inner(f)->pMethods->xSync(inner(f), flags);
        };
        methods.xFileSize = [](sqlite3_file* f, sqlite3_int64* size) {
            return inner(f)->pMethods->xFileSize(inner(f), size);
        };
        methods.xLock = [](sqlite3_file* f, int l) {
            return inner(f)->pMethods->xLock(inner(f), l);
        };
        methods.xUnlock = [](sqlite3_file* f, int l) {
            return inner(f)->pMethods->xUnlock(inner(f), l);
        };
        methods.xCheckReservedLock = [](sqlite3_file* f, int* out) {
            return inner(f)->pMethods->xCheckReservedLock(inner(f), out);
        };
        methods.xFileControl = [](sqlite3_file* f, int op, void* arg) {
            return inner(f)->pMethods->xFileControl(inner(f), op, arg);
        };
        methods.xSectorSize = [](sqlite3_file* f) {
            return inner(f)->pMethods->xSectorSize(inner(f));
        };
        methods.xDeviceCharacteristics = [](sqlite3_file* f) {
            return inner(f)->pMethods->xDeviceCharacteristics(inner(f));
        };
        methods.xShmMap = [](sqlite3_file* f, int page, int size, int extend, void volatile** p) {
            return inner(f)->pMethods->xShmMap(inner(f), page, size, extend, p);
        };
        methods.xShmLock = [](sqlite3_file* f, int offset, int n, int flags) {
            return inner(f)->pMethods->xShmLock(inner(f), offset, n, flags);
        };
        methods.xShmBarrier = [](sqlite3_file* f) { inner(f)->pMethods->xShmBarrier(inner(f)); };
        methods.xShmUnmap = [](sqlite3_file* f, int del) {
            return inner(f)->pMethods->xShmUnmap(inner(f), del);
        };
        // No memory-mapped reads: every page goes through xRead.
        methods.xFetch = [](sqlite3_file*, sqlite3_int64, int, void** p) {
            *p = nullptr;
            return SQLITE_OK;
        };
        methods.xUnfetch = [](sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; };
        ASSERT_EQ(sqlite3_vfs_register(&vfs, 1), SQLITE_OK);  // the default from now on
    }
};

class Unstored : public ::testing::Test {
  protected:
    void SetUp() override {
        FullDisk::install();
        dir_ = fs::path(::testing::TempDir()) /
               ("unstored-" +
                std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        m_.worker = FAKE_WORKER;
        m_.idle_probe_s = 0;
        m_.marginal_probe_s = 0;
        setenv("FAKE_STEP_S", "0.01", 1);
        setenv("MIGSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    }
    void TearDown() override {
        FullDisk::full = false;
        FullDisk::prefix.clear();
        unsetenv("MIGSCOPE_NVML_LIBRARY");
    }

    CellRequest request(const std::string& run_dir) const {
        CellRequest r;
        r.backend = partition::BackendKind::kCpu;
        r.jobs = partition::jobs_from_options("resnet-tiny,gpt2-tiny", "");
        r.duration_s = 0.3;
        r.baseline = true;
        r.run_dir = (dir_ / run_dir).string();
        r.label = "kept";
        r.experiment = "e";
        r.cell_key = "k";
        return r;
    }

    fs::path dir_;
    Measurement m_;
};

// Every stored field of a run (its id and parent's id apart: the store assigns them), its jobs'
// and its trace's, equal.
void expect_same(const store::RunRecord& a, const store::RunRecord& b) {
    for (const store::Field<store::RunRecord>& f : store::run_fields()) {
        if (f.name == "id" || f.name == "parent_id" || f.name == "host_run_id")
            continue;
        EXPECT_TRUE(f.get(a) == f.get(b)) << f.name;
    }
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    for (size_t i = 0; i < a.jobs.size(); ++i) {
        for (const store::Field<store::JobRecord>& f : store::job_fields())
            EXPECT_TRUE(f.get(a.jobs[i]) == f.get(b.jobs[i])) << "job " << i << ": " << f.name;
    }
    ASSERT_EQ(a.trace.size(), b.trace.size());
    for (size_t i = 0; i < a.trace.size(); ++i) {
        EXPECT_EQ(a.trace[i].t_s, b.trace[i].t_s);
        EXPECT_EQ(a.trace[i].power_instant_w, b.trace[i].power_instant_w);
        EXPECT_EQ(a.trace[i].energy_j, b.trace[i].energy_j);
        EXPECT_EQ(a.trace[i].memory_utilization_pct, b.trace[i].memory_utilization_pct);
    }
}

// The store's disk fills while the run is measured: the run and its baseline are kept in the
// run directory's unstored-runs.db, and importing that file gives the rows the store would have
// held, field by field; importing it again adds nothing.
TEST_F(Unstored, AFullStoreKeepsTheRunInTheRunDirectoryAndItImportsAsItWouldHaveBeenStored) {
    const std::string db_path = (dir_ / "full.db").string();
    FullDisk::prefix = db_path;                     // watched from their opening on
    store::Store db = store::Store::open(db_path);  // the pre-run check passes
    FullDisk::full = true;
    const Machine machine = open_machine(0);
    const CellRequest r = request("run");
    const CellOutcome out = run_cell(machine, m_, r, &db, {});
    FullDisk::full = false;

    ASSERT_TRUE(out.unstored);
    EXPECT_FALSE(out.run_id);
    EXPECT_FALSE(out.baseline_id);
    EXPECT_EQ(out.unstored->file, r.run_dir + "/unstored-runs.db");
    EXPECT_EQ(out.unstored->file_problem, "");
    EXPECT_NE(out.unstored->store_problem.find("full"), std::string::npos)
        << out.unstored->store_problem;
    EXPECT_TRUE(db.list_runs().empty());
    const std::string said = describe(*out.unstored, db_path, r.run_dir);
    EXPECT_NE(said.find("the results store " + db_path + " could not take the run"),
              std::string::npos)
        << said;
    EXPECT_NE(
        said.find("migscope results import " + r.run_dir + "/unstored-runs.db --db " + db_path),
        std::string::npos)
        << said;
    EXPECT_EQ(out.run_dir_problem, "");
    EXPECT_TRUE(fs::file_size(r.run_dir + "/result.json") > 0);

    // What the store would have held: the runner's records of the run and its baseline.
    ASSERT_TRUE(out.baseline);
    const store::RunRecord run = to_run_record(out.run, out.context);
    const store::RunRecord baseline = to_run_record(*out.baseline, out.baseline_context);
    ASSERT_EQ(run.jobs.size(), 2u);

    store::Store kept = store::Store::open(out.unstored->file, store::OpenMode::kRead);
    const store::MergeCount n = store::merge_store(db, kept);
    EXPECT_EQ(n.added, 2);
    const std::vector<store::RunRecord> rows = db.list_runs();
    ASSERT_EQ(rows.size(), 2u);
    const auto imported_run = db.get_run(rows[0].id, store::TraceLoad::kWith);
    const auto imported_baseline = db.get_run(rows[1].id, store::TraceLoad::kWith);
    expect_same(*imported_run, run);
    expect_same(*imported_baseline, baseline);
    EXPECT_EQ(imported_run->role, store::RunRole::kRun);
    EXPECT_EQ(imported_baseline->parent_id, imported_run->id);
    EXPECT_EQ(imported_run->label, "kept");
    EXPECT_EQ(imported_run->cell_key, "k");
    // The cell counts as stored for --resume, and a second import adds nothing.
    ASSERT_EQ(db.stored_cells("e").size(), 1u);
    EXPECT_TRUE(db.stored_cells("e")[0].has_baseline);
    EXPECT_EQ(store::merge_store(db, kept).added, 0);
    EXPECT_EQ(db.list_runs().size(), 2u);
}

// The run went in, then the disk filled before its baseline: both are kept, and the import adds
// the baseline under the stored run.
TEST_F(Unstored, ABaselineTheStoreCouldNotTakeImportsUnderItsStoredRun) {
    const std::string db_path = (dir_ / "half.db").string();
    FullDisk::prefix = db_path;
    store::Store db = store::Store::open(db_path);
    const store::RunRecord run = [] {
        store::RunRecord r;
        r.started_at = "2026-12-04T10:00:00Z";
        r.label = "half";
        r.experiment = "e";
        r.cell_key = "k";
        r.backend = "cpu";
        r.mode = "duration";
        r.attribution_method = "m";
        r.provenance.migscope_version = "v";
        r.provenance.migscope_commit = "c";
        return r;
    }();
    store::RunRecord baseline = run;
    baseline.role = store::RunRole::kBaseline;
    baseline.started_at = "2026-12-04T10:01:00Z";
    baseline.backend = "sequential";
    CellRows rows;
    rows.run = {run};
    rows.baseline = {baseline};
    // The run's transaction went in; then the disk is full: store_cell stores nothing more
    // (its own add of the run fails first), and keeps the whole cell.
    const int64_t stored_id = db.add_run(run);
    FullDisk::full = true;
    std::optional<UnstoredRuns> unstored;
    fs::create_directories(dir_ / "run");
    const StoredIds ids =
        store_cell(db, rows, store::EarlierAttempts::kKeep, (dir_ / "run").string(), unstored);
    FullDisk::full = false;
    ASSERT_TRUE(unstored);
    EXPECT_TRUE(ids.run.empty());
    store::Store kept = store::Store::open(unstored->file, store::OpenMode::kRead);
    ASSERT_EQ(kept.list_runs().size(), 2u);
    const store::MergeCount n = store::merge_store(db, kept);
    EXPECT_EQ(n.added, 1);    // the baseline
    EXPECT_EQ(n.already, 1);  // the run
    const std::vector<store::RunRecord> all = db.list_runs();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].role, store::RunRole::kBaseline);
    EXPECT_EQ(all[1].parent_id, stored_id);
}

// Neither the store nor the run directory can take the run: the message says where the
// measured results still are.
TEST_F(Unstored, WhenTheFileCannotBeWrittenEitherTheMessageNamesResultJson) {
    const std::string db_path = (dir_ / "full.db").string();
    FullDisk::prefix = dir_.string();  // the store and the run directory: one full disk
    store::Store db = store::Store::open(db_path);
    const Machine machine = open_machine(0);
    const CellRequest r = request("run");
    FullDisk::full = true;
    const CellOutcome out = run_cell(machine, m_, r, &db, {});
    FullDisk::full = false;
    ASSERT_TRUE(out.unstored);
    EXPECT_NE(out.unstored->file_problem, "");
    const std::string said = describe(*out.unstored, db_path, r.run_dir);
    EXPECT_NE(said.find("could not be kept in " + r.run_dir + "/unstored-runs.db either"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("the measured results are in " + r.run_dir + "/result.json"),
              std::string::npos)
        << said;
}

class Cells : public SweepObserver {
  public:
    void cell_started(size_t, double, double) override {}
    void cell_finished(size_t, const SweepCellOutcome&) override { ++finished; }
    void cooling_down(double) override {}
    int finished = 0;
};

// A sweep whose store fills stops at that cell (the next would be lost to the store too), says
// where the run is kept, and after the import --resume runs only the cells not measured.
TEST_F(Unstored, ASweepStopsAtTheCellTheStoreCouldNotTakeAndResumesAfterTheImport) {
    const fs::path spec = dir_ / "spec.toml";
    std::ofstream(spec) << R"toml(
version = 1
name = "filling"
[[mix]]
name = "m"
on = "cpu"
backends = ["cpu"]
jobs = ["resnet-tiny"]
duration_s = 0.3
repetitions = 3
)toml";
    SweepOptions o;
    o.spec_path = spec.string();
    o.db = (dir_ / "sweep.db").string();
    o.run_dir = (dir_ / "runs").string();
    FullDisk::prefix = o.db;
    const Machine machine = open_machine(0);
    const SweepPlan plan = plan_sweep(o, machine, false);
    ASSERT_EQ(plan.todo.size(), 3u);
    Cells cells;
    SweepResult result;
    {
        store::Store db = store::Store::open(o.db);
        FullDisk::full = true;
        result = run_sweep(plan, machine, m_, db, {}, cells);
        FullDisk::full = false;
    }
    EXPECT_TRUE(result.unstored);
    EXPECT_EQ(cells.finished, 1);
    ASSERT_EQ(result.problems.size(), 1u);
    const std::string file = plan.todo[0].run_dir + "/unstored-runs.db";
    EXPECT_NE(result.problems[0].find("kept in " + file), std::string::npos) << result.problems[0];

    {
        store::Store db = store::Store::open(o.db);
        store::Store kept = store::Store::open(file, store::OpenMode::kRead);
        EXPECT_EQ(store::merge_store(db, kept).added, 1);
    }
    o.resume = true;
    o.run_dir = (dir_ / "runs-2").string();
    const SweepPlan rest = plan_sweep(o, machine, false);
    EXPECT_EQ(rest.already_stored, 1u);
    EXPECT_EQ(rest.todo.size(), 2u);
}

}  // namespace
}  // namespace migscope::runner
