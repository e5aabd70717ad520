// Tests that migscope-worker is built against the expected LibTorch and runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
