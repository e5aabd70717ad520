// Tests of a sampling probe's trace windows: kernels clipped to them, their total length, and
// windows out of order or too old.
#include "activity/trace_windows.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

using migscope::activity::TraceWindows;
using Parts = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(TraceWindows, KernelsAreClippedToTheWindowsTheyOverlap) {
    TraceWindows w;
    w.add(100, 200);
    w.add(500, 600);
    EXPECT_EQ(w.traced_ns(), 200u);
    EXPECT_EQ(w.clip(120, 150), (Parts{{120, 150}}));  // inside
    EXPECT_EQ(w.clip(180, 250), (Parts{{180, 200}}));  // ran on after the records went off
    EXPECT_EQ(w.clip(250, 400), Parts{});              // between windows: not counted
    EXPECT_EQ(w.clip(150, 550), (Parts{{150, 200}, {500, 550}}));
}

TEST(TraceWindows, AWindowBackwardsOrOverlappingTheLastIsIgnored) {
    TraceWindows w;
    w.add(100, 200);
    w.add(300, 250);  // ends before it starts
    w.add(150, 400);  // starts inside the last
    EXPECT_EQ(w.traced_ns(), 100u);
    EXPECT_EQ(w.clip(0, 1000), (Parts{{100, 200}}));
}

TEST(TraceWindows, OnlyTheLatestWindowsClipButAllAreCounted) {
    TraceWindows w;
    for (uint64_t i = 0; i < TraceWindows::kKeptWindows + 2; ++i)
        w.add(i * 1000, i * 1000 + 100);
    EXPECT_EQ(w.traced_ns(), (TraceWindows::kKeptWindows + 2) * 100);
    EXPECT_EQ(w.clip(0, 100), Parts{});  // the first window is no longer kept
    const uint64_t last = (TraceWindows::kKeptWindows + 1) * 1000;
    EXPECT_EQ(w.clip(last, last + 50), (Parts{{last, last + 50}}));
}
