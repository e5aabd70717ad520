// Tests of the one placement of jobs on a layout's partitions: in job order, with assign's
// queues, and errors that start with the request's field.
#include "partition/partitions.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::partition {
namespace {

Layout layout(const std::string& text) {
    return Layout::parse(text, mig::builtin_model("h200"));
}

std::string error_of(const std::string& text, size_t jobs, const std::vector<size_t>& assign) {
    try {
        place_jobs(layout(text), jobs, assign);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "accepted";
}

TEST(PlaceJobs, WithoutAssignJobIGoesOnPartitionI) {
    const std::vector<JobPlace> places = place_jobs(layout("3g+2g+1g"), 3, {});
    ASSERT_EQ(places.size(), 3u);
    for (size_t j = 0; j < 3; ++j) {
        EXPECT_EQ(places[j].term, j);
        EXPECT_FALSE(places[j].after_job);
    }
}

TEST(PlaceJobs, JobsSharingAPartitionQueueInJobOrder) {
    const std::vector<JobPlace> places = place_jobs(layout("4g+1g"), 4, {1, 0, 1, 1});
    ASSERT_EQ(places.size(), 4u);
    EXPECT_EQ(places[0].term, 1u);
    EXPECT_FALSE(places[0].after_job);
    EXPECT_EQ(places[1].term, 0u);
    EXPECT_FALSE(places[1].after_job);
    EXPECT_EQ(places[2].after_job, 0u);
    EXPECT_EQ(places[3].after_job, 2u);
}

TEST(PlaceJobs, ErrorsStartWithTheRequestField) {
    EXPECT_EQ(error_of("3g+1g", 1, {}),
              "layout: 2 partitions for 1 jobs: give one partition per job (or assign jobs to "
              "partitions)");
    EXPECT_EQ(error_of("3g+1g", 3, {0, 1}),
              "assign: 2 entries for 3 jobs: give one partition per job");
    EXPECT_EQ(error_of("3g+1g", 3, {0, 1, 2}),
              "assign[2]: job 2 is on partition 2, but the layout's partitions are 0 to 1");
    EXPECT_EQ(error_of("3g+1g", 2, {1, 1}),
              "assign: partition 0 (3g.71gb) has no job: leave it out of the layout");
}

TEST(LayoutPartitions, EachJobGetsItsPartitionsProfileAndQueue) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    const std::vector<Partition> parts =
        layout_partitions(layout("2g+1g"), h200, 3, "GPU-x", {0, 1, 0});
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[0].label, "2g.35gb");
    EXPECT_EQ(parts[0].sms, h200.require("2g.35gb").sms);
    EXPECT_EQ(parts[1].label, "1g.18gb");
    EXPECT_EQ(parts[2].label, "2g.35gb");
    EXPECT_EQ(parts[2].after_job, 0u);
    EXPECT_EQ(parts[2].device, "GPU-x");
    // A layout that does not fit is refused with the reason, after the placement.
    EXPECT_THROW(layout_partitions(layout("4g+4g"), h200, 2, ""), Error);
}

}  // namespace
}  // namespace migscope::partition
