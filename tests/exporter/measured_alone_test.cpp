// Tests of each process's power alone measured live (exporter/measured_alone.h).
#include "exporter/measured_alone.h"

#include <gtest/gtest.h>

using namespace migscope::exporter;

namespace {

ConsumerActivity process(unsigned pid, double activity) {
    ConsumerActivity c;
    c.consumer = {ConsumerKind::kProcess, "pid:" + std::to_string(pid), {}};
    c.activity_ratio = activity;
    return c;
}

// One second of a shared GPU with 140 W idle drawing `board_w`, these processes listed.
IntervalInput second(double board_w, std::vector<ConsumerActivity> consumers) {
    IntervalInput in;
    in.energy_j = board_w;
    in.duration_s = 1;
    in.idle_power_w = 140;
    in.consumers = std::move(consumers);
    return in;
}

}  // namespace

// mps-pc of 2026-12-05 (H100, repetition 2): resnet18:32 alone on its MPS share drew 386 W with
// 151 W idle where its profile said 302 W with 144 W idle. Measured alone, its power alone is
// the board's dynamic power in the seconds it ran alone: their median, once there are two.
TEST(MeasuredPowersAlone, AProcessAloneIsChargedTheBoardsDynamicPowerTheirMedian) {
    MeasuredPowersAlone alone;
    alone.observe(second(386, {process(1, 0.97), process(2, 0)}));
    EXPECT_FALSE(alone.dynamic_w("pid:1")) << "one second is not yet a measurement";
    alone.observe(second(380, {process(1, 0.95), process(2, 0)}));
    EXPECT_DOUBLE_EQ(*alone.dynamic_w("pid:1"), (246 + 240) / 2.0);
    alone.observe(second(400, {process(1, 0.99), process(2, 0)}));
    EXPECT_DOUBLE_EQ(*alone.dynamic_w("pid:1"), 246);
    EXPECT_FALSE(alone.dynamic_w("pid:2")) << "never alone";
}

// Only intervals that are what `run`'s probe measures: exactly one process busy, stepping, with
// the static power known, on a GPU whose processes share it.
TEST(MeasuredPowersAlone, OnlyABusyProcessAloneOnASharedGpuWithAKnownIdlePowerCounts) {
    MeasuredPowersAlone alone;
    for (int i = 0; i < 3; ++i) {
        alone.observe(second(600, {process(1, 0.9), process(2, 0.01)}));  // both active
        alone.observe(second(300, {process(1, 0.3), process(2, 0)}));     // alone, starting up
        IntervalInput unknown_idle = second(400, {process(1, 0.9)});
        unknown_idle.idle_power_w.reset();
        alone.observe(unknown_idle);
        IntervalInput mig = second(400, {process(1, 0.9)});
        mig.sharing = Sharing::kMig;
        alone.observe(mig);
        alone.observe(second(100, {process(1, 0.9)}));  // below idle: no dynamic power to learn
    }
    EXPECT_FALSE(alone.dynamic_w("pid:1"));
    alone.observe(second(400, {process(1, MeasuredPowersAlone::kMinActivity)}));
    alone.observe(second(400, {process(1, 1.0)}));
    EXPECT_DOUBLE_EQ(*alone.dynamic_w("pid:1"), 260);
}

// An MPS client's activity is its kernel time × its SM share (0.45 for a 3g share of an H100): a
// client busy in 97 % of the interval is busy, though its activity is 0.44.
TEST(MeasuredPowersAlone, AnMpsClientIsBusyByItsKernelTimeNotItsShareOfTheGpu) {
    MeasuredPowersAlone alone;
    ConsumerActivity client = process(1, 0.97 * 0.45);
    client.sm_share = 0.45;
    for (int i = 0; i < 2; ++i)
        alone.observe(second(365, {client, process(2, 0)}));
    EXPECT_DOUBLE_EQ(*alone.dynamic_w("pid:1"), 225);
    ConsumerActivity idling = process(3, 0.4 * 0.45);
    idling.sm_share = 0.45;
    for (int i = 0; i < 2; ++i)
        alone.observe(second(200, {idling}));
    EXPECT_FALSE(alone.dynamic_w("pid:3"));
}

// The newest kKept intervals answer, so a process whose power changes is followed; a process the
// GPU no longer lists is forgotten (a new process with its pid starts afresh).
TEST(MeasuredPowersAlone, KeepsTheNewestIntervalsAndForgetsProcessesThatEnded) {
    MeasuredPowersAlone alone;
    for (size_t i = 0; i < MeasuredPowersAlone::kKept; ++i)
        alone.observe(second(300, {process(1, 0.9)}));
    EXPECT_DOUBLE_EQ(*alone.dynamic_w("pid:1"), 160);
    for (size_t i = 0; i < MeasuredPowersAlone::kKept / 2 + 1; ++i)
        alone.observe(second(500, {process(1, 0.9)}));
    EXPECT_DOUBLE_EQ(*alone.dynamic_w("pid:1"), 360) << "the newest are the majority";
    alone.observe(second(200, {process(2, 0.9)}));
    EXPECT_FALSE(alone.dynamic_w("pid:1"));
}

// Every active process's power alone measured: the split says `measured_power`; one from a profile
// makes it `profile_power`. The energy is split alike either way.
TEST(MeasuredPowersAlone, TheSplitSaysWhetherEveryPowerAloneWasMeasured) {
    IntervalInput in = second(631, {process(1, 0.95), process(2, 0.66)});
    in.consumers[0].alone_dynamic_w = 697 - 130;
    in.consumers[1].alone_dynamic_w = 413 - 130;
    in.consumers[0].alone_measured = in.consumers[1].alone_measured = true;
    const IntervalSplit measured = split_interval(in);
    EXPECT_EQ(measured.dynamic_split, DynamicSplit::kMeasuredPower);
    EXPECT_STREQ(dynamic_split_label(DynamicSplit::kMeasuredPower), "measured_power");
    in.consumers[1].alone_measured = false;
    const IntervalSplit mixed = split_interval(in);
    EXPECT_EQ(mixed.dynamic_split, DynamicSplit::kProfilePower);
    for (size_t i = 0; i < measured.energy_j.size(); ++i)
        EXPECT_DOUBLE_EQ(measured.energy_j[i].second, mixed.energy_j[i].second);
}
