// Tests of the group spec: the strict reader, the writer (round trip) and the worker's train argv.
#include "protocol/group_spec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"

using namespace migscope;
using namespace migscope::protocol;

namespace {
// The input error's message, or "" when parsing succeeded.
std::string error_of(const std::string& text) {
    try {
        parse_group_spec(text);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "";
}
}  // namespace

TEST(GroupSpec, ParsesAGoodSpec) {
    const GroupSpec g = parse_group_spec(R"({"device": "cuda:0", "jobs": [
        {"workload": "gpt2-medium", "mode": "finetune", "batch": 8, "sms": 60,
         "memory_limit_gib": 69.75, "warmup_steps": 5, "seconds": 30, "seed": 7, "lora_rank": 4,
         "data": "tokens.bin", "checkpoint": "base.safetensors", "save_checkpoint": "out.st"},
        {"workload": "resnet18", "sms": 16, "until_stopped": true, "cuda_graph": false},
        {"workload": "bert-tiny", "steps": 4}]})");
    EXPECT_EQ(g.device, "cuda:0");
    ASSERT_EQ(g.jobs.size(), 3u);
    const WorkerJob& a = g.jobs[0];
    EXPECT_EQ(a.job.workload, "gpt2-medium");
    EXPECT_EQ(a.job.name, "gpt2-medium");
    EXPECT_EQ(a.job.mode, "finetune");
    EXPECT_EQ(a.job.batch, 8);
    EXPECT_EQ(a.sms, 60);
    EXPECT_DOUBLE_EQ(*a.memory_limit_gib, 69.75);
    EXPECT_EQ(a.warmup_steps, 5);
    EXPECT_EQ(a.stop, StopRule::kSeconds);
    EXPECT_DOUBLE_EQ(a.seconds_s, 30);
    EXPECT_EQ(a.seed, 7u);
    EXPECT_EQ(a.job.lora_rank, 4);
    EXPECT_EQ(a.job.data, "tokens.bin");
    EXPECT_EQ(a.job.checkpoint, "base.safetensors");
    EXPECT_EQ(a.save_checkpoint, "out.st");
    EXPECT_EQ(a.cuda_graph, CudaGraph::kCapture);  // the default
    EXPECT_EQ(a.hold_after_warmup, Hold::kNo);
    EXPECT_EQ(g.jobs[1].stop, StopRule::kUntilStopped);
    EXPECT_EQ(g.jobs[1].cuda_graph, CudaGraph::kEager);
    EXPECT_FALSE(g.jobs[1].memory_limit_gib);
    EXPECT_EQ(g.jobs[2].stop, StopRule::kSteps);
    EXPECT_EQ(g.jobs[2].steps, 4);
    EXPECT_FALSE(g.jobs[2].sms);
    EXPECT_FALSE(g.jobs[2].job.batch);      // the workload's default
    EXPECT_FALSE(g.jobs[2].job.lora_rank);  // the worker's default
}

TEST(GroupSpec, UnknownKeysAreNamedWithTheirPath) {
    EXPECT_NE(
        error_of(R"({"device": "cpu", "jobs": [{"workload": "resnet-tiny"},
                           {"workload": "gpt2-tiny", "batchsize": 2}]})")
            .find("group spec: jobs[1].batchsize: unexpected field (expected one of: workload, "),
        std::string::npos);
    EXPECT_NE(error_of(R"({"device": "cpu", "gpus": 1, "jobs": [{"workload": "resnet-tiny"}]})")
                  .find("group spec: gpus: unexpected field (expected one of: device, jobs)"),
              std::string::npos);
}

