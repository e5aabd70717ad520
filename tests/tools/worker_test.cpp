// Tests that migscope-worker is built against the expected LibTorch and runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
