// Tests of a process's activity from the probe's cumulative kernel time: deltas over the sending
// clock, the first report from the probe's start, the MPS share, staleness and restarts.
#include "exporter/kernel_time.h"

#include <gtest/gtest.h>

using namespace migscope;
using namespace migscope::exporter;

namespace {

constexpr uint64_t kS = 1'000'000'000;

activity::ActivityReport report(uint64_t busy_ns, uint64_t sent_ns, uint64_t started_ns = 0) {
    activity::ActivityReport r;
    r.gpu_uuid = "GPU-1";
    r.busy_ns = busy_ns;
    r.started_ns = started_ns;
    r.sent_ns = sent_ns;
    return r;
}

}  // namespace

TEST(KernelTimeRatios, DeltasOverTheSendingClock) {
    KernelTimeRatios k;
    // First report: 0.5 s busy in the 2 s since the probe started at 10 s.
    EXPECT_DOUBLE_EQ(k.ratio(7, report(kS / 2, 12 * kS, 10 * kS), 12 * kS).value(), 0.25);
    // The same report again (no new one this interval): the same ratio.
    EXPECT_DOUBLE_EQ(k.ratio(7, report(kS / 2, 12 * kS, 10 * kS), 12 * kS + kS / 2).value(), 0.25);
    // 0.9 s more busy in the next second.
    EXPECT_DOUBLE_EQ(k.ratio(7, report(kS * 14 / 10, 13 * kS, 10 * kS), 13 * kS).value(), 0.9);
}

TEST(KernelTimeRatios, AnMpsShareScalesTheRatioAndItNeverExceedsOne) {
    KernelTimeRatios k;
    activity::ActivityReport r = report(2 * kS, kS);  // more busy than elapsed: clamped
    EXPECT_DOUBLE_EQ(k.ratio(1, r, kS).value(), 1.0);
    r = report(3 * kS, 2 * kS);
    r.sm_share = 0.25;
    EXPECT_DOUBLE_EQ(k.ratio(1, r, 2 * kS).value(), 0.25);
}

TEST(KernelTimeRatios, AStaleReportGivesNothing) {
    KernelTimeRatios k;
    EXPECT_TRUE(k.ratio(1, report(kS / 2, kS), kS));
    EXPECT_FALSE(k.ratio(1, report(kS / 2, kS), kS + KernelTimeRatios::kStaleAfterNs + 1));
}

TEST(KernelTimeRatios, ARestartedProbeStartsAfreshAndForgottenPidsStartOver) {
    KernelTimeRatios k;
    EXPECT_DOUBLE_EQ(k.ratio(1, report(8 * kS / 10, kS), kS).value(), 0.8);
    // A new probe under the same pid (started at 5 s): counted from its own start.
    EXPECT_DOUBLE_EQ(k.ratio(1, report(kS / 10, 6 * kS, 5 * kS), 6 * kS).value(), 0.1);
    k.forget_except({});
    // Forgotten: the next report of pid 1 counts from its probe's start again.
    EXPECT_DOUBLE_EQ(k.ratio(1, report(kS, 7 * kS, 5 * kS), 7 * kS).value(), 0.5);
}

TEST(KernelTimeRatios, ASamplingProbesBusyTimeIsOverTheTimeItsRecordsWereOn) {
    KernelTimeRatios k;
    activity::ActivityReport r = report(kS / 20, kS);  // 50 ms busy in 100 ms of records on
    r.traced_ns = kS / 10;
    EXPECT_DOUBLE_EQ(k.ratio(3, r, kS).value(), 0.5);
    r = report(kS / 20 + kS / 40, 2 * kS);  // 25 ms more in the next 100 ms on
    r.traced_ns = 2 * kS / 10;
    EXPECT_DOUBLE_EQ(k.ratio(3, r, 2 * kS).value(), 0.25);
    r.sent_ns = 3 * kS;  // a report with no records on since: the last ratio
    EXPECT_DOUBLE_EQ(k.ratio(3, r, 3 * kS).value(), 0.25);
    r = report(kS / 20 + kS / 40 + kS / 10, 4 * kS);  // then 100 ms busy in 100 ms on
    r.traced_ns = 3 * kS / 10;
    EXPECT_DOUBLE_EQ(k.ratio(3, r, 4 * kS).value(), 1.0);
}
