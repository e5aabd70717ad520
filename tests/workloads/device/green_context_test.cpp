// Tests of the SM arithmetic behind green-context partitions (no GPU needed).
#include "workloads/device/green_context.h"

#include <gtest/gtest.h>

#include "core/error.h"

using namespace migscope;
using namespace migscope::workloads;

namespace {
constexpr SmGranularity kHopper{8, 8};
}

TEST(GreenContext, RequestsRoundUpToTheGranularity) {
    EXPECT_EQ(rounded_sm_count(16, kHopper), 16);
    EXPECT_EQ(rounded_sm_count(60, kHopper), 64);  // a 3g profile's 60 SMs: not exact on Hopper
    EXPECT_EQ(rounded_sm_count(26, kHopper), 32);
    EXPECT_EQ(rounded_sm_count(1, kHopper), 8);
    EXPECT_EQ(rounded_sm_count(6, SmGranularity{4, 2}), 6);
    EXPECT_EQ(rounded_sm_count(2, SmGranularity{4, 2}), 4);  // the minimum
}

TEST(GreenContext, ChainedRequestsGetDisjointRoundedGroups) {
    EXPECT_EQ(planned_sm_counts({60, 32, 16, 16}, 132, kHopper),
              (std::vector<int>{64, 32, 16, 16}));
    EXPECT_EQ(planned_sm_counts(std::vector<int>(7, 16), 132, kHopper), std::vector<int>(7, 16));
    EXPECT_EQ(planned_sm_counts(std::vector<int>(8, 16), 132, kHopper), std::vector<int>(8, 16));
}

TEST(GreenContext, TheWholeDeviceIsOneGroupEvenWhenItIsNotAMultiple) {
    EXPECT_EQ(planned_sm_counts({132}, 132, kHopper), std::vector<int>{132});
    EXPECT_EQ(planned_sm_counts({130}, 132, kHopper), std::vector<int>{132});
    EXPECT_EQ(planned_sm_counts({64, 68}, 132, kHopper), (std::vector<int>{64, 68}));
}

TEST(GreenContext, RequestsThatDoNotFitNameThemAndTheDevice) {
    try {
        planned_sm_counts({64, 64, 8}, 132, kHopper);
        FAIL() << "expected an input error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        const std::string m = e.what();
        EXPECT_NE(m.find("64, 64, 8"), std::string::npos) << m;
        EXPECT_NE(m.find("132 SMs"), std::string::npos) << m;
    }
    // 9 x 16 = 144 > 132; and 60 rounds to 64, so 60 + 60 + 16 needs 144.
    EXPECT_THROW(planned_sm_counts(std::vector<int>(9, 16), 132, kHopper), Error);
    EXPECT_THROW(planned_sm_counts({60, 60, 16}, 132, kHopper), Error);
    EXPECT_THROW(planned_sm_counts({133}, 132, kHopper), Error);
    EXPECT_THROW(planned_sm_counts({0}, 132, kHopper), Error);
    EXPECT_THROW(planned_sm_counts({}, 132, kHopper), Error);
}

TEST(GreenContext, JoinsCounts) {
    EXPECT_EQ(join_sm_counts({60, 32, 16}), "60, 32, 16");
}
