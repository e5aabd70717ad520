// Tests that migscope-worker is built against the expected LibTorch and runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "run_process.h"

TEST(Worker, ProbeReportsTheLibTorchItRuns) {
    ProcessResult r = run_process({MIGSCOPE_WORKER, "probe"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    // The GPU host runs torch 2.11.0: CI must build against the same.
    EXPECT_EQ(j["torch_version"].get<std::string>().substr(0, 4), "2.11");
    EXPECT_DOUBLE_EQ(j["cpu_check"].get<double>(), 10.0);
    EXPECT_EQ(j["cuda_available"].get<bool>(), j["cuda_device_count"].get<int>() > 0);
}

TEST(Worker, UnknownCommandIsBadInput) {
    EXPECT_EQ(run_process({MIGSCOPE_WORKER, "train-everything"}).exit_code, 2);
}

namespace {
std::vector<nlohmann::json> events_of(const std::string& out) {
    std::vector<nlohmann::json> events;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line))
        events.push_back(nlohmann::json::parse(line));
    return events;
}
}  // namespace

TEST(Worker, TrainSpeaksTheProtocol) {
    ProcessResult r = run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--batch", "2",
                                   "--warmup-steps", "1", "--steps", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto events = events_of(r.out);
    ASSERT_EQ(events.size(), 1u + 4u + 1u);  // ready, 1 warm-up + 3 measured steps, result
    const auto& ready = events.front();
    EXPECT_EQ(ready["event"], "ready");
    EXPECT_EQ(ready["items_per_step"], 2 * 32);
    EXPECT_EQ(ready["item_unit"], "tokens");
    EXPECT_EQ(ready["precision"], "fp32");
    EXPECT_FALSE(ready["cuda_graph"].get<bool>());  // CUDA graphs are CUDA's
    EXPECT_EQ(ready["parameters"], ready["trainable_parameters"]);
    EXPECT_TRUE(events[1]["warmup"].get<bool>());
    EXPECT_FALSE(events[2]["warmup"].get<bool>());
    const auto& result = events.back();
    EXPECT_EQ(result["event"], "result");
    EXPECT_EQ(result["steps"], 3);
    EXPECT_GT(result["items_per_s"].get<double>(), 0.0);
    EXPECT_LE(result["step_time_p50_s"].get<double>(), result["step_time_p95_s"].get<double>());
    EXPECT_TRUE(result["peak_memory_bytes"].is_null());  // not measured on CPU
    EXPECT_GT(result["achieved_flops_per_s"].get<double>(), 0.0);
    EXPECT_EQ(result["stopped_by"], "steps");
    EXPECT_EQ(result["step_mode"], "eager");
    EXPECT_TRUE(result["eager_reason"].is_null());  // none asked for on CPU
    // CPU: no SM counts, no peak, hence no MFU; every event belongs to job 0.
    for (const char* field :
         {"device_name", "device_sms", "sms", "memory_limit_bytes", "peak_flops_per_s"}) {
        EXPECT_TRUE(ready[field].is_null()) << field;
    }
    EXPECT_TRUE(result["mfu"].is_null());
    EXPECT_TRUE(result["sms"].is_null());
    for (const auto& e : events)
        EXPECT_EQ(e["job"], 0) << e.dump();
}

TEST(Worker, EagerStepsCanBeAskedFor) {
    ProcessResult r = run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--batch", "2",
                                   "--steps", "1", "--no-cuda-graph"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_EQ(events_of(r.out).back()["step_mode"], "eager");
}

