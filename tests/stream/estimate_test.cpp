// Tests of a stream's interval from the model's known error.
#include "stream/estimate.h"

#include <gtest/gtest.h>

#include "stream/fixture.h"
#include "stream/policies.h"

namespace migscope::stream {
namespace {

using plan::testing::job_profile;
using plan::testing::profile_set;
using testing::add_residuals;

// One job: 100 items/s on the whole GPU (300 W), idle 100 W; 1000 items: 10 s, 2 kJ dynamic.
plan::Problem one_job() {
    static const plan::ProfileSet set =
        profile_set({job_profile("a", 10, {{"2g.35gb", {50, 200}}, {"whole GPU", {100, 300}}})});
    return plan::make_problem({{"a", "a", "train", 10, 100, {}, {}}}, set,
                              mig::builtin_model("h200"), {});
}

TEST(StreamEstimate, SpansTheSlowAndFastEndsOfTheBands) {
    const plan::Problem p = one_job();
    plan::ModelError error;
    add_residuals(error, plan::ResidualKind::kSpeed, "alone", 0.5, 1.0);
    add_residuals(error, plan::ResidualKind::kSpeed, "mix/small/plain", 0.8, 1.0);
    add_residuals(error, plan::ResidualKind::kDynamicEnergy, "mix/plain", 1.0, 1.5);
    const PolicyFactory never = [] { return std::make_unique<NeverPartition>(); };
    const StreamEstimate e = estimate(p, {{0, 0, 15}}, never, {}, &error, 700);
    ASSERT_TRUE(e.known) << e.unknown_why;
    EXPECT_DOUBLE_EQ(e.point.mean_completion_s, 10);
    // Fewer than 20 residuals: the band is their least to largest. Slow: half the speed (20 s),
    // 1.5 × the dynamic power (300 W × 20 s) on idle 100 W × 20 s.
    EXPECT_DOUBLE_EQ(e.mean_completion_s.lo, 10);
    EXPECT_DOUBLE_EQ(e.mean_completion_s.hi, 20);
    EXPECT_NEAR(e.energy_j.lo, 100 * 10 + 200 * 10, 1e-9);
    EXPECT_NEAR(e.energy_j.hi, 100 * 20 + 300 * 20, 1e-9);
    EXPECT_TRUE(e.energy_j.contains(e.point.energy_j));
    // Due at 15 s: on time at the point and fast, 5 s late slow. The combined figure's interval
    // is the span of each run's own sum: 3000 J fast, 8000 + 700 × 5 J slow.
    EXPECT_DOUBLE_EQ(e.tardiness_s.hi, 5);
    EXPECT_DOUBLE_EQ(e.tardiness_weight_w, 700);
    EXPECT_NEAR(e.energy_tardiness_j.lo, 100 * 10 + 200 * 10, 1e-9);
    EXPECT_NEAR(e.energy_tardiness_j.hi, 100 * 20 + 300 * 20 + 700 * 5, 1e-9);
}

TEST(StreamEstimate, WithoutResidualsTheBoundsAreThePointAndSaySo) {
    const plan::Problem p = one_job();
    const PolicyFactory never = [] { return std::make_unique<NeverPartition>(); };
    const StreamEstimate none = estimate(p, {{0, 0, {}}}, never, {}, nullptr, 700);
    EXPECT_FALSE(none.known);
    EXPECT_FALSE(none.unknown_why.empty());
    EXPECT_DOUBLE_EQ(none.energy_j.lo, none.point.energy_j);
    EXPECT_DOUBLE_EQ(none.energy_j.hi, none.point.energy_j);
    EXPECT_DOUBLE_EQ(none.energy_tardiness_j.lo, none.point.energy_j);  // nobody due
    EXPECT_DOUBLE_EQ(none.energy_tardiness_j.hi, none.point.energy_j);
    plan::ModelError few;
    add_residuals(few, plan::ResidualKind::kSpeed, "alone", 0.9,
                  1.1);  // no mix, no energy residuals
    EXPECT_FALSE(estimate(p, {{0, 0, {}}}, never, {}, &few, 700).known);
}

}  // namespace
}  // namespace migscope::stream