TEST(GroupSpec, BadTypesAndValuesAreNamed) {
    const auto job = [](const std::string& fields) {
        return error_of(R"({"device": "cpu", "jobs": [{"workload": "gpt2-tiny", )" + fields +
                        "}]}");
    };
    EXPECT_NE(
        job(R"("batch": "8")").find("jobs[0].batch: wrong type: expected an integer, got a string"),
        std::string::npos);
    EXPECT_NE(job(R"("batch": 0)").find("jobs[0].batch: must be at least 1"), std::string::npos);
    EXPECT_NE(job(R"("sms": 16.5)").find("jobs[0].sms"), std::string::npos);
    EXPECT_NE(job(R"("memory_limit_gib": -1)").find("jobs[0].memory_limit_gib"), std::string::npos);
    EXPECT_NE(job(R"("until_stopped": 1)").find("jobs[0].until_stopped"), std::string::npos);
    EXPECT_NE(
        job(R"("cuda_graph": "no")").find("jobs[0].cuda_graph: wrong type: expected true or false"),
        std::string::npos);
    EXPECT_NE(job(R"("mode": "infer")").find("jobs[0].mode"), std::string::npos);
    EXPECT_NE(job(R"("steps": 3, "seconds": 2)").find("at most one of"), std::string::npos);
    EXPECT_NE(error_of(R"({"device": "cpu", "jobs": [{"batch": 2}]})")
                  .find("jobs[0].workload: missing field (the workload's name)"),
              std::string::npos);
    EXPECT_NE(job(R"("hold_after_warmup": "yes")").find("jobs[0].hold_after_warmup"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"device": "cpu", "jobs": []})").find("jobs:"), std::string::npos);
    EXPECT_NE(error_of(R"({"jobs": [{"workload": "gpt2-tiny"}]})")
                  .find("group spec: device: missing field (cpu, cuda or cuda:N)"),
              std::string::npos);
    EXPECT_NE(error_of("{not json").find("not JSON"), std::string::npos);
    EXPECT_NE(error_of("[1]").find("(top level): wrong type: expected an object, got an array"),
              std::string::npos);
}

// Found by fuzzing: a number no double holds was an internal error (nlohmann's out_of_range),
// not bad input.
TEST(GroupSpec, ANumberTooLargeForADoubleIsBadInput) {
    try {
        parse_group_spec(R"({"device": "cuda:0", "jobs": [{"workload": "mlp", "batch": 1e999}]})");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("group spec: not JSON"), std::string::npos);
    }
}

TEST(GroupSpec, QueuedJobsFollowAnEarlierJobOnItsPartition) {
    const GroupSpec g = parse_group_spec(R"({"device": "cuda:0", "jobs": [
        {"workload": "resnet18", "sms": 32, "steps": 10},
        {"workload": "resnet18", "sms": 16, "steps": 10},
        {"workload": "bert-tiny", "steps": 5, "after": 0},
        {"workload": "bert-tiny", "seconds": 2, "after": 2}]})");
    EXPECT_FALSE(g.jobs[0].after);
    EXPECT_EQ(g.jobs[2].after, 0);
    EXPECT_EQ(g.jobs[3].after, 2);

    const auto spec = [](const std::string& second) {
        return error_of(R"({"device": "cpu", "jobs": [{"workload": "gpt2-tiny", "steps": 3}, )" +
                        second + "]}");
    };
    EXPECT_NE(spec(R"({"workload": "gpt2-tiny", "after": 1})")
                  .find("jobs[1].after: must name an "
                        "earlier job (0 to 0), got 1"),
              std::string::npos);
    EXPECT_NE(
        spec(R"({"workload": "gpt2-tiny", "after": -1})").find("jobs[1].after: must be at least"),
        std::string::npos);
    EXPECT_NE(
        spec(R"({"workload": "gpt2-tiny", "after": 0, "sms": 8})").find("jobs[1].sms: a queued"),
        std::string::npos);
    EXPECT_NE(spec(R"({"workload": "gpt2-tiny", "after": 0, "until_stopped": true})")
                  .find("jobs[1].until_stopped: a job in a queue"),
              std::string::npos);
    EXPECT_NE(
        error_of(R"({"device": "cpu", "jobs": [{"workload": "gpt2-tiny", "until_stopped": true},
                           {"workload": "gpt2-tiny", "after": 0}]})")
            .find("jobs[0].until_stopped: a job in a queue"),
        std::string::npos);
}