TEST(Worker, FinetuneReportsFewerTrainableParameters) {
    ProcessResult r =
        run_process({MIGSCOPE_WORKER, "train", "--model", "vit-tiny", "--mode", "finetune",
                     "--batch", "2", "--warmup-steps", "0", "--steps", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto ready = events_of(r.out).front();
    EXPECT_LT(ready["trainable_parameters"].get<int64_t>(), ready["parameters"].get<int64_t>());
    EXPECT_NE(ready["weights"].get<std::string>().find("random"), std::string::npos);
    EXPECT_TRUE(ready["train_flops_per_step"].is_null());
}

TEST(Worker, UnknownWorkloadIsAnErrorEventAndBadInput) {
    ProcessResult r = run_process({MIGSCOPE_WORKER, "train", "--model", "resnet19"});
    EXPECT_EQ(r.exit_code, 2);
    const auto events = events_of(r.out);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["event"], "error");
    EXPECT_NE(events[0]["message"].get<std::string>().find("'resnet19'"), std::string::npos);
}

TEST(Worker, TrainsOnATokenFileAndRejectsABadOneBeforeReady) {
    std::vector<int32_t> header(256, 0);
    header[0] = 20240520;
    header[1] = 1;
    header[2] = 500;
    std::vector<uint16_t> tokens(500);
    for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = static_cast<uint16_t>(i % 128);
    const std::string good = testing::TempDir() + "/worker-tokens.bin";
    {
        std::ofstream out(good, std::ios::binary);
        out.write(reinterpret_cast<const char*>(header.data()), 1024);
        out.write(reinterpret_cast<const char*>(tokens.data()), 1000);
    }
    ProcessResult r = run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--data", good,
                                   "--warmup-steps", "0", "--steps", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto events = events_of(r.out);
    EXPECT_EQ(events.front()["data"], "file " + good);
    EXPECT_EQ(events.back()["event"], "result");

    const std::string bad = testing::TempDir() + "/worker-bad.bin";
    std::ofstream(bad, std::ios::binary) << std::string(1024, '\0');
    ProcessResult rejected =
        run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--data", bad});
    EXPECT_EQ(rejected.exit_code, 2);
    const auto bad_events = events_of(rejected.out);
    ASSERT_EQ(bad_events.size(), 1u);
    EXPECT_NE(bad_events[0]["message"].get<std::string>().find("bad magic"), std::string::npos);
}

TEST(Worker, SavesACheckpointAndStartsFromIt) {
    const std::string path = testing::TempDir() + "/worker-checkpoint.safetensors";
    ProcessResult saved =
        run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--batch", "2",
                     "--warmup-steps", "0", "--steps", "2", "--save-checkpoint", path});
    ASSERT_EQ(saved.exit_code, 0) << saved.err << saved.out;
    EXPECT_EQ(events_of(saved.out).front()["weights"], "random initialisation");

    ProcessResult loaded =
        run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--mode", "finetune",
                     "--batch", "2", "--warmup-steps", "0", "--steps", "1", "--checkpoint", path});
    ASSERT_EQ(loaded.exit_code, 0) << loaded.err << loaded.out;
    const std::string weights = events_of(loaded.out).front()["weights"];
    EXPECT_EQ(weights.rfind("checkpoint " + path + ": ", 0), 0u) << weights;
    EXPECT_NE(weights.find("tensors loaded"), std::string::npos) << weights;
    EXPECT_EQ(weights.find("not in it"), std::string::npos) << weights;

    // Another workload's weights name none of this one's tensors: bad input before ready.
    ProcessResult wrong = run_process(
        {MIGSCOPE_WORKER, "train", "--model", "resnet-tiny", "--steps", "1", "--checkpoint", path});
    EXPECT_EQ(wrong.exit_code, 2) << wrong.out;
    const auto events = events_of(wrong.out);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_NE(events[0]["message"].get<std::string>().find("none of its"), std::string::npos)
        << events[0];
}

TEST(Worker, WritesAProfilerTraceOfTheMeasuredSteps) {
    const std::string path = testing::TempDir() + "/worker-trace.json";
    std::remove(path.c_str());
    ProcessResult r = run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--batch", "2",
                                   "--warmup-steps", "1", "--steps", "2", "--profile-trace", path});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    std::ifstream file(path);
    ASSERT_TRUE(file) << path;
    const nlohmann::json trace = nlohmann::json::parse(file);
    int matmuls_with_shapes = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e.value("cat", "") == "cpu_op" && e.value("name", "") == "aten::mm" &&
            e["args"].contains("Input Dims"))
            ++matmuls_with_shapes;
    }
    EXPECT_GT(matmuls_with_shapes, 0);

    // An unwritable path is bad input, reported before the model is built.
    ProcessResult bad = run_process({MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny", "--steps",
                                     "1", "--profile-trace", "/no/such/dir/trace.json"});
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    const auto events = events_of(bad.out);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_NE(events[0]["message"].get<std::string>().find("--profile-trace"), std::string::npos);
}

