// Sweeps of specs with `gpus = N` on a fake NVML of three H200s with stand-in workers: each cell
// on N GPUs at once with each GPU's rows stored (gpu_index, host_run_id, energy), its baseline on
// the same GPUs, --resume skipping a done cell and rerunning one whose GPU was lost mid-run (the
// other GPUs' rows kept), more GPUs than NVML lists refused naming the field, and the plan text.
#include "runner/sweep.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "nvml/fake_nvml_env.h"
#include "runner/fake_gpus.h"
#include "runner/sweep_output.h"

namespace migscope::runner {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kGpu2 = "GPU-00000000-fake-h200-0000-0000000000b2";

// A cell of three GPUs (green, two jobs, with its baseline) and one of one GPU.
constexpr const char* kSpec = R"toml(
version = 1
name = "hosts"
[defaults]
backends = ["green"]
work_steps = 8

[[mix]]
name = "triple"
layouts = ["3g.71gb+1g.18gb"]
jobs = ["resnet18:32", "bert-base:4"]
baseline = "sequential"
gpus = 3

[[mix]]
name = "single"
layouts = ["4g.71gb"]
jobs = ["resnet18:32"]
)toml";

class Recorder : public SweepObserver {
  public:
    void cell_started(size_t, double, double) override {}
    void cell_finished(size_t index, const SweepCellOutcome& outcome) override {
        finished.emplace_back(index, outcome);
    }
    void cooling_down(double) override {}
    std::vector<std::pair<size_t, SweepCellOutcome>> finished;
};

class Sweep : public FakeGpus {
  protected:
    // MIG mode disabled on all three GPUs; GPU 2 lost after `gpu2_lost_after_s` when given.
    std::string config(std::optional<double> gpu2_lost_after_s = std::nullopt) {
        return FakeGpus::config(gpu2_lost_after_s, true);
    }

    SweepOptions options(const std::string& spec, bool resume = false) {
        const fs::path path = dir_ / "spec.toml";
        std::ofstream(path) << spec;
        SweepOptions o;
        o.spec_path = path.string();
        o.db = (dir_ / "results.db").string();
        o.resume = resume;
        o.run_dir = (dir_ / ("runs-" + std::to_string(sweeps_++))).string();
        return o;
    }

    SweepResult sweep(const SweepPlan& plan, const Machine& machine, Recorder& recorder) {
        store::Store db = store::Store::open(plan.db_path);
        return run_sweep(plan, machine, m_, db, {}, recorder);
    }

    int sweeps_ = 0;
};

