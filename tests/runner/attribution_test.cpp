// Energy attribution: idle by partition size, dynamic by SM-seconds; always sums to the total.
#include "runner/attribution.h"

#include <gtest/gtest.h>

#include <numeric>

namespace migscope::runner {
namespace {

double sum(const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
}

TEST(Attribution, IdleBySizeDynamicByActivity) {
    // 10 s at 100 W idle = 1000 J static; 3000 J dynamic.
    const Attribution a = attribute_energy({4000, 10, 100.0, {16, 48}, {10, 10}, {}});
    EXPECT_DOUBLE_EQ(a.idle_energy_j, 1000);
    EXPECT_NEAR(a.energy_j[0], 250 + 750, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 750 + 2250, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 4000, 1e-9);
}

TEST(Attribution, AnIdlePartitionStillCarriesItsStaticShare) {
    // Job 1 finished after 2 s of a 10 s makespan: it keeps its idle share, less dynamic.
    const Attribution a = attribute_energy({4000, 10, 100.0, {32, 32}, {10, 2}, {}});
    EXPECT_NEAR(a.energy_j[0], 500 + 3000 * 10.0 / 12.0, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 500 + 3000 * 2.0 / 12.0, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 4000, 1e-9);
}

TEST(Attribution, JobsQueuedOnOnePartitionShareItsStaticPower) {
    // Jobs 0 and 1 queue on one 32-SM partition (busy 6 s and 4 s), job 2 has the other one.
    const Attribution a =
        attribute_energy({4000, 10, 100.0, {32, 32, 32}, {6, 4, 10}, {0.6, 0.4, 1.0}});
    // Static 1000 J: half to each partition, the first split 60/40; dynamic by SM-seconds.
    EXPECT_NEAR(a.energy_j[0], 300 + 3000 * 6.0 / 20.0, 1e-9);
    EXPECT_NEAR(a.energy_j[1], 200 + 3000 * 4.0 / 20.0, 1e-9);
    EXPECT_NEAR(a.energy_j[2], 500 + 3000 * 10.0 / 20.0, 1e-9);
    EXPECT_NEAR(sum(a.energy_j), 4000, 1e-9);
}

TEST(Attribution, IdlePowerAboveTheAverageIsCappedAtTheTotal) {
    const Attribution a = attribute_energy({500, 10, 100.0, {1, 1}, {10, 10}, {}});
    EXPECT_DOUBLE_EQ(a.idle_energy_j, 500);
    EXPECT_NEAR(sum(a.energy_j), 500, 1e-9);
}

TEST(Attribution, WithoutIdlePowerAllByActivityAndTheMethodSaysSo) {
    const Attribution a = attribute_energy({1000, 10, std::nullopt, {1, 3}, {10, 10}, {}});
    EXPECT_NEAR(a.energy_j[0], 250, 1e-9);
    EXPECT_NE(a.method.find("no idle power"), std::string::npos);
}

TEST(Attribution, NoActivityFallsBackToPartitionSize) {
    const Attribution a = attribute_energy({1000, 10, 50.0, {1, 3}, {0, 0}, {}});
    EXPECT_NEAR(a.energy_j[1], 750, 1e-9);
    EXPECT_NE(a.method.find("split by partition size"), std::string::npos);
}

}  // namespace
}  // namespace migscope::runner