TEST(Worker, MigscopeTrainPassesTheProfileTraceOn) {
    const std::string path = testing::TempDir() + "/train-trace.json";
    std::remove(path.c_str());
    ProcessResult r = run_process({MIGSCOPE_BINARY, "train", "--worker", MIGSCOPE_WORKER, "--model",
                                   "gpt2-tiny", "--device", "cpu", "--warmup-steps", "0", "--steps",
                                   "1", "--profile-trace", path});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    std::ifstream file(path);
    ASSERT_TRUE(file) << path;
    EXPECT_FALSE(nlohmann::json::parse(file)["traceEvents"].empty());
}

TEST(Worker, SmPartitionsAndMemoryCapsNeedCuda) {
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--sms", "16"}, {"--memory-limit-gib", "4"}}) {
        std::vector<std::string> argv = {MIGSCOPE_WORKER, "train", "--model", "gpt2-tiny"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        ProcessResult r = run_process(argv);
        EXPECT_EQ(r.exit_code, 2) << extra[0];
        const auto events = events_of(r.out);
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(events[0]["event"], "error");
        EXPECT_EQ(events[0]["job"], 0);
        EXPECT_NE(events[0]["message"].get<std::string>().find(extra[0] + " needs a CUDA device"),
                  std::string::npos)
            << events[0]["message"];
    }
}

namespace {
const std::vector<std::string> kUntilStopped = {MIGSCOPE_WORKER,  "train",   "--model",
                                                "gpt2-tiny",      "--batch", "2",
                                                "--warmup-steps", "1",       "--until-stopped"};
}  // namespace

TEST(Worker, UntilStoppedStepsUntilAStopLine) {
    // The stop line comes after a second, and stdin stays open: only the line can stop it.
    ProcessResult r = run_process(
        kUntilStopped,
        ProcessInput{"stop\n", std::chrono::milliseconds(1000), ProcessInput::Then::kKeepOpen});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto result = events_of(r.out).back();
    EXPECT_EQ(result["event"], "result");
    // Only the line (sent after a second, stdin left open) can have stopped it: it stepped until
    // then.
    EXPECT_EQ(result["stopped_by"], "stop");
    EXPECT_GE(result["steps"].get<int>(), 1);
}

TEST(Worker, UntilStoppedStopsAtTheEndOfInput) {
    ProcessResult r = run_process(kUntilStopped, ProcessInput{});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto result = events_of(r.out).back();
    EXPECT_EQ(result["stopped_by"], "eof");
    EXPECT_GE(result["steps"].get<int>(), 1);  // at least one measured step
}

namespace {
// gpt2-tiny at batch 2 with a held warm-up of `warmup` steps and `steps` steps of fixed work.
std::vector<std::string> held(const std::string& warmup, const std::string& steps) {
    return {MIGSCOPE_WORKER,
            "train",
            "--model",
            "gpt2-tiny",
            "--batch",
            "2",
            "--warmup-steps",
            warmup,
            "--steps",
            steps,
            "--hold-after-warmup"};
}

// Runs a held worker, says `start` 0.5 s later and keeps stdin open until it exits.
ProcessResult run_started(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {}) {
    return run_process(
        argv,
        ProcessInput{"start\n", std::chrono::milliseconds(500), ProcessInput::Then::kKeepOpen},
        env);
}
}  // namespace

