// Steady-state criterion.
#include "runner/steady_state.h"

#include <gtest/gtest.h>

namespace migscope::runner {
namespace {

TEST(SteadyState, NeedsEnoughStepsThenLowSpread) {
    SteadyStateCriterion c;  // last 5 steps, CV <= 10 %
    EXPECT_FALSE(check_steady({0.1, 0.1, 0.1, 0.1}, c).steady);
    EXPECT_FALSE(check_steady({0.1, 0.1, 0.1, 0.1}, c).cv);
    const SteadyCheck flat = check_steady({0.5, 0.1, 0.1, 0.1, 0.1, 0.1}, c);
    EXPECT_TRUE(flat.steady);  // the slow first step is outside the last five
    EXPECT_NEAR(*flat.cv, 0.0, 1e-12);
    const SteadyCheck noisy = check_steady({0.1, 0.2, 0.1, 0.2, 0.1}, c);
    EXPECT_FALSE(noisy.steady);
    EXPECT_GT(*noisy.cv, 0.2);
}

TEST(SteadyState, ThresholdIsInclusiveAndConfigurable) {
    SteadyStateCriterion c;
    c.window_steps = 3;
    c.max_cv = 0.5;
    EXPECT_TRUE(check_steady({0.1, 0.2, 0.1}, c).steady);
    c.max_cv = 0.01;
    EXPECT_FALSE(check_steady({0.1, 0.2, 0.1}, c).steady);
}

}  // namespace
}  // namespace migscope::runner
