// Tests of the idle baseline: samples split by clock state, settle time, spread, the state used.
#include "telemetry/idle_baseline.h"

#include <gtest/gtest.h>

using namespace migscope;
using namespace migscope::telemetry;

namespace {
const SteadyTime kT0 = SteadyTime{} + std::chrono::hours(1);

SteadyTime at_s(double t_s) {
    return kT0 +
           std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(t_s));
}

Sample sample(double t_s, double watts, std::optional<unsigned> clock_mhz) {
    Sample s;
    s.time = at_s(t_s);
    s.power_instant_w = watts;
    s.sm_clock_mhz = clock_mhz;
    return s;
}

// The H200 after work: 1,980 MHz and ~130 W for a while, then 345 MHz and ~80 W; work between.
std::vector<Sample> h200_like_trace() {
    std::vector<Sample> t;
    t.push_back(sample(0.0, 300, 1980));  // the tail of earlier work, inside the settle time
    t.push_back(sample(0.5, 128, 1980));
    t.push_back(sample(1.0, 132, 1980));
    t.push_back(sample(1.5, 80, 345));
    t.push_back(sample(2.0, 78, 345));
    t.push_back(sample(3.0, 650, 1755));  // work: outside every idle interval
    t.push_back(sample(5.5, 130, 1980));
    return t;
}
}  // namespace

TEST(IdleBaseline, SplitsSamplesByClockStateAfterTheSettleTime) {
    const auto trace = h200_like_trace();
    const IdleBaseline b =
        idle_baseline(trace, {{at_s(0), at_s(2)}, {at_s(5), at_s(6)}}, 0.25, 990);
    ASSERT_TRUE(b.clocks_up);
    EXPECT_EQ(b.clocks_up->samples, 3u);  // 128, 132, 130: not the 300 W settling nor the work
    EXPECT_DOUBLE_EQ(b.clocks_up->mean_w, 130.0);
    EXPECT_DOUBLE_EQ(b.clocks_up->min_w, 128.0);
    EXPECT_DOUBLE_EQ(b.clocks_up->max_w, 132.0);
    ASSERT_TRUE(b.deep);
    EXPECT_EQ(b.deep->samples, 2u);
    EXPECT_DOUBLE_EQ(b.deep->mean_w, 79.0);
    EXPECT_FALSE(b.no_clock);
    const auto used = b.static_power();
    ASSERT_TRUE(used);
    EXPECT_EQ(used->first, IdleState::kClocksUp);
    EXPECT_EQ(b.describe(),
              "idle with clocks up 130 W (128–132 W, 3 samples); deep idle 79 W (78–80 W, 2 "
              "samples)");
}

TEST(IdleBaseline, DeepIdleIsUsedOnlyWhenNothingElseWasSeen) {
    const auto trace = h200_like_trace();
    const IdleBaseline b = idle_baseline(trace, {{at_s(1.4), at_s(2.1)}}, 0, 990);
    EXPECT_FALSE(b.clocks_up);
    ASSERT_TRUE(b.static_power());
    EXPECT_EQ(b.static_power()->first, IdleState::kDeep);
    EXPECT_DOUBLE_EQ(b.static_power()->second.mean_w, 79.0);
}

TEST(IdleBaseline, SamplesWithoutAClockAreIdleWithoutAState) {
    const std::vector<Sample> trace = {sample(0.5, 40, std::nullopt), sample(1.0, 44, std::nullopt)};
    const IdleBaseline b = idle_baseline(trace, {{at_s(0), at_s(2)}}, 0, 0);
    ASSERT_TRUE(b.no_clock);
    EXPECT_EQ(b.static_power()->first, IdleState::kNoClock);
    EXPECT_DOUBLE_EQ(b.static_power()->second.mean_w, 42.0);
    EXPECT_FALSE(idle_baseline(trace, {}, 0, 0).static_power());  // no idle interval: nothing
}

TEST(IdleBaseline, TheClockThresholdIsHalfTheHighestClockSeen) {
    EXPECT_DOUBLE_EQ(*clocks_up_threshold_mhz(h200_like_trace()), 990.0);
    EXPECT_FALSE(clocks_up_threshold_mhz({sample(0, 40, std::nullopt)}));
}

