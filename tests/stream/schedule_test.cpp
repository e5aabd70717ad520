// Tests of a policy's schedule of layouts as a mig-parted config and a times list.
#include "stream/schedule.h"

#include <gtest/gtest.h>

#include <set>

#include "mig/mig_parted.h"
#include "stream/fixture.h"
#include "stream/policies.h"

namespace migscope::stream {
namespace {

using testing::launch_bound;

// Two GPUs, bursts at 0, 1000 and 2000 s, repartitioned every 1000 s: whole at 0, then 1g
// partitions.
StreamResult periodic_run() {
    const plan::Problem p = launch_bound();
    std::vector<StreamJob> jobs;
    for (double at : {0.0, 1000.0, 2000.0}) {
        for (int i = 0; i < 14; ++i)
            jobs.push_back({0, at + 0.1 * i, {}});
    }
    SimulationOptions o;
    o.gpus = 2;
    o.reconfiguration.orchestrator_s = 10;
    PeriodicRepartition periodic(p, jobs, o, StreamObjective{}, 1000, 1000);
    return simulate(p, jobs, periodic, o);
}

TEST(StreamSchedule, TheConfigParsesAndNamesOnlyCatalogProfiles) {
    const StreamResult r = periodic_run();
    ASSERT_GE(r.reconfigurations, 1u);
    const LayoutSchedule s = layout_schedule(r);
    EXPECT_EQ(s.policy, r.policy);
    // Strict reading (yaml-cpp, unknown keys refused), then each entry checked on the H200.
    const std::vector<mig::MigPartedConfig> configs = mig::parse_mig_parted(s.mig_parted_yaml);
    std::set<std::string> names;
    for (const mig::MigPartedConfig& c : configs)
        names.insert(c.name);
    EXPECT_TRUE(names.count("all-disabled"));
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    for (const mig::EntryVerdict& v : mig::check_mig_parted(configs, h200)) {
        EXPECT_TRUE(v.kind == mig::EntryVerdict::Kind::kValid ||
                    v.kind == mig::EntryVerdict::Kind::kMigDisabled)
            << v.config << ": " << v.detail;
    }
    for (const mig::MigPartedConfig& c : configs) {
        for (const mig::MigPartedEntry& e : c.entries) {
            for (const auto& [profile, count] : e.mig_devices) {
                bool known = false;
                for (const mig::Profile& p : h200.profiles)
                    known = known || p.name == profile;
                EXPECT_TRUE(known) << profile;
                EXPECT_GT(count, 0u);
            }
        }
    }
    // Every step names a config of the file; the partitioned one is there.
    bool partitioned = false;
    for (const ScheduledLayout& step : s.steps) {
        EXPECT_TRUE(names.count(step.config)) << step.config;
        partitioned = partitioned || step.config != "all-disabled";
    }
    EXPECT_TRUE(partitioned);
    EXPECT_EQ(names.size(), 2u);  // all-disabled and the 1g layout, each once
}

TEST(StreamSchedule, TimesStartAtZeroForEveryGpuAndNeverGoBack) {
    const StreamResult r = periodic_run();
    const LayoutSchedule s = layout_schedule(r);
    ASSERT_EQ(s.steps.size(), r.layouts.size());
    ASSERT_GE(s.steps.size(), 3u);
    EXPECT_DOUBLE_EQ(s.steps[0].time_s, 0);
    EXPECT_DOUBLE_EQ(s.steps[1].time_s, 0);
    EXPECT_EQ(s.steps[0].gpu + s.steps[1].gpu, 1u);  // both GPUs' first layouts
    for (size_t i = 1; i < s.steps.size(); ++i)
        EXPECT_LE(s.steps[i - 1].time_s, s.steps[i].time_s) << i;
    const nlohmann::ordered_json doc = schedule_times_json(s);
    EXPECT_EQ(doc["version"], 1);
    EXPECT_EQ(doc["mig_parted_config"], kScheduleConfigFile);
    ASSERT_EQ(doc["steps"].size(), s.steps.size());
    EXPECT_EQ(doc["steps"][2]["config"], s.steps[2].config);
    EXPECT_DOUBLE_EQ(doc["steps"][2]["time_s"].get<double>(), s.steps[2].time_s);
}

TEST(StreamSchedule, NeverPartitioningIsAllDisabledOnEveryGpu) {
    const plan::Problem p = launch_bound();
    NeverPartition never;
    SimulationOptions o;
    o.gpus = 3;
    const LayoutSchedule s = layout_schedule(simulate(p, {{0, 0, {}}}, never, o));
    ASSERT_EQ(s.steps.size(), 3u);
    for (const ScheduledLayout& step : s.steps)
        EXPECT_EQ(step.config, "all-disabled");
    EXPECT_EQ(mig::parse_mig_parted(s.mig_parted_yaml).size(), 1u);
}

}  // namespace
}  // namespace migscope::stream
