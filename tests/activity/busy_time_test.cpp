// Tests of the union of kernel intervals: concurrent kernels count once, batches arrive out of
// order, nothing counts twice across flushes.
#include "activity/busy_time.h"

#include <gtest/gtest.h>

using migscope::activity::BusyTime;

TEST(BusyTime, OverlappingKernelsCountOnce) {
    BusyTime b;
    b.add(100, 200);
    b.add(150, 300);  // another stream, at the same time
    b.add(400, 450);
    b.add(410, 420);  // inside the one before
    b.flush();
    EXPECT_EQ(b.busy_ns(), 200u + 50u);
    EXPECT_EQ(b.kernels(), 4u);
}

TEST(BusyTime, ABatchOutOfOrderIsSortedAndNothingIsCountedBeforeFlush) {
    BusyTime b;
    b.add(500, 600);
    b.add(100, 200);
    b.add(50, 40);  // an end before its start is ignored
    EXPECT_EQ(b.busy_ns(), 0u);
    b.flush();
    EXPECT_EQ(b.busy_ns(), 200u);
    EXPECT_EQ(b.kernels(), 2u);
}

TEST(BusyTime, ALateRecordIsClippedAtWhatWasAlreadyCounted) {
    BusyTime b;
    b.add(100, 300);
    b.flush();
    b.add(250, 400);  // overlaps the last batch: only 300-400 is new
    b.add(50, 80);    // wholly before: counted short (0), never twice
    b.flush();
    EXPECT_EQ(b.busy_ns(), 200u + 100u);
    EXPECT_EQ(b.kernels(), 3u);
}