TEST(GroupSpec, TheOldKeyForTheWorkloadIsNamed) {
    EXPECT_NE(error_of(R"({"device": "cpu", "jobs": [{"model": "gpt2-tiny"}]})")
                  .find("jobs[0].model: unexpected field (the workload's key is \"workload\"; "
                        "expected one of: workload, "),
              std::string::npos);
}

namespace {
GroupSpec every_field() {
    GroupSpec g;
    g.device = "cuda:1";
    WorkerJob a;
    a.job.workload = "gpt2-medium";
    a.job.mode = "finetune";
    a.job.batch = 8;
    a.job.data = "tokens.bin";
    a.job.checkpoint = "base.safetensors";
    a.job.lora_rank = 4;
    a.warmup_steps = 5;
    a.stop = StopRule::kSeconds;
    a.seconds_s = 2.5;
    a.seed = 7;
    a.save_checkpoint = "out.safetensors";
    a.sms = 60;
    a.memory_limit_gib = 69.75;
    a.hold_after_warmup = Hold::kUntilStart;
    a.start_after_s = 12.5;
    a.cuda_graph = CudaGraph::kEager;
    WorkerJob b;
    b.job.workload = "resnet18";
    b.stop = StopRule::kSteps;
    b.steps = 50;
    b.after = 0;
    WorkerJob c;
    c.job.workload = "bert-tiny";
    c.stop = StopRule::kUntilStopped;
    c.sms = 16;
    g.jobs = {a, b, c};
    return g;
}
}  // namespace

TEST(GroupSpec, WhatIsWrittenReadsBackTheSame) {
    const GroupSpec g = every_field();
    const GroupSpec back = parse_group_spec(to_json_text(g));
    EXPECT_EQ(back.device, g.device);
    ASSERT_EQ(back.jobs.size(), g.jobs.size());
    for (size_t i = 0; i < g.jobs.size(); ++i) {
        const WorkerJob& x = g.jobs[i];
        const WorkerJob& y = back.jobs[i];
        SCOPED_TRACE(i);
        EXPECT_EQ(y.job.workload, x.job.workload);
        EXPECT_EQ(y.job.mode, x.job.mode);
        EXPECT_EQ(y.job.batch, x.job.batch);
        EXPECT_EQ(y.job.data, x.job.data);
        EXPECT_EQ(y.job.checkpoint, x.job.checkpoint);
        EXPECT_EQ(y.job.lora_rank, x.job.lora_rank);
        EXPECT_EQ(y.warmup_steps, x.warmup_steps);
        EXPECT_EQ(y.stop, x.stop);
        if (x.stop == StopRule::kSteps) {
            EXPECT_EQ(y.steps, x.steps);
        }
        if (x.stop == StopRule::kSeconds) {
            EXPECT_DOUBLE_EQ(y.seconds_s, x.seconds_s);
        }
        EXPECT_EQ(y.seed, x.seed);
        EXPECT_EQ(y.save_checkpoint, x.save_checkpoint);
        EXPECT_EQ(y.sms, x.sms);
        EXPECT_EQ(y.memory_limit_gib, x.memory_limit_gib);
        EXPECT_EQ(y.hold_after_warmup, x.hold_after_warmup);
        EXPECT_EQ(y.cuda_graph, x.cuda_graph);
        EXPECT_EQ(y.after, x.after);
        EXPECT_DOUBLE_EQ(y.start_after_s, x.start_after_s);
    }
}

