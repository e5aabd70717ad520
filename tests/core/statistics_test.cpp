// Percentiles.
#include "core/statistics.h"

#include <gtest/gtest.h>

namespace migscope {
namespace {

TEST(Percentile, InterpolatesBetweenSortedValues) {
    EXPECT_FALSE(percentile({}, 0.5));
    EXPECT_DOUBLE_EQ(*percentile({3, 1, 2}, 0.5), 2.0);
    EXPECT_DOUBLE_EQ(*percentile({1, 2, 3, 4}, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(*percentile({1, 2, 3, 4, 5}, 0.95), 4.8);
    EXPECT_DOUBLE_EQ(*percentile({7}, 0.95), 7.0);
}

}  // namespace
}  // namespace migscope
