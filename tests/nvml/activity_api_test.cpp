// Tests of NVML's activity calls (per-process SM utilization, GPM MIG samples) against the fake
// libnvidia-ml.
#include "nvml/activity_api.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "nvml/fake_nvml_env.h"

using namespace migscope;
using namespace migscope::nvml;

TEST(NvmlActivity, ProcessSmUtilizationGivesEachProcessItsRatio) {
    FakeNvmlEnv env("exporter-fleet.json");
    Session session = Session::open();
    const std::vector<ProcessSmSample> samples = process_sm_utilization(session.device(1), 0);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0].pid, 4001u);
    EXPECT_DOUBLE_EQ(samples[0].sm_ratio, 0.6);
    EXPECT_EQ(samples[1].pid, 4002u);
    EXPECT_DOUBLE_EQ(samples[1].sm_ratio, 0.2);
    // Nothing newer than the newest sample: empty, not an error.
    EXPECT_TRUE(
        process_sm_utilization(session.device(1), samples[0].timestamp_us + 60000000ull).empty());
}

TEST(NvmlActivity, UnsupportedProcessUtilizationNamesTheCall) {
    FakeNvmlEnv env("exporter-faults.json");
    Session session = Session::open();
    try {
        process_sm_utilization(session.device(2), 0);
        FAIL() << "GPU 2 gives no process utilization";
    } catch (const CallError& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_EQ(e.call(), "nvmlDeviceGetProcessUtilization");
        EXPECT_EQ(e.code(), api::kErrorNotSupported);
    }
}

TEST(NvmlActivity, GpmSmActivityOfAMigInstanceBetweenTwoSamples) {
    FakeNvmlEnv env("exporter-fleet.json");
    Session session = Session::open();
    const Device gpu = session.device(0);
    ASSERT_TRUE(gpm_supported(gpu));
    GpmSampleBuffer first(gpu), second(gpu);
    gpm_mig_sample(gpu, 1, first);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gpm_mig_sample(gpu, 1, second);
    EXPECT_DOUBLE_EQ(gpm_sm_activity_ratio(gpu, first, second), 0.8);
    try {
        gpm_mig_sample(gpu, 42, first);  // no such GPU instance
        FAIL();
    } catch (const CallError& e) {
        EXPECT_EQ(e.call(), "nvmlGpmMigSampleGet");
        EXPECT_NE(std::string(e.what()).find("nvmlGpmMigSampleGet failed"), std::string::npos);
    }
}

TEST(NvmlActivity, LostGpuAnswersGpuIsLost) {
    FakeNvmlEnv env("exporter-faults.json");
    Session session = Session::open();
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // GPU 1 is lost at 2 s
    try {
        process_sm_utilization(session.device(1), 0);
        FAIL();
    } catch (const CallError& e) {
        EXPECT_EQ(e.code(), api::kErrorGpuIsLost);
        EXPECT_NE(std::string(e.what()).find("GPU is lost"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(session.device(1).energy_j().value);
}
