// End-to-end tests of `migscope run SPEC.toml` with the stand-in worker and the fake NVML: a
// sweep stores its runs and baselines, --resume after kill -9 runs only what is missing,
// --dry-run runs nothing, and bad specs or options are refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_lock.h"
#include "run_process.h"
#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using migscope::store::OpenMode;
using migscope::store::RunRecord;
using migscope::store::RunRole;
using migscope::store::Store;

std::map<std::string, std::string> fake_gpu_env() {
    return {{"MIGSCOPE_WORKER", FAKE_WORKER},
            {"FAKE_STEP_S", "0.01"},
            {"MIGSCOPE_NVML_LIBRARY", FAKE_NVML_LIBRARY},
            {"MIGSCOPE_FAKE_NVML_CONFIG", std::string(FAKE_NVML_DIR) + "/h200.json"}};
}

class SweepCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ =
            fs::path(testing::TempDir()) /
            ("sweep-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "results.db").string();
    }
    std::string write_spec(const std::string& text) {
        const std::string path = (dir_ / "spec.toml").string();
        std::ofstream(path) << text;
        return path;
    }
    std::vector<std::string> argv(const std::string& spec, std::vector<std::string> extra) {
        std::vector<std::string> a = {
            MIGSCOPE_BINARY,          "run",          spec, "--db", db_, "--run-dir",
            (dir_ / "runs").string(), "--idle-probe", "0"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    ProcessResult sweep(const std::string& spec, std::vector<std::string> extra = {}) {
        return run_process(argv(spec, std::move(extra)), fake_gpu_env());
    }
    std::vector<RunRecord> runs() { return Store::open(db_, OpenMode::kExisting).list_runs(); }
    // Starts migscope in the background, its output thrown away.
    pid_t start(const std::vector<std::string>& args) {
        const pid_t pid = fork();
        if (pid == 0) {
            const int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            for (const auto& [k, v] : fake_gpu_env())
                setenv(k.c_str(), v.c_str(), 1);
            std::vector<char*> a;
            for (const std::string& s : args)
                a.push_back(const_cast<char*>(s.c_str()));
            a.push_back(nullptr);
            execv(a[0], a.data());
            _exit(126);
        }
        return pid;
    }
    // Polls the store until it holds a finished run of the experiment (60 s at most).
    size_t wait_for_a_stored_run(const std::string& experiment) {
        size_t stored = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (stored == 0 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            try {  // the sweep may be creating the store right now: not yet a store
                stored = Store::open(db_, OpenMode::kExisting).stored_cells(experiment).size();
            } catch (const migscope::Error&) {
            }
        }
        return stored;
    }

    fs::path dir_;
    std::string db_;
};

constexpr const char* kTwoCells = R"toml(
version = 1
name = "two"
[[mix]]
name = "pairs"
backends = ["green"]
layouts = ["3g.71gb+1g.18gb", "4g+2g"]
jobs = ["resnet18:32", "bert-base:4"]
duration_s = 0.3
baseline = "sequential"
)toml";