TEST_F(Sweep, ACellOfSeveralGpusRunsOnEachAndStoresEachGpusRowsAndResumeSkipsIt) {
    FakeNvmlEnv env(config());
    const Machine machine = open_machine(0);
    const SweepPlan plan = plan_sweep(options(kSpec), machine, false);
    ASSERT_EQ(plan.todo.size(), 2u);
    EXPECT_EQ(plan.max_gpus, 3);
    EXPECT_NE(plan.todo[0].description.find("on GPUs 0-2 at once"), std::string::npos)
        << plan.todo[0].description;
    EXPECT_EQ(plan.todo[1].description.find("GPUs"), std::string::npos);

    Recorder recorder;
    const SweepResult result = sweep(plan, machine, recorder);
    EXPECT_TRUE(result.all_ok);
    ASSERT_EQ(recorder.finished.size(), 2u);
    const SweepCellOutcome& triple = recorder.finished[0].second;
    ASSERT_TRUE(triple.host);
    EXPECT_FALSE(triple.cell);
    ASSERT_EQ(triple.host->run.gpus.size(), 3u);
    ASSERT_TRUE(triple.host->baseline);
    EXPECT_EQ(triple.host->baseline->gpus.size(), 3u);
    EXPECT_TRUE(recorder.finished[1].second.cell);  // one GPU: the path it always took

    // Each GPU's row: its index, the host run, the cell's key, its own energy.
    store::Store db = store::Store::open(plan.db_path, store::OpenMode::kRead);
    ASSERT_EQ(triple.host->run_ids.size(), 3u);
    for (size_t g = 0; g < 3; ++g) {
        const auto row = db.get_run(triple.host->run_ids[g]);
        ASSERT_TRUE(row);
        EXPECT_EQ(row->gpu_index, static_cast<int64_t>(g));
        EXPECT_EQ(row->host_run_id, triple.host->run_ids.front());
        EXPECT_EQ(row->cell_key, plan.todo[0].cell.key);
        EXPECT_EQ(row->experiment, "hosts");
        EXPECT_EQ(row->layout, "3g.71gb+1g.18gb");
        ASSERT_TRUE(row->counter_energy_j) << "GPU " << g;
        EXPECT_GT(*row->counter_energy_j, 0);
        ASSERT_EQ(row->jobs.size(), 2u);
        EXPECT_EQ(row->jobs[0].status, "ok");
    }
    ASSERT_EQ(triple.host->baseline_ids.size(), 3u);
    const auto base = db.get_run(triple.host->baseline_ids[2]);
    EXPECT_EQ(base->role, store::RunRole::kBaseline);
    EXPECT_EQ(base->gpu_index, 2);
    EXPECT_EQ(base->backend, "sequential");
    EXPECT_EQ(base->parent_id, triple.host->run_ids.front());
    EXPECT_FALSE(db.get_run(*recorder.finished[1].second.cell->run_id)->gpu_index);

    // The summary: a row per GPU and the host's total.
    SweepSummary summary(plan);
    for (const auto& [i, out] : recorder.finished)
        summary.add(i, out);
    std::ostringstream text;
    summary.print(result, text);
    ASSERT_TRUE(triple.host->run.total.energy_j);
    const std::string total = std::to_string(std::lround(*triple.host->run.total.energy_j)) + " J";
    for (const std::string& says :
         {std::string("GPU"), std::string("all"), total, std::string(" % energy")})
        EXPECT_NE(text.str().find(says), std::string::npos) << says << " in\n" << text.str();
    EXPECT_EQ(stored_text(triple),
              "stored as runs " + std::to_string(triple.host->run_ids.front()) + "-" +
                  std::to_string(triple.host->run_ids.back()) + " (GPUs 0-2), baselines " +
                  std::to_string(triple.host->baseline_ids.front()) + "-" +
                  std::to_string(triple.host->baseline_ids.back()));

    // --resume: both cells are done.
    const SweepPlan again = plan_sweep(options(kSpec, true), machine, false);
    EXPECT_EQ(again.already_stored, 2u);
    EXPECT_TRUE(again.todo.empty());
}

TEST_F(Sweep, AGpuLostMidRunKeepsTheOthersRowsAndResumeRunsTheCellAgain) {
    FakeNvmlEnv env(config(0.3));
    setenv("FAKE_LOST_GPU", kGpu2, 1);
    const Machine machine = open_machine(0);
    std::string spec = kSpec;
    spec.replace(spec.find("work_steps = 8"), 14, "work_steps = 80");  // past the loss
    spec.replace(spec.find("baseline = \"sequential\"\n"), 24, "");
    const SweepPlan plan = plan_sweep(options(spec), machine, false);
    Recorder recorder;
    const SweepResult result = sweep(plan, machine, recorder);
    EXPECT_FALSE(result.all_ok);
    ASSERT_EQ(recorder.finished.size(), 2u);  // the sweep went on after the lost GPU
    const HostOutcome& host = *recorder.finished[0].second.host;
    ASSERT_EQ(host.run_ids.size(), 3u);
    store::Store db = store::Store::open(plan.db_path, store::OpenMode::kRead);
    for (size_t g = 0; g < 2; ++g) {
        const auto row = db.get_run(host.run_ids[g]);
        EXPECT_EQ(row->gpu_index, static_cast<int64_t>(g));
        EXPECT_TRUE(row->counter_energy_j) << "GPU " << g;
        for (const store::JobRecord& j : row->jobs)
            EXPECT_EQ(j.status, "ok") << "GPU " << g << ": " << j.name << ": " << j.message;
    }
    const auto lost = db.get_run(host.run_ids[2]);
    EXPECT_EQ(lost->gpu_index, 2);
    for (const store::JobRecord& j : lost->jobs)
        EXPECT_EQ(j.status, "gpu failed") << j.name;

    // --resume runs the cell whose GPU was lost again, and skips the one-GPU cell.
    const SweepPlan again = plan_sweep(options(spec, true), machine, false);
    EXPECT_EQ(again.already_stored, 1u);
    ASSERT_EQ(again.todo.size(), 1u);
    EXPECT_EQ(again.todo[0].cell.section, "triple");
}