TEST(Worker, HeldWarmUpWaitsForStartThenRunsTheFixedWork) {
    const std::vector<std::string> argv = held("2", "3");
    ProcessResult r = run_started(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    std::vector<std::string> kinds;
    for (const auto& e : events_of(r.out))
        kinds.push_back(e["event"]);
    // ready, two warm-up steps, warm, three measured steps, result.
    const std::vector<std::string> expected = {"ready", "step", "step", "warm",
                                               "step",  "step", "step", "result"};
    EXPECT_EQ(kinds, expected);
    EXPECT_EQ(events_of(r.out).back()["steps"], 3);
}

// Launch-ahead reports every step later, once its loss is read: the same events in the same order
// as stepping one at a time, with the same losses.
TEST(Worker, LaunchAheadReportsEveryStepWithItsOwnLoss) {
    const std::vector<std::string> argv = held("2", "3");
    auto steps_of = [&](const std::map<std::string, std::string>& env) {
        ProcessResult r = run_started(argv, env);
        EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
        std::vector<std::string> kinds;
        std::vector<nlohmann::json> steps;
        for (const auto& e : events_of(r.out)) {
            kinds.push_back(e["event"]);
            if (e["event"] == "step")
                steps.push_back({e["step"], e["warmup"], e["loss"]});
        }
        const std::vector<std::string> expected = {"ready", "step", "step", "warm",
                                                   "step",  "step", "step", "result"};
        EXPECT_EQ(kinds, expected);
        EXPECT_EQ(events_of(r.out).back()["steps"], 3);
        return steps;
    };
    const std::vector<nlohmann::json> ahead = steps_of({{"MIGSCOPE_LAUNCH_AHEAD", "1"}});
    EXPECT_EQ(ahead, steps_of({}));
    ASSERT_EQ(ahead.size(), 5u);
    EXPECT_NE(ahead[3][2], ahead[4][2]);  // each step's own loss, not one repeated
}

// Unset, launch-ahead follows the injection library (CUDA never starts on the CPU, so a library
// that does not exist is harmless here); MIGSCOPE_LAUNCH_AHEAD decides either way.
TEST(Worker, LaunchesAheadWhereAnInjectionLibraryIsLoadedUnlessToldOtherwise) {
    const std::vector<std::string> argv = held("1", "2");
    auto says_ahead = [&](const std::map<std::string, std::string>& env) {
        ProcessResult r = run_started(argv, env);
        EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
        return r.err.find("launches each step before it reads the last one's loss") !=
               std::string::npos;
    };
    const std::string probe = "/nonexistent/libmigscope-activity.so";
    EXPECT_FALSE(says_ahead({}));
    EXPECT_TRUE(says_ahead({{"CUDA_INJECTION64_PATH", probe}}));
    EXPECT_FALSE(says_ahead({{"CUDA_INJECTION64_PATH", probe}, {"MIGSCOPE_LAUNCH_AHEAD", "0"}}));
    EXPECT_TRUE(says_ahead({{"MIGSCOPE_LAUNCH_AHEAD", "1"}}));
    EXPECT_FALSE(says_ahead({{"CUDA_INJECTION64_PATH", ""}}));
}

TEST(Worker, AStopLineEndsFixedWorkEarly) {
    // An interrupted fixed-work run: the runner sends `stop`; the job ends after a measured step.
    const std::vector<std::string> argv = held("1", "100000");
    ProcessResult r =
        run_process(argv, ProcessInput{"start\nstop\n", std::chrono::milliseconds(300),
                                       ProcessInput::Then::kKeepOpen});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto result = events_of(r.out).back();
    EXPECT_EQ(result["stopped_by"], "stop");
    EXPECT_GE(result["steps"].get<int>(), 1);
    EXPECT_LT(result["steps"].get<int>(), 100000);
}

TEST(Worker, UntilStoppedExcludesAStepCount) {
    std::vector<std::string> argv = kUntilStopped;
    argv.insert(argv.end(), {"--steps", "3"});
    EXPECT_EQ(run_process(argv, ProcessInput{}).exit_code, 2);
}

namespace {
std::string write_spec(const std::string& name, const std::string& text) {
    const std::string path = testing::TempDir() + "/" + name;
    std::ofstream(path) << text;
    return path;
}

std::vector<nlohmann::json> of_job(const std::vector<nlohmann::json>& events, int job,
                                   const std::string& kind) {
    std::vector<nlohmann::json> out;
    for (const auto& e : events) {
        if (e["job"] == job && e["event"] == kind)
            out.push_back(e);
    }
    return out;
}
}  // namespace

TEST(Worker, GroupRunsJobsSideBySideWithTaggedEvents) {
    const std::string spec = write_spec("group.json", R"({"device": "cpu", "jobs": [
        {"workload": "gpt2-tiny", "batch": 2, "warmup_steps": 1, "steps": 3},
        {"workload": "resnet-tiny", "batch": 2, "warmup_steps": 0, "until_stopped": true}]})");
    // "stop" ends every job still stepping (as Ctrl-C does): it comes late enough for job 0's
    // four steps even on a loaded machine (after 1 s it once cut them short under a parallel build).
    ProcessResult r = run_process(
        {MIGSCOPE_WORKER, "group", "--spec", spec},
        ProcessInput{"stop\n", std::chrono::milliseconds(4000), ProcessInput::Then::kKeepOpen});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto events = events_of(r.out);
    for (const auto& e : events) {
        ASSERT_TRUE(e["job"] == 0 || e["job"] == 1) << e.dump();
        EXPECT_NE(e["event"], "error") << e.dump();
    }
    for (int job : {0, 1}) {
        ASSERT_EQ(of_job(events, job, "ready").size(), 1u) << job;
        ASSERT_EQ(of_job(events, job, "result").size(), 1u) << job;
        const auto ready = of_job(events, job, "ready")[0];
        const auto result = of_job(events, job, "result")[0];
        EXPECT_TRUE(ready["sms"].is_null());
        EXPECT_TRUE(ready["memory_limit_bytes"].is_null());
        EXPECT_TRUE(result["peak_memory_bytes"].is_null());  // not measured on CPU
        EXPECT_TRUE(result["mfu"].is_null());
    }
    EXPECT_EQ(of_job(events, 0, "ready")[0]["model"], "gpt2-tiny");
    EXPECT_EQ(of_job(events, 1, "ready")[0]["model"], "resnet-tiny");
    EXPECT_EQ(of_job(events, 0, "step").size(), 4u);  // 1 warm-up + 3 measured
    EXPECT_EQ(of_job(events, 0, "result")[0]["steps"], 3);
    EXPECT_EQ(of_job(events, 1, "result")[0]["stopped_by"], "stop");
    EXPECT_GE(of_job(events, 1, "result")[0]["steps"].get<int>(), 1);
    // Both jobs were ready before either stepped (they start together).
    size_t last_ready = 0, first_step = events.size();
    for (size_t i = 0; i < events.size(); ++i) {
        if (events[i]["event"] == "ready")
            last_ready = i;
        if (events[i]["event"] == "step")
            first_step = std::min(first_step, i);
    }
    EXPECT_LT(last_ready, first_step);
}

