// Tests of the live power regression on a simulated GPU whose processes draw known watts per unit
// of activity: it finds them where the intervals tell the processes apart, keeps the pooled
// figure (the split by activity) where they cannot, and forgets processes that exit.
#include "telemetry/power_regression.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"

#include "telemetry/attribution.h"

using namespace migscope::telemetry;

namespace {

// Two time-sliced processes: a heavy one (300 W at full activity) and a light one (100 W), with
// activities that wander around 0.5 and 0.4 by `spread`, a board whose dynamic power is their
// sum plus noise of `noise_w`.
PowerRegression two_processes(int intervals, double spread, double noise_w, unsigned seed = 7) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> jitter(0, 1);
    PowerRegression r;
    for (int k = 0; k < intervals; ++k) {
        const double a = std::clamp(0.5 + spread * jitter(rng), 0.0, 1.0);
        const double b = std::clamp(0.4 + spread * jitter(rng), 0.0, 1.0);
        r.add({1.0, 300 * a + 100 * b + noise_w * jitter(rng), {{"heavy", a}, {"light", b}}});
    }
    return r;
}

}  // namespace

TEST(PowerRegression, FindsEachProcesssOwnPowerWhereActivitiesVary) {
    const PowerRegression r = two_processes(120, 0.1, 5);
    const auto w = r.full_activity_power_w({"heavy", "light"});
    ASSERT_TRUE(w);
    EXPECT_NEAR((*w)[0], 300, 20);
    EXPECT_NEAR((*w)[1], 100, 20);
}

TEST(PowerRegression, KeepsThePooledFigureWhereProcessesCannotBeToldApart) {
    // Always 0.5 and 0.4: only the sum is known, so both get 190 W / 0.9.
    const PowerRegression r = two_processes(120, 0, 0);
    const auto w = r.full_activity_power_w({"heavy", "light"});
    ASSERT_TRUE(w);
    EXPECT_NEAR((*w)[0], 190 / 0.9, 0.5);
    EXPECT_NEAR((*w)[1], 190 / 0.9, 0.5);
}

TEST(PowerRegression, AProcessStartingAloneIdentifiesBoth) {
    // The heavy one runs alone for 30 s, then both at fixed activities: the start tells them apart.
    PowerRegression r;
    for (int k = 0; k < 30; ++k)
        r.add({1.0, 300 * 0.9, {{"heavy", 0.9}, {"light", 0.0}}});
    for (int k = 0; k < 60; ++k)
        r.add({1.0, 300 * 0.5 + 100 * 0.4, {{"heavy", 0.5}, {"light", 0.4}}});
    const auto w = r.full_activity_power_w({"light", "heavy"});
    ASSERT_TRUE(w);
    EXPECT_NEAR((*w)[1], 300, 10);
    EXPECT_NEAR((*w)[0], 100, 15);
}

TEST(PowerRegression, NothingUntilEnoughIntervalsAndExitedProcessesLeave) {
    PowerRegression r;
    EXPECT_FALSE(r.full_activity_power_w({"a"}));
    for (int k = 0; k < 10; ++k)
        r.add({1.0, 100, {{"a", 0.5}}});
    EXPECT_FALSE(r.full_activity_power_w({"a"}));  // 10 < min_weight
    for (int k = 0; k < 20; ++k)
        r.add({1.0, 0, {}});  // idle intervals teach nothing
    EXPECT_FALSE(r.full_activity_power_w({"a"}));
    for (int k = 0; k < 20; ++k)
        r.add({1.0, 100, {{"a", 0.5}}});
    EXPECT_NEAR(r.full_activity_power_w({"a"}).value()[0], 200, 1);
    r.add({1.0, 60, {{"b", 0.3}}});  // a exited
    EXPECT_FALSE(r.full_activity_power_w({"a"}));
    EXPECT_THROW(PowerRegression(PowerRegressionOptions{0, 0.01, 20, 8}), migscope::Error);
}

// What the split makes of it: the library's marginal path with the learned powers gives the heavy
// process its own share of the dynamic energy, where the split by activity alone does not.
TEST(PowerRegression, TheSplitWithLearnedPowersFollowsWatts) {
    const PowerRegression r = two_processes(120, 0.1, 5);
    const std::vector<double> w = r.full_activity_power_w({"heavy", "light"}).value();
    // One interval at 0.5 / 0.4: dynamic 190 W, true shares 150 : 40.
    AttributionInput in;
    in.energy_j = 190;
    in.duration_s = 1;
    in.partition_sms = {1, 1};
    in.busy_s = {0.5, 0.4};
    in.static_share = StaticShare::kUnowned;
    in.without_activity = WithoutActivity::kUnattributed;
    const Attribution by_activity = attribute_energy(in);
    in.without_dynamic_w = {190 - w[0], 190 - w[1]};
    const Attribution by_power = attribute_energy(in);
    EXPECT_NEAR(by_power.energy_j[0], 150, 8);
    EXPECT_NEAR(by_activity.energy_j[0], 190 * 0.5 / 0.9, 1e-9);  // 105.6 J: 30 % short
}
