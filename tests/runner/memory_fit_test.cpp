// Memory fit: records matched by workload, mode and batch; misfits name the job and both sizes.
#include "runner/memory_fit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "partition/job.h"

namespace migscope::runner {
namespace {

std::vector<MemoryRecord> shipped() {
    return read_memory_records(MIGSCOPE_DATA_DIR "/peak-memory-h200.json");
}

TEST(MemoryFit, ShippedRecordsCoverTheSixWorkloadsAtTheirDefaultBatch) {
    const auto records = shipped();
    for (const char* w :
         {"resnet18", "resnet50", "vit-b16", "bert-base", "gpt2-medium", "gpt2-xl"}) {
        partition::JobSpec j;
        j.workload = w;
        EXPECT_TRUE(find_memory_record(records, j)) << w;
    }
}

TEST(MemoryFit, MatchesBatchAndModeExactly) {
    const auto records = shipped();
    partition::JobSpec j = partition::parse_job_list("gpt2-xl:8")[0];
    EXPECT_TRUE(find_memory_record(records, j));
    j.batch = 4;
    EXPECT_FALSE(find_memory_record(records, j));  // unknown: no refusal, never a guess
    j = partition::parse_job_list("gpt2-xl:finetune")[0];
    EXPECT_FALSE(find_memory_record(records, j));
}

TEST(MemoryFit, AJobLargerThanItsPartitionIsNamedWithBothSizes) {
    const auto jobs = partition::parse_job_list("gpt2-xl,resnet18");
    partition::Partition small;
    small.label = "2g.35gb";
    small.memory_gib = 32.5;
    const auto misfits = memory_misfits(jobs, {small, small}, shipped());
    ASSERT_EQ(misfits.size(), 1u);
    EXPECT_NE(misfits[0].find("gpt2-xl"), std::string::npos);
    EXPECT_NE(misfits[0].find("41.7 GiB"), std::string::npos);
    EXPECT_NE(misfits[0].find("32.50 GiB"), std::string::npos);
    partition::Partition whole;  // no memory cap: fits
    EXPECT_TRUE(memory_misfits(jobs, {whole, whole}, shipped()).empty());
    // A long name is said whole (a 256-byte buffer once cut the sentence short).
    auto named = jobs;
    named[0].name = std::string(300, 'n');
    const auto long_name = memory_misfits(named, {small, small}, shipped());
    ASSERT_EQ(long_name.size(), 1u);
    EXPECT_NE(long_name[0].find(std::string(300, 'n') + "' needs 41.7 GiB"), std::string::npos);
    EXPECT_NE(long_name[0].find("has 32.50 GiB"), std::string::npos) << long_name[0];
}

TEST(MemoryFit, MalformedRecordsAreRejectedWithTheirIndex) {
    const std::string path = testing::TempDir() + "/bad-records.json";
    std::ofstream(path) << R"({"records": [{"workload": "a", "mode": "train", "batch": 1,
                                "peak_memory_gib": 1}, {"workload": "b", "mode": "train"}]})";
    try {
        read_memory_records(path);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad-records.json: records[1].batch: missing field"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace migscope::runner
