// Same-work comparison with the sequential baseline.
#include "runner/comparison.h"

#include <gtest/gtest.h>

namespace migscope::runner {
namespace {

JobResult job(const std::string& name, double items_per_s, std::optional<double> j_per_item) {
    JobResult r;
    r.spec.name = name;
    r.items_per_s = items_per_s;
    r.energy_per_item_j = j_per_item;
    return r;
}

TEST(Comparison, PricesTheRunsWorkAtTheBaselinesPerItemEnergyAndSpeed) {
    RunResult run;
    run.window_s = 10;
    run.energy.counter_energy_j = 3000;
    run.jobs = {job("a", 50, std::nullopt), job("b", 20, std::nullopt)};
    RunResult base;
    base.jobs = {job("a", 100, 2.0), job("b", 40, 5.0)};
    const Comparison c = compare_with_baseline(run, base);
    // a did 500 items (5 s and 1000 J alone), b 200 items (5 s and 1000 J alone).
    EXPECT_DOUBLE_EQ(*c.baseline_energy_j, 2000);
    EXPECT_DOUBLE_EQ(*c.baseline_time_s, 10);
    EXPECT_DOUBLE_EQ(*c.energy_change_pct, 50);
    EXPECT_DOUBLE_EQ(*c.speedup, 1.0);
}

TEST(Comparison, FixedWorkUsesTheItemsDone) {
    RunResult run;
    run.mode = RunMode::kWork;
    run.window_s = 4;
    run.energy.counter_energy_j = 900;
    JobResult a = job("a", 50, std::nullopt);
    a.items = 400;
    run.jobs = {a};
    RunResult base;
    base.jobs = {job("a", 100, 3.0)};
    const Comparison c = compare_with_baseline(run, base);
    EXPECT_DOUBLE_EQ(*c.baseline_energy_j, 1200);
    EXPECT_DOUBLE_EQ(*c.energy_change_pct, -25);
    EXPECT_DOUBLE_EQ(*c.speedup, 1.0);
}

TEST(Comparison, WithoutEnergyAloneTheSpeedupStays) {
    RunResult run;
    run.window_s = 1;
    run.jobs = {job("a", 50, std::nullopt)};
    RunResult base;
    base.jobs = {job("a", 100, std::nullopt)};  // no energy measured alone
    const Comparison c = compare_with_baseline(run, base);
    EXPECT_FALSE(c.baseline_energy_j);
    EXPECT_FALSE(c.energy_change_pct);
    // 50 items take 0.5 s alone: the speedup needs only the throughputs.
    EXPECT_DOUBLE_EQ(*c.baseline_time_s, 0.5);
    EXPECT_DOUBLE_EQ(*c.speedup, 0.5);
}

TEST(Comparison, AJobMissingFromTheBaselineLeavesBothEmpty) {
    RunResult run;
    run.window_s = 1;
    run.energy.counter_energy_j = 100;
    run.jobs = {job("a", 50, std::nullopt), job("b", 10, std::nullopt)};
    RunResult base;
    base.jobs = {job("a", 100, 2.0)};
    const Comparison c = compare_with_baseline(run, base);
    EXPECT_FALSE(c.speedup);
    EXPECT_FALSE(c.energy_change_pct);
}

}  // namespace
}  // namespace migscope::runner