TEST_F(Sweep, MoreGpusThanNvmlListsAreRefusedNamingTheField) {
    FakeNvmlEnv env(config());
    const auto refused = [&](const std::string& spec, unsigned first_gpu, const std::string& says) {
        const Machine machine = open_machine(first_gpu);
        SweepOptions o = options(spec);
        o.gpu = first_gpu;
        try {
            plan_sweep(o, machine, false);
            ADD_FAILURE() << "not refused: " << says;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    };
    std::string four = kSpec;
    four.replace(four.find("gpus = 3"), 8, "gpus = 4");
    refused(four, 0, "mix[0].gpus: 4 GPUs from GPU 0 (--gpu) are GPUs 0-3, but NVML lists 3 GPUs");
    refused(kSpec, 1, "mix[0].gpus: 3 GPUs from GPU 1 (--gpu) are GPUs 1-3, but NVML lists 3");
    // From GPU 1 two GPUs are there.
    std::string two = kSpec;
    two.replace(two.find("gpus = 3"), 8, "gpus = 2");
    SweepOptions o = options(two);
    o.gpu = 1;
    const SweepPlan plan = plan_sweep(o, open_machine(1), false);
    EXPECT_NE(plan.todo[0].description.find("on GPUs 1-2 at once"), std::string::npos);
    std::ostringstream text;
    print_sweep_plan(plan, o.spec_path, false, text);
    EXPECT_NE(text.str().find("from GPU 1 (--gpu)"), std::string::npos) << text.str();
}

TEST_F(Sweep, EachGpuOfACellIsCheckedBeforeAnythingRuns) {
    // GPU 1 with MIG mode enabled (the mixed config as it is): a green cell cannot run there.
    json c = json::parse(read_text(fs::path(FAKE_NVML_DIR) / "h200-x3-mixed.json"));
    std::ofstream(dir_ / "mixed.json") << c.dump();
    FakeNvmlEnv env((dir_ / "mixed.json").string());
    const Machine machine = open_machine(0);
    try {
        plan_sweep(options(kSpec), machine, false);
        ADD_FAILURE() << "not refused";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("GPU 1: MIG mode is enabled"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("triple:"), std::string::npos) << e.what();
    }
}

// Two sweeps starting together on a new store: while one creates it (the file there, its
// schema not yet committed), the other's plan reads nothing from it and is not told "not a
// migscope results store"; its own open then finds the finished schema. Many rounds, each on
// a fresh path, the creator and the planner on two threads.
TEST_F(Sweep, APlanMadeWhileAnotherSweepCreatesTheStoreReadsItAsEmpty) {
    FakeNvmlEnv env(config());
    const Machine machine = open_machine(0);
    const SweepOptions base = options(R"toml(
version = 1
name = "race"
[[mix]]
name = "m"
backends = ["green"]
layouts = ["4g.71gb"]
jobs = ["resnet18:32"]
work_steps = 8
)toml");
    int planned = 0;
    for (int round = 0; round < 150; ++round) {
        SweepOptions o = base;
        o.db = (dir_ / ("race-" + std::to_string(round) + ".db")).string();
        std::string creator_error;
        std::thread creator([&] {
            try {
                store::Store::open(o.db, store::OpenMode::kCreate);
            } catch (const Error& e) {
                creator_error = e.what();
            }
        });
        while (!fs::exists(o.db)) {  // plan the moment the file is there
        }
        try {
            const SweepPlan plan = plan_sweep(o, machine, false);
            EXPECT_EQ(plan.already_stored, 0u);
            EXPECT_EQ(plan.todo.size(), 1u);
            store::Store::open(o.db, store::OpenMode::kCreate);  // as the CLI does next
            ++planned;
        } catch (const Error& e) {
            ADD_FAILURE() << "round " << round << ": " << e.what();
        }
        creator.join();
        EXPECT_EQ(creator_error, "") << "round " << round;
        if (HasFailure())
            break;
    }
    EXPECT_EQ(planned, 150);
}

}  // namespace
}  // namespace migscope::runner
