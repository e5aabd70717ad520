// Job lists: the command-line syntax and strict JSON files.
#include "partition/job.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::partition {
namespace {

TEST(JobList, ParsesWorkloadModeAndBatchAndNamesRepeatsUniquely) {
    const auto jobs =
        parse_job_list("resnet50, bert-base:finetune,resnet18:32,resnet18:finetune:8");
    ASSERT_EQ(jobs.size(), 4u);
    EXPECT_EQ(jobs[0].workload, "resnet50");
    EXPECT_EQ(jobs[0].mode, "train");
    EXPECT_FALSE(jobs[0].batch);
    EXPECT_EQ(jobs[1].mode, "finetune");
    EXPECT_EQ(jobs[1].name, "bert-base-ft");
    EXPECT_EQ(jobs[2].batch, 32);
    EXPECT_EQ(jobs[2].name, "resnet18");
    EXPECT_EQ(jobs[3].batch, 8);
    EXPECT_EQ(jobs[3].name, "resnet18-ft");
    const auto same = parse_job_list("resnet18,resnet18");
    EXPECT_EQ(same[1].name, "resnet18#2");
}

TEST(JobList, RejectsBadItemsNamingThem) {
    for (const char* bad : {"resnet18,", "resnet18:fast", "resnet18:0", "a:train:8:9", ":8"}) {
        try {
            parse_job_list(bad);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput) << bad;
        }
    }
    try {
        parse_job_list("resnet18:fast");
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("fast"), std::string::npos);
    }
}

TEST(JobsJson, ReadsBuiltInAndExternalJobs) {
    const auto jobs = parse_jobs_json(R"({"jobs": [
        {"workload": "gpt2-medium", "mode": "finetune", "batch": 4, "lora_rank": 16,
         "checkpoint": "base.safetensors"},
        {"command": ["python3", "train.py", "--fast"], "name": "mine"}]})",
                                      "jobs.json");
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].lora_rank, 16);
    EXPECT_EQ(jobs[0].checkpoint, "base.safetensors");
    EXPECT_TRUE(jobs[1].external());
    EXPECT_EQ(jobs[1].command.size(), 3u);
    EXPECT_EQ(jobs[1].name, "mine");
}

TEST(JobsJson, RejectsUnknownKeysWithTheirPath) {
    try {
        parse_jobs_json(R"({"jobs": [{"workload": "resnet18"}, {"workload": "x", "bach": 3}]})",
                        "jobs.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("jobs[1]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("bach"), std::string::npos);
    }
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"workload": "a", "command": ["b"]}]})", "f"), Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"command": ["b"], "batch": 3}]})", "f"), Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"command": ["b"], "checkpoint": "c"}]})", "f"),
                 Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": []})", "f"), Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [], "extra": 1})", "f"), Error);
    EXPECT_THROW(parse_jobs_json("{not json", "f"), Error);
}

}  // namespace
}  // namespace migscope::partition