// A later start counts from `start` (a stream replay's arrivals): it needs the hold, and it is
// finite seconds >= 0, named by its path when not.
TEST(GroupSpec, AStartTimeCountsFromTheStartLine) {
    const GroupSpec g = parse_group_spec(R"({"device": "cpu", "jobs": [
        {"workload": "resnet18", "steps": 3, "hold_after_warmup": true, "start_after_s": 4.5}]})");
    EXPECT_DOUBLE_EQ(g.jobs[0].start_after_s, 4.5);
    const auto job = [](const std::string& keys) {
        return error_of(R"({"device": "cpu", "jobs": [{"workload": "resnet18", "steps": 3, )" +
                        keys + "}]}");
    };
    EXPECT_NE(job(R"("start_after_s": 2)").find("jobs[0].start_after_s: counts from `start`"),
              std::string::npos);
    EXPECT_NE(job(R"("hold_after_warmup": true, "start_after_s": -1)")
                  .find("jobs[0].start_after_s: must be finite and at least 0"),
              std::string::npos);
    EXPECT_NE(
        job(R"("hold_after_warmup": true, "start_after_s": "soon")").find("jobs[0].start_after_s"),
        std::string::npos);
    WorkerJob t = g.jobs[0];
    EXPECT_THROW(train_argv("w", t, "cpu"), Error);  // the runner's, for `train` jobs
}

TEST(GroupSpec, TheWriterSaysOnlyWhatDiffersFromTheDefaults) {
    GroupSpec g;
    g.device = "cuda:0";
    WorkerJob j;
    j.job.workload = "resnet18";
    j.stop = StopRule::kUntilStopped;
    g.jobs = {j};
    const auto written = nlohmann::json::parse(to_json_text(g));
    EXPECT_EQ(written, nlohmann::json::parse(R"({"device": "cuda:0", "jobs": [
        {"workload": "resnet18", "mode": "train", "warmup_steps": 3, "until_stopped": true}]})"));
}

TEST(GroupSpec, TheWriterRefusesWhatTheSpecCannotCarry) {
    GroupSpec g;
    g.device = "cuda:0";
    WorkerJob external;
    external.job.command = {"python3", "train.py"};
    g.jobs = {external};
    EXPECT_THROW(to_json_text(g), Error);
    WorkerJob traced;
    traced.job.workload = "resnet18";
    traced.profile_trace = "trace.json";
    g.jobs = {traced};
    EXPECT_THROW(to_json_text(g), Error);
}

TEST(GroupSpec, TrainArgvSaysEveryChoice) {
    WorkerJob j = every_field().jobs[0];
    j.start_after_s = 0;  // the runner's for `train` jobs (AStartTimeCountsFromTheStartLine)
    const std::vector<std::string> expected = {"w",
                                               "train",
                                               "--model",
                                               "gpt2-medium",
                                               "--mode",
                                               "finetune",
                                               "--device",
                                               "cuda:0",
                                               "--warmup-steps",
                                               "5",
                                               "--batch",
                                               "8",
                                               "--data",
                                               "tokens.bin",
                                               "--checkpoint",
                                               "base.safetensors",
                                               "--lora-rank",
                                               "4",
                                               "--seed",
                                               "7",
                                               "--sms",
                                               "60",
                                               "--memory-limit-gib",
                                               "69.75",
                                               "--save-checkpoint",
                                               "out.safetensors",
                                               "--seconds",
                                               "2.5",
                                               "--hold-after-warmup",
                                               "--no-cuda-graph"};
    EXPECT_EQ(train_argv("w", j, "cuda:0"), expected);
    j.stop = StopRule::kUntilStopped;
    j.hold_after_warmup = Hold::kNo;
    j.cuda_graph = CudaGraph::kCapture;
    EXPECT_EQ(train_argv("w", j, "cuda:0").back(), "--until-stopped");
    j.profile_trace = "t.json";
    const auto traced = train_argv("w", j, "cpu");
    EXPECT_NE(std::find(traced.begin(), traced.end(), "--profile-trace"), traced.end());
    j.after = 0;  // a queue needs a group
    EXPECT_THROW(train_argv("w", j, "cpu"), Error);
}
