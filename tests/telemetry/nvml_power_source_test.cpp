// Tests of NvmlPowerSource scopes against the fake NVML: what each scope reads.
#include "telemetry/nvml_power_source.h"

#include <gtest/gtest.h>

#include "nvml/fake_nvml_env.h"

using namespace migscope;
using namespace migscope::telemetry;

TEST(NvmlPowerSource, PowerScopeReadsOnlyPower) {
    FakeNvmlEnv env("h200.json");
    nvml::Session session = nvml::Session::open();
    NvmlPowerSource source(session.device(0));
    const Sample power = source.read(SampleScope::kPower);
    EXPECT_TRUE(power.power_instant_w.has_value());
    EXPECT_TRUE(power.power_average_w.has_value());
    EXPECT_FALSE(power.energy_j.has_value());
    EXPECT_FALSE(power.temperature_c.has_value());
    EXPECT_FALSE(power.sm_clock_mhz.has_value());
}

TEST(NvmlPowerSource, AllScopeReadsEveryField) {
    FakeNvmlEnv env("h200.json");
    nvml::Session session = nvml::Session::open();
    NvmlPowerSource source(session.device(0));
    const Sample all = source.read(SampleScope::kAll);
    EXPECT_GT(*all.energy_j, 1.0e6);
    EXPECT_EQ(all.temperature_c, 45u);
    EXPECT_EQ(all.sm_clock_mhz, 1980u);
    EXPECT_EQ(all.memory_clock_mhz, 3201u);
    EXPECT_EQ(all.gpu_utilization_pct, 100u);
    EXPECT_NEAR(*all.memory_used_mib, 512.0, 1e-9);
    EXPECT_EQ(all.clocks_event_reasons, 4ull);
}
