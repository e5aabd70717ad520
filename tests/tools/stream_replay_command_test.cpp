// `migscope stream replay` end to end on the cpu backend with the stand-in worker: a tiny trace
// (four jobs, seconds long) simulated on the shipped H200 profiles and run for real: every job
// ran, none started before its arrival, each partition ran its jobs in the simulator's order,
// the JSON carries the predicted and measured figures; bad input exits 2 naming the field.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_process.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class StreamReplayCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(testing::TempDir()) /
               ("replay-" +
                std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    // Without a GPU, or (`nvml_config`) on the fake NVML's GPU; the stand-in's steps take
    // `step_s`.
    ProcessResult migscope(std::vector<std::string> args, const std::string& nvml_config = "",
                           const std::string& step_s = "0.01") {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        std::map<std::string, std::string> env = {{"MIGSCOPE_WORKER", FAKE_WORKER},
                                                  {"FAKE_STEP_S", step_s}};
        if (nvml_config.empty()) {
            env["MIGSCOPE_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1";
        } else {
            env["MIGSCOPE_NVML_LIBRARY"] = FAKE_NVML_LIBRARY;
            env["MIGSCOPE_FAKE_NVML_CONFIG"] = std::string(FAKE_NVML_DIR) + "/" + nvml_config;
        }
        return run_process(args, env);
    }
    std::string write(const std::string& name, const std::string& text) {
        const std::string path = (dir_ / name).string();
        std::ofstream(path) << text;
        return path;
    }
    // Four jobs of the shipped profiles arriving over 1.5 s, one named to escape the run
    // directory, the last due soon.
    std::string tiny_trace() {
        return write("tiny.json", R"({"version": 1, "jobs": [
  {"arrival_s": 0, "workload": "resnet18", "batch": 32, "work": 30},
  {"arrival_s": 0.2, "workload": "bert-base", "batch": 4, "work": 20},
  {"arrival_s": 0.5, "name": "../../escape me", "workload": "resnet18", "batch": 32, "work": 20},
  {"arrival_s": 1.5, "workload": "gpt2-medium", "batch": 2, "work": 10, "deadline_s": 3}]})");
    }
    fs::path dir_;
};

