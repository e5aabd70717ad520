// Tests of what the SM probe concludes from the SM ids each partition's blocks ran on (no GPU).
#include "workloads/device/sm_probe.h"

#include <gtest/gtest.h>

#include <numeric>

#include "core/error.h"

using namespace migscope;
using namespace migscope::workloads;

namespace {
std::vector<int> ids_from(int first, int count) {
    std::vector<int> ids(static_cast<size_t>(count));
    std::iota(ids.begin(), ids.end(), first);
    return ids;
}
}  // namespace

TEST(SmProbe, DisjointPartitionsWithinTheirGrantsAreContained) {
    const SmProbeSummary s =
        summarize_sm_probe({ids_from(0, 64), ids_from(64, 32), ids_from(96, 16)}, {64, 32, 16});
    EXPECT_TRUE(s.contained);
    ASSERT_EQ(s.partitions.size(), 3u);
    EXPECT_EQ(s.partitions[1].seen_sms, 32);
    EXPECT_EQ(s.partitions[1].shared_sms, 0);
}

TEST(SmProbe, APartitionOnMoreSmsThanGrantedEscaped) {
    const SmProbeSummary s = summarize_sm_probe({ids_from(0, 17), ids_from(20, 16)}, {16, 16});
    EXPECT_FALSE(s.contained);
    EXPECT_EQ(s.partitions[0].seen_sms, 17);
}

TEST(SmProbe, PartitionsSharingAnSmAreNotContained) {
    const SmProbeSummary s = summarize_sm_probe({ids_from(0, 16), ids_from(15, 16)}, {16, 16});
    EXPECT_FALSE(s.contained);
    EXPECT_EQ(s.partitions[0].shared_sms, 1);
    EXPECT_EQ(s.partitions[1].shared_sms, 1);
}

TEST(SmProbe, ABlockThatNeverReportedFailsTheProbe) {
    std::vector<int> ids = ids_from(0, 8);
    ids.push_back(-1);
    EXPECT_FALSE(summarize_sm_probe({ids}, {16}).contained);
}

TEST(SmProbe, ResultsMustMatchThePartitions) {
    EXPECT_THROW(summarize_sm_probe({ids_from(0, 4)}, {16, 16}), Error);
}
