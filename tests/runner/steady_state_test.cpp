// Steady-state criterion: the CV of chunks (>= min_chunk_s of summed step time) of step times.
#include "runner/steady_state.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace migscope::runner {
namespace {

// Sample CV of the last n values, as the old step-by-step criterion computed it.
double cv_of_last(const std::vector<double>& v, size_t n) {
    double sum = 0;
    for (size_t i = v.size() - n; i < v.size(); ++i)
        sum += v[i];
    const double mean = sum / static_cast<double>(n);
    double squares = 0;
    for (size_t i = v.size() - n; i < v.size(); ++i)
        squares += (v[i] - mean) * (v[i] - mean);
    return std::sqrt(squares / static_cast<double>(n - 1)) / mean;
}

TEST(SteadyState, LongStepsAreJudgedStepByStepAsBefore) {
    SteadyStateCriterion c;  // last 5 chunks of >= 0.2 s, CV <= 10 %
    ASSERT_EQ(c.window_chunks, 5u);
    ASSERT_DOUBLE_EQ(c.min_chunk_s, 0.2);
    EXPECT_FALSE(check_steady({0.3, 0.3, 0.3, 0.3}, c).steady);
    EXPECT_FALSE(check_steady({0.3, 0.3, 0.3, 0.3}, c).cv);
    const SteadyCheck flat = check_steady({1.5, 0.3, 0.3, 0.3, 0.3, 0.3}, c);
    EXPECT_TRUE(flat.steady);  // the slow first step is outside the last five
    EXPECT_NEAR(*flat.cv, 0.0, 1e-12);
    const std::vector<double> noisy = {0.3, 0.6, 0.3, 0.6, 0.3, 0.6, 0.3};
    const SteadyCheck n = check_steady(noisy, c);
    EXPECT_FALSE(n.steady);
    // One step per chunk: exactly the CV of the last five steps.
    EXPECT_NEAR(*n.cv, cv_of_last(noisy, 5), 1e-12);
    // A step of exactly min_chunk_s is a chunk of its own.
    EXPECT_TRUE(check_steady({0.2, 0.2, 0.2, 0.2, 0.2}, c).steady);
}

TEST(SteadyState, ThresholdIsInclusiveAndConfigurable) {
    SteadyStateCriterion c;
    c.window_chunks = 3;
    c.max_cv = 0.5;
    EXPECT_TRUE(check_steady({0.3, 0.6, 0.3}, c).steady);
    c.max_cv = 0.01;
    EXPECT_FALSE(check_steady({0.3, 0.6, 0.3}, c).steady);
    // min_chunk_s 0: one step per chunk, whatever its length.
    c.max_cv = 0.10;
    c.min_chunk_s = 0;
    EXPECT_TRUE(check_steady({0.001, 0.001, 0.001}, c).steady);
    EXPECT_FALSE(check_steady({0.001, 0.002, 0.001}, c).steady);
}

// The H200 case: short steps under time-slicing alternate long and short while the job's rate
// is flat. Five single steps were never steady; chunks of 0.2 s are.
TEST(SteadyState, TimeSlicedShortStepsAreSteadyByRate) {
    std::vector<double> steps;
    for (int i = 0; i < 500; ++i)  // 2 s of 2 ms / 6 ms steps
        steps.push_back(i % 2 ? 0.006 : 0.002);
    SteadyStateCriterion by_step;
    by_step.min_chunk_s = 0;  // the old criterion
    EXPECT_FALSE(check_steady(steps, by_step).steady);
    EXPECT_GT(*check_steady(steps, by_step).cv, 0.4);

    const SteadyCheck c = check_steady(steps, SteadyStateCriterion{});
    EXPECT_TRUE(c.steady);
    EXPECT_LT(*c.cv, 0.02);
    // Not enough time yet for five chunks: 0.9 s of steps.
    const std::vector<double> short_run(steps.end() - 225, steps.end());
    EXPECT_FALSE(check_steady(short_run, SteadyStateCriterion{}).cv);
}

// A simulated time-slicer (fixed seed): our job and another take turns on the GPU in slices of
// 1 to 6 ms; a step needs 3.6 ms of GPU time, so its wall time is that plus the other's slices
// that fall inside it.
TEST(SteadyState, RandomTimeSlicesAreSteadyByRate) {
    std::mt19937 rng(20261202);
    const auto slice = [&] { return 0.001 * static_cast<double>(1 + rng() % 6); };
    std::vector<double> steps;
    double ours_left = slice();  // of the current slice that is ours
    double elapsed = 0;
    while (elapsed < 3.0) {
        double need = 0.0036, wall = 0;
        while (need > 1e-12) {
            const double run = std::min(need, ours_left);
            need -= run;
            ours_left -= run;
            wall += run;
            if (ours_left <= 1e-12) {
                wall += slice();  // the other process's turn
                ours_left = slice();
            }
        }
        steps.push_back(wall);
        elapsed += wall;
    }
    SteadyStateCriterion by_step;
    by_step.min_chunk_s = 0;
    EXPECT_GT(*check_steady(steps, by_step).cv, 0.10);  // was not steady
    // Not steady by five single steps at most of the moments it was asked.
    int by_step_steady = 0, by_rate_steady = 0, asked = 0;
    for (size_t n = steps.size() / 2; n <= steps.size(); ++n) {
        const std::vector<double> prefix(steps.begin(), steps.begin() + static_cast<long>(n));
        by_step_steady += check_steady(prefix, by_step).steady;
        by_rate_steady += check_steady(prefix, SteadyStateCriterion{}).steady;
        ++asked;
    }
    EXPECT_LT(by_step_steady, asked / 2) << by_step_steady << " of " << asked;
    EXPECT_EQ(by_rate_steady, asked);  // steady every time by rate
}

// A job still speeding up: step times fall 30 % (10 ms to 7 ms) over the last second. Five
// single steps look flat; the chunks show the trend.
TEST(SteadyState, ARampingJobIsNotSteady) {
    std::vector<double> steps(100, 0.010);  // 1 s flat at 10 ms
    double t = 0;
    while (t < 1.0) {
        const double step = 0.010 - 0.003 * t;
        steps.push_back(step);
        t += step;
    }
    SteadyStateCriterion by_step;
    by_step.min_chunk_s = 0;
    EXPECT_TRUE(check_steady(steps, by_step).steady);  // the old criterion was fooled
    const SteadyCheck c = check_steady(steps, SteadyStateCriterion{});
    EXPECT_FALSE(c.steady);
    EXPECT_GT(*c.cv, 0.10);
    RecordProperty("ramp_cv", std::to_string(*c.cv));
    // Once it has levelled out for a second, it is steady.
    steps.insert(steps.end(), 150, 0.007);
    EXPECT_TRUE(check_steady(steps, SteadyStateCriterion{}).steady);
}

}  // namespace
}  // namespace migscope::runner