TEST_F(StreamReplayCommand, ReplaysTheSchedulesOrderNeverBeforeAnArrival) {
    const std::string trace = tiny_trace();
    const fs::path runs = dir_ / "runs";
    const ProcessResult r = migscope({"stream", "replay", trace, "--policy", "never", "--backend",
                                      "cpu", "--idle-probe", "0", "--warmup-steps", "1",
                                      "--run-dir", runs.string(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["backend"], "cpu");
    EXPECT_EQ(doc["policy"], "never");
    ASSERT_EQ(doc["jobs"].size(), 4u);
    for (const json& j : doc["jobs"]) {
        SCOPED_TRACE(j.dump());
        for (const char* key : {"start_s", "end_s", "completion_s", "completion_s_interval"})
            EXPECT_TRUE(j["predicted"].contains(key)) << key;
        ASSERT_TRUE(j["measured"].is_object());
        EXPECT_EQ(j["measured"]["status"], "ok");
        EXPECT_EQ(j["measured"]["steps"], j["work_steps"]);  // every step of its work ran
        const double arrival = j["arrival_s"].get<double>();
        const double start = j["measured"]["start_s"].get<double>();
        const double end = j["measured"]["end_s"].get<double>();
        EXPECT_GE(start, arrival);  // never before it arrived
        EXPECT_GT(end, start);
        EXPECT_NEAR(j["measured"]["completion_s"].get<double>(), end - arrival, 1e-9);
        EXPECT_TRUE(j.contains("inside"));
    }
    // Each partition ran its jobs in the simulator's order: by planned start, the measured
    // starts (and ends) come in the same order.
    std::map<std::string, std::vector<std::pair<double, size_t>>> planned;
    for (const json& e : doc["epochs"]) {
        for (const json& s : e["jobs"])
            planned[s["partition"].get<std::string>() + "@" + std::to_string(e["epoch"].get<int>())]
                .push_back({s["planned_start_s"].get<double>(), s["job"].get<size_t>()});
    }
    ASSERT_FALSE(planned.empty());
    for (auto& [partition, jobs] : planned) {
        std::sort(jobs.begin(), jobs.end());
        for (size_t k = 1; k < jobs.size(); ++k) {
            const json& before = doc["jobs"][jobs[k - 1].second]["measured"];
            const json& after = doc["jobs"][jobs[k].second]["measured"];
            EXPECT_LE(before["end_s"].get<double>(), after["start_s"].get<double>() + 1e-3)
                << partition;
        }
    }
    ASSERT_EQ(doc["totals"].size(), 4u);
    for (const json& t : doc["totals"]) {
        for (const char* key : {"figure", "predicted", "interval", "measured", "inside"})
            EXPECT_TRUE(t.contains(key)) << key;
        if (t["figure"] != "energy_j")  // the CPU's energy needs RAPL
            EXPECT_TRUE(t["measured"].is_number()) << t.dump();
    }
    EXPECT_TRUE(doc["all_ok"].get<bool>());
    // Each layout's run in its own folder; a job's name never becomes a path: its log is a slug
    // inside the run's folder.
    EXPECT_TRUE(fs::exists(runs / "epoch-0" / "result.json"));
    EXPECT_TRUE(fs::exists(runs / "epoch-0" / "job-2-escape-me.stderr"));
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
        const std::string name = entry.path().filename().string();
        if (name.find("escape") != std::string::npos)
            EXPECT_EQ(entry.path(), runs / "epoch-0" / "job-2-escape-me.stderr");
    }
    EXPECT_FALSE(fs::exists(dir_ / "escape me.stderr"));  // runs/epoch-0/../../
}

// On green partitions of the fake NVML's H200 (the stand-in worker's group waits for each job's
// start time as the real worker does): the whole GPU as the model's full profile, every job
// after its arrival, the board's energy measured and the gaps charged at idle power.
TEST_F(StreamReplayCommand, ReplaysOnGreenPartitionsOfTheGpu) {
    const fs::path runs = dir_ / "runs";
    const std::string delay = write("delay.json", R"({"format": "migscope-start-delay",
        "version": 1, "gpu_model": "h200", "backend": "green", "per_partner_s": 0.25,
        "fit": {}})");
    const ProcessResult r =
        migscope({"stream", "replay", tiny_trace(), "--policy", "never", "--backend", "green",
                  "--idle-probe", "0.2", "--warmup-steps", "1", "--run-dir", runs.string(), "--db",
                  (dir_ / "replay.db").string(), "--format", "json", "--start-delay", delay},
                 "h200.json");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["backend"], "green");
    // Green partitions are predicted as `plan --backend green` predicts them.
    EXPECT_EQ(doc["start_delay"]["per_partner_s"], 0.25);
    EXPECT_EQ(doc["start_delay"]["file"], delay);
    ASSERT_TRUE(doc["epochs"][0]["measured"].is_object());
    EXPECT_EQ(doc["epochs"][0]["measured"]["layout_run"], "7g.141gb");
    EXPECT_TRUE(doc["epochs"][0]["measured"]["run_id"].is_number());  // stored
    for (const json& j : doc["jobs"]) {
        SCOPED_TRACE(j.dump());
        EXPECT_EQ(j["measured"]["status"], "ok");
        EXPECT_GE(j["measured"]["start_s"].get<double>(), j["arrival_s"].get<double>());
    }
    EXPECT_TRUE(doc["energy"]["energy_j"].is_number()) << doc["energy"].dump();
    EXPECT_TRUE(doc["totals"][0]["measured"].is_number());
    EXPECT_EQ(json::parse(std::ifstream(runs / "replay.json")), doc);
}

