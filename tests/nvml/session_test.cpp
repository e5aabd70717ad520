// Tests of NVML loading and device queries, against the fake libnvidia-ml (tests/fake_nvml).
#include "nvml/session.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "nvml/fake_nvml_env.h"

using namespace migscope;
using namespace migscope::nvml;

TEST(NvmlSession, MissingLibraryIsUnavailableNotACrash) {
    FakeNvmlEnv env("h200.json", "/nonexistent/libnvidia-ml.so.1");
    try {
        Session::open();
        FAIL() << "opened a library that does not exist";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
    }
}

TEST(NvmlSession, DriverNotLoadedNamesTheCall) {
    FakeNvmlEnv env("");  // fake library, no config: nvmlInit_v2 answers "driver not loaded"
    try {
        Session::open();
        FAIL() << "init should fail";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find("nvmlInit_v2 failed: Driver Not Loaded"),
                  std::string::npos)
            << e.what();
    }
}

TEST(NvmlSession, ReadsDeviceFields) {
    FakeNvmlEnv env("h200.json");
    Session session = Session::open();
    EXPECT_EQ(session.device_count(), 1u);
    EXPECT_EQ(session.driver_version(), "580.159.04");
    EXPECT_EQ(session.cuda_driver_version(), 13000);
    Device d = session.device(0);
    EXPECT_EQ(d.name().value, "NVIDIA H200");
    EXPECT_EQ(d.uuid().value, "GPU-00000000-fake-h200-0000-000000000000");
    EXPECT_NEAR(static_cast<double>(d.memory().value->total) / 1048576.0, 143771.0, 1e-6);
    EXPECT_FALSE(d.mig_mode().value->current_enabled);
    EXPECT_DOUBLE_EQ(*d.power_limit_w().value, 700.0);
    EXPECT_EQ(d.clocks().sm_mhz, 1980u);
    EXPECT_EQ(d.clocks().memory_mhz, 3201u);
    EXPECT_EQ(d.utilization().value->gpu, 100u);
    EXPECT_EQ(d.temperature_c().value, 45u);
    EXPECT_EQ(clocks_event_reason_names(*d.clocks_event_reasons().value),
              (std::vector<std::string>{"sw_power_cap"}));
    PowerFields p = d.power_fields();
    ASSERT_TRUE(p.instant_w);
    EXPECT_GT(*p.instant_w, 100.0);
    EXPECT_GT(*d.energy_j().value, 1.0e6);
}

TEST(NvmlSession, IndexOutOfRangeIsBadInput) {
    FakeNvmlEnv env("h200.json");
    Session session = Session::open();
    try {
        session.device(3);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("GPU index 3"), std::string::npos);
    }
}

TEST(NvmlSession, UnsupportedQueriesReadAsEmpty) {
    const std::string path = testing::TempDir() + "/unsupported.json";
    std::ofstream(path) << R"({"devices": [{"name": "Old GPU",
        "unsupported": ["nvmlDeviceGetFieldValues", "nvmlDeviceGetTotalEnergyConsumption",
                        "nvmlDeviceGetMigMode"]}]})";
    FakeNvmlEnv env(path);
    Session session = Session::open();
    Device d = session.device(0);
    EXPECT_FALSE(d.power_fields().instant_w.has_value());
    EXPECT_FALSE(d.energy_j().value.has_value());
    EXPECT_FALSE(d.energy_j().supported());
    EXPECT_FALSE(d.mig_mode().value.has_value());
    EXPECT_TRUE(d.gpu_instance_profiles().empty());
    EXPECT_FALSE(d.temperature_c().value.has_value());  // key absent -> not supported
}

TEST(NvmlSession, ReadsMigProfilesAndPlacements) {
    FakeNvmlEnv env("h200.json");
    Session session = Session::open();
    std::vector<NvmlProfile> profiles = session.device(0).gpu_instance_profiles();
    ASSERT_EQ(profiles.size(), 7u);
    const NvmlProfile& three_g = profiles[2];
    EXPECT_EQ(three_g.id, 9u);
    EXPECT_EQ(three_g.multiprocessor_count, 60u);
    ASSERT_EQ(three_g.placements.size(), 2u);
    EXPECT_EQ(three_g.placements[1].start, 4u);
    EXPECT_EQ(three_g.placements[1].size, 4u);
    EXPECT_TRUE(three_g.name.empty());  // the fake, like a MIG-disabled driver, gives no names
}

TEST(NvmlSession, ReasonNamesKeepUnknownBits) {
    EXPECT_EQ(clocks_event_reason_names(0), std::vector<std::string>{});
    EXPECT_EQ(clocks_event_reason_names(0x1 | 0x40 | 0x10000),
              (std::vector<std::string>{"gpu_idle", "hw_thermal_slowdown", "other_0x10000"}));
}
