// Tests of NvmlPowerSource scopes against the fake NVML: what each scope reads, and the fallback to
// the energy API when the driver does not serve the energy counter as a field.
#include "telemetry/nvml_power_source.h"

#include <gtest/gtest.h>

#include <fstream>

#include "nvml/fake_nvml_env.h"

using namespace migscope;
using namespace migscope::telemetry;

TEST(NvmlPowerSource, PowerScopeReadsPowerAndTheEnergyField) {
    FakeNvmlEnv env("h200.json");
    nvml::Session session = nvml::Session::open();
    NvmlPowerSource source(session.device(0));
    const Sample power = source.read(SampleScope::kPower);
    EXPECT_TRUE(power.power_instant_w.has_value());
    EXPECT_TRUE(power.energy_j.has_value());
    EXPECT_FALSE(power.temperature_c.has_value());
    EXPECT_FALSE(power.sm_clock_mhz.has_value());
    const Sample all = source.read(SampleScope::kAll);
    EXPECT_EQ(all.temperature_c, 45u);
    EXPECT_EQ(all.sm_clock_mhz, 1980u);
    EXPECT_GE(*all.energy_j, *power.energy_j);
}

TEST(NvmlPowerSource, WithoutTheEnergyFieldOnlyFullReadsCarryEnergy) {
    const std::string path = testing::TempDir() + "/no-energy-field.json";
    std::ofstream(path) << R"({"devices": [{"name": "NVIDIA H200", "power_w": 300,
                               "unsupported": ["field:energy"]}]})";
    FakeNvmlEnv env(path);
    nvml::Session session = nvml::Session::open();
    NvmlPowerSource source(session.device(0));
    EXPECT_FALSE(source.read(SampleScope::kPower).energy_j.has_value());
    EXPECT_TRUE(source.read(SampleScope::kAll).energy_j.has_value());
}