// The online policy with free changes flips this stream's layout twice (whole GPU, 4g + 3g, whole
// GPU): the running jobs are stopped at each change and the rest of their work runs on the next
// layout, after the work before it ended. On the CPU the 4g + 3g layout is two core shares.
TEST_F(StreamReplayCommand, ALayoutChangeStopsJobsAndTheirRestRunsOnTheNextLayout) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2)
        GTEST_SKIP() << "needs two CPU cores for a layout of two partitions";
    const std::string trace = write("flip.json", R"({"version": 1, "jobs": [
  {"arrival_s": 0.10476441300393827, "workload": "resnet18", "batch": 32, "work": 126},
  {"arrival_s": 0.20919744239209465, "workload": "resnet50", "batch": 32, "work": 122},
  {"arrival_s": 0.27218802422387783, "workload": "resnet18", "batch": 32, "work": 89},
  {"arrival_s": 0.37396387295077116, "workload": "gpt2-medium", "batch": 2, "work": 244}]})");
    // Free changes and any gain: the policy flips as soon as a split pays (steps of 2 ms).
    std::vector<std::string> args = {"stream", "replay", trace};
    for (const char* a : {"--policy", "online", "--objective", "completion", "--orchestrator-s",
                          "0", "--instance-s", "0", "--min-gain", "0", "--backend", "cpu",
                          "--idle-probe", "0", "--warmup-steps", "1", "--format", "json"})
        args.push_back(a);
    args.insert(args.end(), {"--run-dir", (dir_ / "runs").string()});
    const ProcessResult r = migscope(args, "", "0.002");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(r.out);
    EXPECT_TRUE(doc["start_delay"].is_null());  // CPU cores: no wait for jobs starting together
    ASSERT_EQ(doc["layout_changes"], 2);
    ASSERT_EQ(doc["epochs"].size(), 3u);
    EXPECT_EQ(doc["epochs"][1]["layout"], "4g.71gb@0+3g.71gb@4");
    // Job 0 ran on all three layouts, stopped twice; its stretches add up to its work.
    int64_t steps = 0;
    double previous_end = 0;
    for (const json& e : doc["epochs"]) {
        ASSERT_TRUE(e["measured"].is_object()) << e.dump();
        EXPECT_GE(e["measured"]["start_s"].get<double>(), previous_end - 1e-9);  // after the work
        previous_end =
            e["measured"]["start_s"].get<double>() + e["measured"]["window_s"].get<double>();
        ASSERT_FALSE(e["jobs"].empty());
        EXPECT_EQ(e["jobs"][0]["job"], 0);
        steps += e["jobs"][0]["steps"].get<int64_t>();
    }
    EXPECT_EQ(steps, 126);
    EXPECT_TRUE(doc["epochs"][0]["jobs"][0]["stopped"].get<bool>());
    for (const json& j : doc["jobs"]) {
        SCOPED_TRACE(j.dump());
        EXPECT_EQ(j["measured"]["status"], "ok");
        EXPECT_EQ(j["measured"]["steps"], j["work_steps"]);
        EXPECT_GE(j["measured"]["start_s"].get<double>(), j["arrival_s"].get<double>());
    }
    EXPECT_EQ(doc["jobs"][0]["restarts"], 2);
}

TEST_F(StreamReplayCommand, TheTableEndsWithTheTotalsAndADryRunRunsNothing) {
    const std::string trace = tiny_trace();
    const ProcessResult r = migscope({"stream", "replay", trace, "--policy", "never", "--dry-run",
                                      "--run-dir", (dir_ / "runs").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("not run (--dry-run)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("mean JCT s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("../../escape me"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs"));
}

TEST_F(StreamReplayCommand, BadInputExitsTwoNamingTheField) {
    const std::string seconds = write("seconds.json", R"({"version": 1, "jobs": [
  {"arrival_s": 0, "workload": "resnet18", "batch": 32, "duration_s": 60}]})");
    const ProcessResult a = migscope({"stream", "replay", seconds, "--backend", "cpu"});
    EXPECT_EQ(a.exit_code, 2) << a.err;
    EXPECT_NE(a.err.find("jobs[0].duration_s"), std::string::npos) << a.err;

    const ProcessResult b =
        migscope({"stream", "replay", tiny_trace(), "--backend", "timeslice", "--dry-run"});
    EXPECT_EQ(b.exit_code, 2) << b.err;
    EXPECT_NE(b.err.find("--backend"), std::string::npos) << b.err;

    const ProcessResult c =
        migscope({"stream", "replay", tiny_trace(), "--policy", "sometimes", "--dry-run"});
    EXPECT_EQ(c.exit_code, 2) << c.err;
    EXPECT_NE(c.err.find("sometimes"), std::string::npos) << c.err;

    const std::string typo = write("typo.json", R"({"version": 1, "jobs": [
  {"arrival_s": 0, "workload": "resnet18", "bach": 32, "work": 5}]})");
    const ProcessResult d = migscope({"stream", "replay", typo, "--dry-run"});
    EXPECT_EQ(d.exit_code, 2) << d.err;
    EXPECT_NE(d.err.find("jobs[0].bach"), std::string::npos) << d.err;
}

}  // namespace