TEST(IdleBaseline, StateKeysAreStoredAndReadBack) {
    for (IdleState s : {IdleState::kClocksUp, IdleState::kDeep, IdleState::kNoClock})
        EXPECT_EQ(parse_idle_state(state_key(s)), s);
    EXPECT_EQ(state_key(IdleState::kClocksUp), "clocks-up");
    EXPECT_FALSE(parse_idle_state("idle with clocks up"));  // words are not keys
    EXPECT_EQ(state_text("deep"), "deep idle");
    EXPECT_EQ(state_text(""), "idle state not recorded");
}

// The live learner (the exporter's): the same states, threshold and summary as idle_baseline(),
// in bounded memory.
TEST(LiveIdleBaseline, ClassifiesIdleIntervalsByTheHighestClockSeen) {
    LiveIdleBaseline live(30);
    EXPECT_FALSE(live.baseline().static_power());
    live.observe_clock(1980);  // a busy interval: sets the threshold, teaches no power
    live.add_idle(80, 345);
    live.add_idle(78, 345);
    IdleBaseline b = live.baseline();
    EXPECT_DOUBLE_EQ(b.clock_threshold_mhz, 990);
    ASSERT_TRUE(b.static_power());
    EXPECT_EQ(b.static_power()->first, IdleState::kDeep);
    EXPECT_DOUBLE_EQ(b.static_power()->second.mean_w, 79);
    live.add_idle(128, 1980);
    live.add_idle(132, 1980);
    b = live.baseline();
    // Clocks up is what `run` splits as static power, once seen.
    EXPECT_EQ(b.static_power()->first, IdleState::kClocksUp);
    EXPECT_DOUBLE_EQ(b.static_power()->second.mean_w, 130);
    EXPECT_EQ(b.clocks_up->samples, 2u);
    EXPECT_EQ(b.deep->samples, 2u);
}

TEST(LiveIdleBaseline, AgreesWithIdleBaselineOnTheSameReadings) {
    // The trace's idle samples fed one by one give the same summary.
    const auto trace = h200_like_trace();
    const IdleBaseline offline =
        idle_baseline(trace, {{at_s(0), at_s(2)}, {at_s(5), at_s(6)}}, 0.25, 990);
    LiveIdleBaseline live(30);
    for (const Sample& s : trace)
        live.observe_clock(s.sm_clock_mhz);
    for (double t : {0.5, 1.0, 1.5, 2.0, 5.5}) {
        for (const Sample& s : trace) {
            if (s.time == at_s(t))
                live.add_idle(*s.power_instant_w, s.sm_clock_mhz);
        }
    }
    EXPECT_EQ(live.baseline().describe(), offline.describe());
}

TEST(LiveIdleBaseline, KeepsTheLastWindowOfEachState) {
    LiveIdleBaseline live(3);
    live.add_idle(200, 1980);
    for (double w : {100.0, 110.0, 120.0, 130.0})
        live.add_idle(w, 1980);
    for (int i = 0; i < 10; ++i)
        live.add_idle(50, 300);  // many deep intervals do not push clocks-up ones out
    const IdleBaseline b = live.baseline();
    EXPECT_EQ(b.clocks_up->samples, 3u);
    EXPECT_DOUBLE_EQ(b.clocks_up->mean_w, 120);  // 200 and 100 left the window
    EXPECT_EQ(b.deep->samples, 3u);
    // Started in deep idle: 345 MHz looked like clocks up until work showed the boost clock.
    LiveIdleBaseline started_idle(30);
    started_idle.add_idle(80, 345);
    EXPECT_EQ(started_idle.baseline().static_power()->first, IdleState::kClocksUp);
    started_idle.observe_clock(1980);
    EXPECT_EQ(started_idle.baseline().static_power()->first, IdleState::kDeep);
    EXPECT_EQ(started_idle.baseline().deep->samples, 1u);
    LiveIdleBaseline no_clock(2);
    no_clock.add_idle(40, std::nullopt);
    EXPECT_EQ(no_clock.baseline().static_power()->first, IdleState::kNoClock);
}