TEST_F(SweepCommand, StoresEveryRunWithItsBaselineAndPrintsASummary) {
    const ProcessResult r = sweep(write_spec(kTwoCells));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("to run     2 runs + 2 sequential baselines"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("run 2 of 2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("ETA"), std::string::npos);
    EXPECT_NE(r.out.find("4g.71gb+2g.35gb"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("results store: " + db_), std::string::npos) << r.out;

    const std::vector<RunRecord> stored = runs();
    ASSERT_EQ(stored.size(), 4u);
    std::set<std::string> keys;
    for (const RunRecord& run : stored) {
        EXPECT_EQ(run.experiment, "two");
        ASSERT_TRUE(run.cell_key);
        EXPECT_EQ(run.label, "pairs");
        if (run.role == RunRole::kRun) {
            keys.insert(*run.cell_key);
            EXPECT_EQ(run.backend, "green");
            EXPECT_TRUE(run.aggregate_normalised_throughput);
        } else {
            EXPECT_EQ(run.backend, "sequential");
            EXPECT_TRUE(run.parent_id);
        }
    }
    EXPECT_EQ(keys.size(), 2u);
    EXPECT_TRUE(fs::exists(dir_ / "runs" / "001-pairs-green-3g.71gb+1g.18gb-r1" / "result.json"));
    EXPECT_TRUE(fs::exists(dir_ / "runs" / "002-pairs-green-4g.71gb+2g.35gb-r1" / "table.txt"));

    // Resuming a finished sweep runs nothing; running it again without --resume repeats it.
    const ProcessResult again = sweep(write_spec(kTwoCells), {"--resume"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("2 already stored (--resume skips them)"), std::string::npos)
        << again.err;
    EXPECT_EQ(runs().size(), 4u);
}

TEST_F(SweepCommand, DryRunPrintsThePlanAndRunsNothing) {
    const ProcessResult r = sweep(write_spec(kTwoCells), {"--dry-run"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("to run     2 runs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("estimate   about"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("   2  pairs: green 4g.71gb+2g.35gb"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db_));
    EXPECT_FALSE(fs::exists(dir_ / "runs"));
}

TEST_F(SweepCommand, WithoutAGpuDryRunShowsTheGpuHostsPlanAndARunExitsThree) {
    std::map<std::string, std::string> no_gpu = fake_gpu_env();
    no_gpu["MIGSCOPE_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1";
    const ProcessResult plan = run_process(argv(write_spec(kTwoCells), {"--dry-run"}), no_gpu);
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_NE(plan.out.find("no GPU here ("), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find("the plan for a GPU host"), std::string::npos) << plan.out;
    EXPECT_NE(plan.out.find("to run     2 runs + 2 sequential baselines"), std::string::npos)
        << plan.out;
    EXPECT_NE(plan.out.find("estimate   about"), std::string::npos) << plan.out;
    EXPECT_FALSE(fs::exists(db_));

    // Running it needs the GPU: exit 3 (driver or GPU unavailable), before anything is made.
    const ProcessResult run = run_process(argv(write_spec(kTwoCells), {}), no_gpu);
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find("--dry-run shows the plan without one"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(db_));
}

// Kills migscope with SIGKILL once the store holds a finished run, then resumes.
TEST_F(SweepCommand, ResumeAfterKillNineRunsOnlyTheMissingCells) {
    const std::string spec = write_spec(R"toml(
version = 1
name = "killed"
[[mix]]
name = "three"
backends = ["green"]
layouts = ["3g+1g", "4g+2g", "2g+2g"]
jobs = ["resnet18:32", "bert-base:4"]
duration_s = 1.5
)toml");
    const pid_t pid = start(argv(spec, {}));
    ASSERT_GE(pid, 0);
    const size_t before = wait_for_a_stored_run("killed");
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep ended by itself: status " << status;
    ASSERT_GE(before, 1u);
    const size_t after_kill = runs().size();
    ASSERT_LT(after_kill, 3u) << "killed too late to test resume";

    const ProcessResult r = sweep(spec, {"--resume"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::to_string(after_kill) + " already stored"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("to run     " + std::to_string(3 - after_kill) + " runs"),
              std::string::npos)
        << r.err;
    const std::vector<RunRecord> stored = runs();
    ASSERT_EQ(stored.size(), 3u);  // each cell once: nothing run twice
    std::set<std::string> keys;
    for (const RunRecord& run : stored) {
        EXPECT_FALSE(run.interrupted);
        keys.insert(*run.cell_key);
    }
    EXPECT_EQ(keys.size(), 3u);
}

// Ctrl-C while the first repetition's baseline runs: the run and its interrupted baseline are
// stored (exit 130); --resume runs that repetition again, and its finished attempt replaces the
// unfinished one, so each repetition is stored once (not repetition 1 twice: "n 4" for 3).
TEST_F(SweepCommand, ResumeAfterAnInterruptedBaselineStoresEachRepetitionOnce) {
    const std::string spec = write_spec(R"toml(
version = 1
name = "cut"
[[mix]]
name = "pair"
backends = ["green"]
layouts = ["4g+2g"]
jobs = ["resnet18:32", "bert-base:4"]
duration_s = 0.5
baseline = "sequential"
repetitions = 3
)toml");
    const pid_t pid = start(argv(spec, {}));
    ASSERT_GE(pid, 0);
    // The first cell's baseline folder appears when its baseline starts.
    const fs::path baseline = dir_ / "runs" / "001-pair-green-4g.71gb+2g.35gb-r1" / "baseline";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(baseline) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(fs::exists(baseline)) << "no baseline started";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its jobs under way
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    ASSERT_EQ(WEXITSTATUS(status), 130);
    std::vector<RunRecord> stored = runs();
    ASSERT_EQ(stored.size(), 2u) << "the run and its interrupted baseline";
    ASSERT_EQ(stored[1].role, RunRole::kBaseline);
    ASSERT_TRUE(stored[1].interrupted) << "interrupted too late to test resume";

    const ProcessResult r = sweep(spec, {"--resume"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("to run     3 runs"), std::string::npos) << r.err;
    stored = runs();
    ASSERT_EQ(stored.size(), 6u);  // three runs, each with its baseline
    std::map<std::string, int> runs_per_cell;
    for (const RunRecord& run : stored) {
        EXPECT_FALSE(run.interrupted) << run.id;
        if (run.role == RunRole::kRun)
            ++runs_per_cell[*run.cell_key];
        else
            EXPECT_TRUE(run.parent_id);
    }
    EXPECT_EQ(runs_per_cell.size(), 3u);
    for (const auto& [key, n] : runs_per_cell)
        EXPECT_EQ(n, 1) << key;
    // Nothing is left to resume.
    const ProcessResult again = sweep(spec, {"--resume"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(runs().size(), 6u);
}

// Two sweeps of one spec on one store would run the same missing cells: the second is refused
// while the first holds the experiment's lock, and runs once it is released.
TEST_F(SweepCommand, ASecondSweepOfTheSameExperimentOnTheStoreIsRefused) {
    const std::string spec = write_spec(kTwoCells);
    std::optional<migscope::FileLock> other = migscope::FileLock::try_lock(db_ + ".sweep-two.lock");
    ASSERT_TRUE(other);
    const ProcessResult refused = sweep(spec, {"--resume"});
    EXPECT_EQ(refused.exit_code, 1) << refused.err;
    EXPECT_NE(refused.err.find("another migscope (process " + std::to_string(getpid()) +
                               ") is running experiment 'two'"),
              std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(db_) && !runs().empty());  // nothing ran
    other.reset();
    const ProcessResult r = sweep(spec, {"--resume"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(runs().size(), 4u);
}

// Ctrl-C during the cool-down after the first run: exit 130, that run stored, the rest not run.
TEST_F(SweepCommand, CtrlCStopsTheSweepKeepingWhatFinished) {
    const std::string spec = write_spec(R"toml(
version = 1
name = "stopped"
[[mix]]
name = "m"
backends = ["timeslice"]
jobs = ["resnet18:32", "bert-base:4"]
duration_s = 0.3
repetitions = 3
cooldown_s = 30
)toml");
    const pid_t pid = start(argv(spec, {}));
    ASSERT_GE(pid, 0);
    ASSERT_EQ(wait_for_a_stored_run("stopped"), 1u);
    ASSERT_EQ(kill(pid, SIGINT), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 130);
    EXPECT_EQ(runs().size(), 1u);
}

// A failed job fails its run, not the sweep: every run is stored and the exit code is 1.
TEST_F(SweepCommand, AFailedJobGoesOnAndExitsOne) {
    const ProcessResult r = sweep(write_spec(R"toml(
version = 1
name = "failing"
[[mix]]
name = "m"
backends = ["timeslice"]
jobs = ["resnet18:32", {command = ["/bin/false"], name = "broken"}]
duration_s = 0.3
repetitions = 2
)toml"));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.out.find("1 failed"), std::string::npos) << r.out;
    EXPECT_EQ(runs().size(), 2u);
}

TEST_F(SweepCommand, OnlyRunsTheNamedSectionsAndMemoryMisfitsAreSkipped) {
    const std::string spec = write_spec(R"toml(
version = 1
name = "parts"
[defaults]
backends = ["green"]
duration_s = 0.3
[[scaling]]
name = "alone"
profiles = ["1g.18gb", "7g.141gb"]
jobs = ["gpt2-xl"]
[[mix]]
name = "other"
layouts = ["3g+1g"]
jobs = ["resnet18:32"]
)toml");
    const ProcessResult r = sweep(spec, {"--only", "alone"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("1 skipped (jobs known not to fit"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("job 'gpt2-xl' needs"), std::string::npos) << r.err;
    const std::vector<RunRecord> stored = runs();
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_EQ(stored[0].layout, "7g.141gb");
}

TEST_F(SweepCommand, TheQuickstartAndThePaperPlanOnAGpu) {
    const ProcessResult q = sweep(EXAMPLES_DIR "/quickstart.toml", {"--dry-run"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_NE(q.out.find("gpu: green 3g.71gb+1g.18gb, resnet18:32,bert-base:4, 10 s window + "
                         "baseline"),
              std::string::npos)
        << q.out;
    const ProcessResult p =
        sweep(EXAMPLES_DIR "/paper.toml", {"--dry-run", "--only", "mix4-matched-work"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_NE(p.out.find("6 selected of 468"), std::string::npos) << p.out;
    // Matched work: 300 steps x 60 of 132 SMs on the 3g.71gb partition.
    EXPECT_NE(p.out.find("resnet50:32(136 steps)"), std::string::npos) << p.out;
}

TEST_F(SweepCommand, BadSpecsAndOptionsAreRefusedBeforeAnythingRuns) {
    struct Case {
        std::string spec;
        std::vector<std::string> extra;
        std::string says;
    };
    const std::string good = kTwoCells;
    const std::vector<Case> cases = {
        {good + "layuot = 1\n",
         {},
         "mix[0].layuot (line 11): unexpected field (expected one of: name, "},
        {good, {"--jobs", "resnet18"}, "--jobs does not apply to an experiment spec"},
        {good, {"--only", "nope"}, "--only nope: no such section (sections: pairs)"},
        {"version = 1\nname = \"x\"\n[[mix]]\nname = \"m\"\nbackends = [\"green\"]\nlayouts = "
         "[\"4g+4g\"]\njobs = [\"resnet18\"]\nduration_s = 1\n",
         {},
         "mix[0].layouts[0]: layout '4g+4g' is not valid on h200"},
        {"version = 1\nname = \"x\"\ngpu = \"a100-80gb\"\n[[mix]]\nname = \"m\"\nbackends = "
         "[\"green\"]\nlayouts = [\"1g\"]\njobs = [\"resnet18\"]\nduration_s = 1\n",
         {},
         "the spec is for a100-80gb but GPU 0 is h200"},
    };
    for (const Case& c : cases) {
        const ProcessResult r = sweep(write_spec(c.spec), c.extra);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(dir_ / "runs"));
    }
    const ProcessResult flags = run_process(
        {MIGSCOPE_BINARY, "run", "--jobs", "a", "--duration", "1", "--resume"}, fake_gpu_env());
    EXPECT_EQ(flags.exit_code, 2);
    EXPECT_NE(flags.err.find("apply to experiment specs"), std::string::npos) << flags.err;
}

// A spec of `gpus = 3` end to end through the binary on the fake NVML of three H200s (MIG mode
// disabled on each): a row per GPU for the run and for its baseline, the summary's row per GPU
// and the host's total, and `results list` and `show` with the host total of the stored rows.
TEST_F(SweepCommand, ACellOfThreeGpusStoresARowPerGpuAndPrintsTheHostTotal) {
    std::ifstream mixed(std::string(FAKE_NVML_DIR) + "/h200-x3-mixed.json");
    nlohmann::json nvml = nlohmann::json::parse(mixed);
    nvml["devices"][1] = nvml["devices"][0];
    nvml["devices"][1]["uuid"] = "GPU-00000000-fake-h200-0000-0000000000b1";
    const std::string nvml_path = (dir_ / "nvml.json").string();
    std::ofstream(nvml_path) << nvml.dump();
    std::map<std::string, std::string> env = fake_gpu_env();
    env["MIGSCOPE_FAKE_NVML_CONFIG"] = nvml_path;

    const ProcessResult r = run_process(argv(write_spec(R"toml(
version = 1
name = "host"
[[mix]]
name = "triple"
backends = ["green"]
layouts = ["3g.71gb+1g.18gb"]
jobs = ["resnet18:32", "bert-base:4"]
duration_s = 0.3
baseline = "sequential"
gpus = 3
)toml"),
                                             {}),
                                        env);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

    // The store: the run's three GPU rows share the first's id, the baseline's three theirs.
    const std::vector<RunRecord> stored = runs();
    ASSERT_EQ(stored.size(), 6u);
    double run_energy_j = 0;
    for (size_t i = 0; i < stored.size(); ++i) {
        const RunRecord& row = stored[i];
        const bool run = i < 3;
        EXPECT_EQ(row.role, run ? RunRole::kRun : RunRole::kBaseline);
        EXPECT_EQ(row.gpu_index, static_cast<int64_t>(i % 3));
        EXPECT_EQ(row.host_run_id, stored[run ? 0 : 3].id);
        EXPECT_EQ(row.experiment, "host");
        EXPECT_EQ(row.provenance.gpu_uuid, nvml["devices"][i % 3]["uuid"].get<std::string>());
        if (!run) {
            EXPECT_EQ(row.parent_id, stored[0].id);
            continue;
        }
        EXPECT_EQ(row.jobs.size(), 2u);
        for (const migscope::store::JobRecord& j : row.jobs)
            EXPECT_EQ(j.status, "ok") << j.message;
        ASSERT_TRUE(row.counter_energy_j);
        run_energy_j += *row.counter_energy_j;
    }
    ASSERT_GT(run_energy_j, 0);

    // The summary: a row per GPU, then 'all' with the host's total energy (their sum).
    const auto line_with = [](const std::string& text, const std::string& what) {
        const size_t at = text.find(what);
        if (at == std::string::npos)
            return std::string();
        const size_t start = text.rfind('\n', at) + 1;
        return text.substr(start, text.find('\n', at) - start);
    };
    const std::string all = line_with(r.out, "  all  ");
    ASSERT_FALSE(all.empty()) << r.out;
    char joules[32];
    std::snprintf(joules, sizeof joules, " %.0f J ", run_energy_j);
    EXPECT_NE(all.find(joules), std::string::npos) << all;
    EXPECT_NE(all.find("  ok  "), std::string::npos) << all;
    for (const char* gpu : {"  0  ok  ", "  1  ok  ", "  2  ok  "})
        EXPECT_NE(r.out.find(gpu), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("a row 'all' (the host's total"), std::string::npos) << r.out;

    // `results list`: the host's row after its last GPU's, and what it includes.
    const std::string id = std::to_string(stored[0].id);
    const ProcessResult list = run_process({MIGSCOPE_BINARY, "results", "list", "--db", db_}, env);
    ASSERT_EQ(list.exit_code, 0) << list.err;
    const std::string host = line_with(list.out, "host run " + id + ", 3 GPUs ");
    ASSERT_FALSE(host.empty()) << list.out;
    char kj[32];
    std::snprintf(kj, sizeof kj, "%.2f kJ", run_energy_j / 1e3);
    EXPECT_NE(host.find(kj), std::string::npos) << host;
    EXPECT_NE(host.find("6 ok"), std::string::npos) << host;
    EXPECT_LT(list.out.find("GPU 2 of host run " + id), list.out.find("host run " + id + ", 3"));
    EXPECT_NE(list.out.find("host total of 3 GPUs: energy the sum of each GPU's board energy"),
              std::string::npos)
        << list.out;
    EXPECT_NE(list.out.find("host run " + std::to_string(stored[3].id) + ", 3 GPUs"),
              std::string::npos)
        << list.out;  // the baseline's total too

    // `results show` of GPU 1's row ends with the host total.
    const ProcessResult show = run_process(
        {MIGSCOPE_BINARY, "results", "show", std::to_string(stored[1].id), "--db", db_}, env);
    ASSERT_EQ(show.exit_code, 0) << show.err;
    EXPECT_NE(show.out.find("host run " + id + ", 3 GPUs (runs " + id), std::string::npos)
        << show.out;
    EXPECT_NE(show.out.find(", 6 jobs (6 ok)"), std::string::npos) << show.out;
}

}  // namespace