// Once stepping one at a time and once launching ahead (as under an injection library), where a
// job's result and its successor's start wait for its last launched steps.
class QueuedGroupJob : public ::testing::TestWithParam<const char*> {};

TEST_P(QueuedGroupJob, StartsItsMeasuredStepsWhenItsPredecessorEnds) {
    // Job 2 queues after job 0 (held fixed work, as the runner starts it); job 1 runs alongside.
    const std::string spec = write_spec("group-queue.json", R"({"device": "cpu", "jobs": [
        {"workload": "gpt2-tiny", "batch": 2, "warmup_steps": 1, "steps": 6, "hold_after_warmup": true},
        {"workload": "resnet-tiny", "batch": 2, "warmup_steps": 1, "steps": 2, "hold_after_warmup": true},
        {"workload": "bert-tiny", "batch": 2, "warmup_steps": 1, "steps": 3, "hold_after_warmup": true,
         "after": 0}]})");
    ProcessResult r = run_process(
        {MIGSCOPE_WORKER, "group", "--spec", spec},
        ProcessInput{"start\n", std::chrono::milliseconds(300), ProcessInput::Then::kKeepOpen},
        {{"MIGSCOPE_LAUNCH_AHEAD", GetParam()}});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const auto events = events_of(r.out);
    // Job 2's first measured step comes after job 0's result.
    size_t first_measured_of_2 = events.size(), result_of_0 = events.size();
    for (size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        EXPECT_NE(e["event"], "error") << e.dump();
        if (e["job"] == 0 && e["event"] == "result")
            result_of_0 = i;
        if (e["job"] == 2 && e["event"] == "step" && !e["warmup"].get<bool>())
            first_measured_of_2 = std::min(first_measured_of_2, i);
    }
    ASSERT_EQ(of_job(events, 2, "warm").size(), 1u);
    EXPECT_LT(result_of_0, first_measured_of_2);
    ASSERT_EQ(of_job(events, 2, "result").size(), 1u);
    EXPECT_EQ(of_job(events, 2, "result")[0]["steps"], 3);
    EXPECT_EQ(of_job(events, 0, "result")[0]["steps"], 6);
    EXPECT_EQ(of_job(events, 0, "step").size(), 7u);  // every step reported, the last ones too
}

