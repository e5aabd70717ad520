// Tests of src/store/merge.cpp: runs from two stores brought together, each once, links mapped.
#include "store/merge.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "store/sqlite.h"

namespace migscope::store {
namespace {

namespace fs = std::filesystem;

fs::path fresh_store_path(const std::string& name) {
    const fs::path dir = fs::path(testing::TempDir()) / "merge-test";
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"})
        fs::remove(path.string() + suffix);
    return path;
}

// A run of cell `cell` started at second `second`, with one job and a two-point trace.
RunRecord run_at(int second, const std::string& cell, double energy_j) {
    RunRecord r;
    r.started_at =
        "2026-12-03T06:00:" + std::string(second < 10 ? "0" : "") + std::to_string(second) + "Z";
    r.experiment = "study";
    r.cell_key = cell;
    r.backend = "green";
    r.mode = "duration";
    r.window_s = 10;
    r.counter_energy_j = energy_j;
    r.attribution_method = "marginal";
    r.provenance.migscope_version = "0.4.0";
    r.provenance.migscope_commit = "abc";
    r.provenance.gpu_uuid = "GPU-1";
    JobRecord j;
    j.name = "resnet18";
    j.workload = "resnet18";
    j.mode = "train";
    j.partition = "1g.18gb";
    j.status = "ok";
    j.items_per_s = energy_j / 10;
    r.jobs = {j};
    r.trace = {{0.0, 100.0, 100.0, 5000.0, 1980.0, 1.0, 50.0, 20.0},
               {0.1, 600.0, 590.0, 5060.0, 1980.0, 1.0, 99.0, 40.0}};
    return r;
}

// Adds a run and its baseline; returns the run's id.
int64_t add_with_baseline(Store& s, int second, const std::string& cell, double energy_j) {
    RunRecord run = run_at(second, cell, energy_j);
    const int64_t id = s.add_run(run);
    RunRecord base = run_at(second + 1, cell, 3 * energy_j);
    base.role = RunRole::kBaseline;
    base.parent_id = id;
    s.add_run(base);
    return id;
}

TEST(MergeStore, AddsWhatTheTargetLacksWithParentsMappedAndTracesKept) {
    // Both stores start from the same two runs (a copy carried to two machines); each then
    // measured a different cell, with the same ids 3 and 4.
    Store target = Store::open(fresh_store_path("target").string());
    Store source = Store::open(fresh_store_path("source").string());
    for (Store* s : {&target, &source})
        add_with_baseline(*s, 0, "cell=a", 100);
    add_with_baseline(target, 10, "cell=b", 200);
    add_with_baseline(source, 20, "cell=c", 300);

    const MergeCount count = merge_store(target, source);
    EXPECT_EQ(count.added, 2);
    EXPECT_EQ(count.already, 2);

    const std::vector<RunRecord> runs = target.list_runs();
    ASSERT_EQ(runs.size(), 6u);
    const RunRecord& run = runs[4];
    const RunRecord& base = runs[5];
    EXPECT_EQ(run.cell_key, "cell=c");
    EXPECT_EQ(run.counter_energy_j, 300);
    EXPECT_EQ(base.role, RunRole::kBaseline);
    EXPECT_EQ(base.parent_id, run.id);  // the target's id, not the source's 3
    EXPECT_NE(run.id, 3);
    ASSERT_EQ(base.jobs.size(), 1u);
    EXPECT_EQ(base.jobs[0].items_per_s, 90);
    const RunRecord with_trace = *target.get_run(run.id, TraceLoad::kWith);
    ASSERT_EQ(with_trace.trace.size(), 2u);
    EXPECT_EQ(with_trace.trace[1].energy_j, 5060.0);
    EXPECT_EQ(with_trace.trace[1].memory_utilization_pct, 40.0);

    // Merging again adds nothing; merging back brings the target's cell b to the source.
    EXPECT_EQ(merge_store(target, source).added, 0);
    const MergeCount back = merge_store(source, target);
    EXPECT_EQ(back.added, 2);
    EXPECT_EQ(back.already, 4);
    EXPECT_EQ(source.list_runs().size(), 6u);
}

TEST(MergeStore, AHostRunKeepsItsRowsTogetherUnderTheirNewFirstId) {
    Store target = Store::open(fresh_store_path("host-target").string());
    Store source = Store::open(fresh_store_path("host-source").string());
    add_with_baseline(target, 0, "cell=a", 100);  // so the source's ids are taken
    std::vector<RunRecord> gpus = {run_at(30, "cell=h", 400), run_at(30, "cell=h", 500)};
    gpus[0].gpu_index = 0;
    gpus[1].gpu_index = 1;
    gpus[1].provenance.gpu_uuid = "GPU-2";
    source.add_host_run(gpus);

    EXPECT_EQ(merge_store(target, source).added, 2);
    const std::vector<RunRecord> runs = target.list_runs();
    ASSERT_EQ(runs.size(), 4u);
    EXPECT_EQ(runs[2].host_run_id, runs[2].id);
    EXPECT_EQ(runs[3].host_run_id, runs[2].id);
    EXPECT_EQ(runs[3].gpu_index, 1);
    EXPECT_EQ(target.host_run(runs[2].id).size(), 2u);
}

TEST(MergeStore, ABaselineWhoseRunIsNotInTheSourceIsAnInputErrorNamingBoth) {
    Store target = Store::open(fresh_store_path("orphan-target").string());
    const fs::path source_path = fresh_store_path("orphan-source");
    {
        Store source = Store::open(source_path.string());
        add_with_baseline(source, 0, "cell=a", 100);
    }
    {  // a store edited by hand, foreign keys off: the baseline (run 2) points at no run
        Database db = Database::open(source_path.string(), OpenMode::kExisting);
        db.exec("PRAGMA foreign_keys = OFF; UPDATE runs SET parent_id = 99 WHERE id = 2");
    }
    Store source = Store::open(source_path.string(), OpenMode::kRead);
    try {
        merge_store(target, source);
        FAIL() << "merged a baseline without its run";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("run 2 is the baseline of run 99"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(target.list_runs().size(), 1u);  // the run before it is in; nothing half-written
}

}  // namespace
}  // namespace migscope::store
