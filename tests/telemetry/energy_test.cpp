// Tests of window energy on synthetic traces: exact cases, clipping, and the fallbacks.
#include "telemetry/energy.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace migscope;
using namespace migscope::telemetry;

namespace {
const SteadyTime kT0 = SteadyTime{} + std::chrono::hours(1);

Sample at(double t_s, std::optional<double> instant_w,
          std::optional<double> energy_j = std::nullopt) {
    Sample s;
    s.time =
        kT0 + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(t_s));
    s.power_instant_w = instant_w;
    s.power_average_w = instant_w ? std::optional<double>(*instant_w + 1.0) : std::nullopt;
    s.energy_j = energy_j;
    return s;
}
}  // namespace

TEST(Energy, TrapezoidIsExactForLinearPower) {
    // 100 W rising to 300 W over 10 s: 2000 J.
    EXPECT_NEAR(integrate_trapezoid({{0, 100}, {4, 180}, {10, 300}}), 2000.0, 1e-9);
    EXPECT_DOUBLE_EQ(integrate_trapezoid({{0, 50}}), 0.0);
}

TEST(Energy, ConstantPowerCounterAndTraceAgree) {
    std::vector<Sample> trace;
    for (int i = 1; i < 100; ++i)
        trace.push_back(at(i * 0.1, 500.0));
    EnergySummary s = summarize_window(trace, at(0, 500.0, 1000.0), at(10, 500.0, 6000.0));
    EXPECT_DOUBLE_EQ(s.duration_s, 10.0);
    EXPECT_NEAR(*s.counter_energy_j, 5000.0, 1e-9);
    EXPECT_NEAR(*s.trace_energy_j, 5000.0, 1e-6);
    EXPECT_NEAR(*s.disagreement_pct, 0.0, 1e-6);
    EXPECT_NEAR(*s.average_power_w, 500.0, 1e-9);
    EXPECT_DOUBLE_EQ(*s.peak_power_w, 500.0);
    EXPECT_EQ(s.power_samples, 101u);
    EXPECT_NEAR(*s.max_gap_s, 0.1, 1e-6);
    EXPECT_TRUE(s.warnings.empty());
}

TEST(Energy, SamplesOutsideTheWindowAreIgnored) {
    std::vector<Sample> trace = {at(-1, 900.0), at(1, 100.0), at(3, 900.0)};
    EnergySummary s = summarize_window(trace, at(0, 100.0), at(2, 100.0));
    EXPECT_NEAR(*s.trace_energy_j, 200.0, 1e-9);
    EXPECT_DOUBLE_EQ(*s.peak_power_w, 100.0);
}

TEST(Energy, SparseSamplingMissesAShortSpikeAndTheDisagreementShowsIt) {
    // The counter saw a 1 s, +600 W spike between two samples 2 s apart.
    EnergySummary s = summarize_window({}, at(0, 100.0, 0.0), at(2, 100.0, 800.0));
    EXPECT_NEAR(*s.trace_energy_j, 200.0, 1e-9);
    EXPECT_NEAR(*s.disagreement_pct, -75.0, 1e-9);
}

TEST(Energy, FallsBackToTheAverageFieldAndSaysSo) {
    Sample start = at(0, std::nullopt, 0.0);
    start.power_average_w = 200.0;
    Sample end = at(1, std::nullopt, 200.0);
    end.power_average_w = 200.0;
    EnergySummary s = summarize_window({}, start, end);
    EXPECT_TRUE(s.trace_is_one_second_average);
    EXPECT_NEAR(*s.trace_energy_j, 200.0, 1e-9);
    EXPECT_FALSE(s.warnings.empty());
}

TEST(Energy, MissingOrResetCounterLeavesItEmpty) {
    EnergySummary no_counter = summarize_window({}, at(0, 100.0), at(1, 100.0));
    EXPECT_FALSE(no_counter.counter_energy_j);
    EXPECT_FALSE(no_counter.disagreement_pct);
    EXPECT_NEAR(*no_counter.average_power_w, 100.0, 1e-9);  // from the trace

    EnergySummary reset = summarize_window({}, at(0, 100.0, 5000.0), at(1, 100.0, 10.0));
    EXPECT_FALSE(reset.counter_energy_j);
    EXPECT_NE(reset.warnings.front().find("backwards"), std::string::npos);
}

TEST(Energy, EmptyWindowMeasuresNothing) {
    EnergySummary s = summarize_window({}, at(1, 100.0, 0), at(1, 100.0, 0));
    EXPECT_FALSE(s.counter_energy_j);
    EXPECT_FALSE(s.trace_energy_j);
    EXPECT_FALSE(s.warnings.empty());
}