INSTANTIATE_TEST_SUITE_P(Worker, QueuedGroupJob, ::testing::Values("0", "1"), [](const auto& info) {
    return std::string(info.param) == "1" ? "LaunchingAhead" : "OneStepAtATime";
});

TEST(Worker, AFailingGroupJobLeavesTheOthersRunning) {
    const std::string bad = testing::TempDir() + "/group-bad-tokens.bin";
    std::ofstream(bad, std::ios::binary) << std::string(1024, '\0');
    const std::string spec = write_spec("group-failing.json", R"({"device": "cpu", "jobs": [
        {"workload": "resnet-tiny", "batch": 2, "warmup_steps": 0, "steps": 3},
        {"workload": "gpt2-tiny", "batch": 2, "data": ")" + bad + R"("}]})");
    ProcessResult r = run_process({MIGSCOPE_WORKER, "group", "--spec", spec});
    EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
    const auto events = events_of(r.out);
    ASSERT_EQ(of_job(events, 1, "error").size(), 1u) << r.out;
    EXPECT_NE(of_job(events, 1, "error")[0]["message"].get<std::string>().find("bad magic"),
              std::string::npos);
    EXPECT_TRUE(of_job(events, 1, "ready").empty());
    ASSERT_EQ(of_job(events, 0, "result").size(), 1u) << r.out;
    EXPECT_EQ(of_job(events, 0, "result")[0]["steps"], 3);
}

TEST(Worker, BadGroupSpecsAreBadInputNamingTheKey) {
    const auto run_spec = [](const std::string& name, const std::string& text) {
        return run_process({MIGSCOPE_WORKER, "group", "--spec", write_spec(name, text)});
    };
    const auto message_of = [](const ProcessResult& r) {
        const auto events = events_of(r.out);
        EXPECT_EQ(events.size(), 1u) << r.out;
        EXPECT_TRUE(events.at(0)["job"].is_null());  // belongs to no job
        return events.at(0)["message"].get<std::string>();
    };
    ProcessResult unknown = run_spec(
        "unknown-key.json", R"({"device": "cpu", "jobs": [{"workload": "gpt2-tiny", "lr": 1}]})");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(message_of(unknown).find("jobs[0].lr: unexpected field (expected one of: workload, "),
              std::string::npos);

    ProcessResult bad_type = run_spec(
        "bad-type.json", R"({"device": "cpu", "jobs": [{"workload": "gpt2-tiny", "steps": "3"}]})");
    EXPECT_EQ(bad_type.exit_code, 2);
    EXPECT_NE(message_of(bad_type).find("jobs[0].steps"), std::string::npos);

    ProcessResult model =
        run_spec("bad-model.json", R"({"device": "cpu", "jobs": [{"workload": "resnet19"}]})");
    EXPECT_EQ(model.exit_code, 2);
    EXPECT_NE(message_of(model).find("jobs[0].workload"), std::string::npos);

    // The spec's key for the workload was "model" before the group spec and the jobs files
    // shared one job-spec type; an old spec is told so.
    ProcessResult old_key =
        run_spec("old-key.json", R"({"device": "cpu", "jobs": [{"model": "gpt2-tiny"}]})");
    EXPECT_EQ(old_key.exit_code, 2);
    EXPECT_NE(message_of(old_key).find("jobs[0].model: unexpected field (the workload's key is"),
              std::string::npos);

    ProcessResult sms = run_spec(
        "cpu-sms.json", R"({"device": "cpu", "jobs": [{"workload": "gpt2-tiny", "sms": 16}]})");
    EXPECT_EQ(sms.exit_code, 2);
    EXPECT_NE(message_of(sms).find("jobs[0].sms: needs a CUDA device"), std::string::npos);

    EXPECT_EQ(run_process({MIGSCOPE_WORKER, "group", "--spec", "/nonexistent.json"}).exit_code, 2);
}
