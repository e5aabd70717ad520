// Tests of the strict group spec parser.
#include "workloads/job_spec.h"

#include <gtest/gtest.h>

#include "core/error.h"

using namespace migscope;
using namespace migscope::workloads;

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

TEST(JobSpec, ParsesAGoodSpec) {
    const GroupSpec g = parse_group_spec(R"({"device": "cuda:0", "jobs": [
        {"model": "gpt2-medium", "mode": "finetune", "batch": 8, "sms": 60,
         "memory_limit_gib": 69.75, "warmup_steps": 5, "seconds": 30, "seed": 7, "lora_rank": 4,
         "data": "tokens.bin", "checkpoint": "base.safetensors", "save_checkpoint": "out.st"},
        {"model": "resnet18", "sms": 16, "until_stopped": true, "cuda_graph": false},
        {"model": "bert-tiny", "steps": 4}]})");
    EXPECT_EQ(g.device, "cuda:0");
    ASSERT_EQ(g.jobs.size(), 3u);
    const JobSpec& a = g.jobs[0];
    EXPECT_EQ(a.model, "gpt2-medium");
    EXPECT_EQ(a.mode, "finetune");
    EXPECT_EQ(a.batch, 8);
    EXPECT_EQ(a.sms, 60);
    EXPECT_DOUBLE_EQ(*a.memory_limit_gib, 69.75);
    EXPECT_EQ(a.warmup_steps, 5);
    EXPECT_EQ(a.stop, StopRule::kSeconds);
    EXPECT_DOUBLE_EQ(a.seconds_s, 30);
    EXPECT_EQ(a.seed, 7u);
    EXPECT_EQ(a.lora_rank, 4);
    EXPECT_EQ(a.data, "tokens.bin");
    EXPECT_EQ(a.checkpoint, "base.safetensors");
    EXPECT_EQ(a.save_checkpoint, "out.st");
    EXPECT_TRUE(a.cuda_graph);  // the default
    EXPECT_EQ(g.jobs[1].stop, StopRule::kUntilStopped);
    EXPECT_FALSE(g.jobs[1].cuda_graph);
    EXPECT_FALSE(g.jobs[1].memory_limit_gib);
    EXPECT_EQ(g.jobs[2].stop, StopRule::kSteps);
    EXPECT_EQ(g.jobs[2].steps, 4);
    EXPECT_FALSE(g.jobs[2].sms);
    EXPECT_EQ(g.jobs[2].batch, 0);  // the workload's default
}

TEST(JobSpec, UnknownKeysAreNamedWithTheirPath) {
    EXPECT_NE(error_of(R"({"device": "cpu", "jobs": [{"model": "resnet-tiny"},
                           {"model": "gpt2-tiny", "batchsize": 2}]})")
                  .find("jobs[1].batchsize: unknown key"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"device": "cpu", "gpus": 1, "jobs": [{"model": "resnet-tiny"}]})")
                  .find("gpus: unknown key"),
              std::string::npos);
}

TEST(JobSpec, BadTypesAndValuesAreNamed) {
    const auto job = [](const std::string& fields) {
        return error_of(R"({"device": "cpu", "jobs": [{"model": "gpt2-tiny", )" + fields + "}]}");
    };
    EXPECT_NE(job(R"("batch": "8")").find("jobs[0].batch: expected an integer"), std::string::npos);
    EXPECT_NE(job(R"("batch": 0)").find("jobs[0].batch: must be at least 1"), std::string::npos);
    EXPECT_NE(job(R"("sms": 16.5)").find("jobs[0].sms"), std::string::npos);
    EXPECT_NE(job(R"("memory_limit_gib": -1)").find("jobs[0].memory_limit_gib"), std::string::npos);
    EXPECT_NE(job(R"("until_stopped": 1)").find("jobs[0].until_stopped"), std::string::npos);
    EXPECT_NE(job(R"("cuda_graph": "no")").find("jobs[0].cuda_graph: expected true or false"),
              std::string::npos);
    EXPECT_NE(job(R"("mode": "infer")").find("jobs[0].mode"), std::string::npos);
    EXPECT_NE(job(R"("steps": 3, "seconds": 2)").find("at most one of"), std::string::npos);
    EXPECT_NE(
        error_of(R"({"device": "cpu", "jobs": [{"batch": 2}]})").find("jobs[0].model: missing"),
        std::string::npos);
    EXPECT_NE(error_of(R"({"device": "cpu", "jobs": []})").find("jobs:"), std::string::npos);
    EXPECT_NE(error_of(R"({"jobs": [{"model": "gpt2-tiny"}]})").find("device: missing"),
              std::string::npos);
    EXPECT_NE(error_of("{not json").find("not JSON"), std::string::npos);
    EXPECT_NE(error_of("[1]").find("expected an object"), std::string::npos);
}

TEST(JobSpec, QueuedJobsFollowAnEarlierJobOnItsPartition) {
    const GroupSpec g = parse_group_spec(R"({"device": "cuda:0", "jobs": [
        {"model": "resnet18", "sms": 32, "steps": 10},
        {"model": "resnet18", "sms": 16, "steps": 10},
        {"model": "bert-tiny", "steps": 5, "after": 0},
        {"model": "bert-tiny", "seconds": 2, "after": 2}]})");
    EXPECT_FALSE(g.jobs[0].after);
    EXPECT_EQ(g.jobs[2].after, 0);
    EXPECT_EQ(g.jobs[3].after, 2);

    const auto spec = [](const std::string& second) {
        return error_of(R"({"device": "cpu", "jobs": [{"model": "gpt2-tiny", "steps": 3}, )" +
                        second + "]}");
    };
    EXPECT_NE(spec(R"({"model": "gpt2-tiny", "after": 1})")
                  .find("jobs[1].after: must name an "
                        "earlier job (0 to 0), got 1"),
              std::string::npos);
    EXPECT_NE(
        spec(R"({"model": "gpt2-tiny", "after": -1})").find("jobs[1].after: must be at least"),
        std::string::npos);
    EXPECT_NE(spec(R"({"model": "gpt2-tiny", "after": 0, "sms": 8})").find("jobs[1].sms: a queued"),
              std::string::npos);
    EXPECT_NE(spec(R"({"model": "gpt2-tiny", "after": 0, "until_stopped": true})")
                  .find("jobs[1].until_stopped: a job in a queue"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"device": "cpu", "jobs": [{"model": "gpt2-tiny", "until_stopped": true},
                           {"model": "gpt2-tiny", "after": 0}]})")
                  .find("jobs[0].until_stopped: a job in a queue"),
              std::string::npos);
}
