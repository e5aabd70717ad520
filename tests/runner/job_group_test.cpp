// Tests of what the runner makes of a job's steps (job_group.h): the rate's spread in its window.
#include "runner/job_group.h"

#include <gtest/gtest.h>

namespace migscope::runner {
namespace {

// Steps of `items` each, taking the given times.
std::vector<Step> steps_of(double items, const std::vector<double>& times_s) {
    std::vector<Step> steps;
    for (double t : times_s) {
        Step s;
        s.items = items;
        s.time_s = t;
        steps.push_back(s);
    }
    return steps;
}

TEST(RateSpread, ASteadyRateHasNone) {
    EXPECT_DOUBLE_EQ(*rate_spread_pct(steps_of(32, std::vector<double>(9, 0.01))), 0.0);
}

TEST(RateSpread, ThePartsRatesMaxMinusMinOverTheirMedian) {
    // Parts of three steps: 0.01, 0.02 and 0.04 s a step: 3200, 1600 and 800 items/s.
    const auto steps = steps_of(32, {0.01, 0.01, 0.01, 0.02, 0.02, 0.02, 0.04, 0.04, 0.04});
    EXPECT_NEAR(*rate_spread_pct(steps), 100.0 * (3200 - 800) / 1600, 1e-9);
}

TEST(RateSpread, TheFirstPartsTakeTheRemainder) {
    // 7 steps: parts of 3, 2 and 2; one slow step in the first part, which then runs at
    // 32 * 3 / 0.06 = 1600 items/s against 3200 in the others.
    const auto steps = steps_of(32, {0.04, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01});
    EXPECT_NEAR(*rate_spread_pct(steps), 100.0 * (3200 - 1600) / 3200, 1e-9);
}

TEST(RateSpread, NoneUnderSixStepsOrWithoutItems) {
    EXPECT_FALSE(rate_spread_pct(steps_of(32, std::vector<double>(5, 0.01))));
    EXPECT_FALSE(rate_spread_pct(steps_of(0, std::vector<double>(9, 0.01))));
    EXPECT_FALSE(rate_spread_pct({}));
}

}  // namespace
}  // namespace migscope::runner
