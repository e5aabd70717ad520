// Profiling's cells: which sizes, in which order, and the run cell each one is.
#include "runner/profile_runs.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "partition/job.h"

namespace migscope::runner {
namespace {

ProfileRequest two_jobs() {
    ProfileRequest r;
    r.jobs = partition::parse_job_list("resnet18:32,bert-base:finetune:4");
    r.repetitions = 2;
    r.run_dir = "runs/profile";
    return r;
}

TEST(ProfileRuns, DefaultSizesAreEveryProfileBelowTheGpuWithoutMediaExtensions) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    const std::vector<std::string> sizes = profile_sizes(two_jobs(), h200);
    ASSERT_FALSE(sizes.empty());
    for (const std::string& s : sizes) {
        const mig::Profile& p = h200.require(s);
        EXPECT_FALSE(p.media_extensions) << s;
        EXPECT_LT(p.compute_slices, h200.compute_slices) << s;
    }
    ProfileRequest given = two_jobs();
    given.sizes = {" 1g.18gb", "3g.71gb"};
    EXPECT_EQ(profile_sizes(given, h200), (std::vector<std::string>{"1g.18gb", "3g.71gb"}));
    given.sizes = {"5g.1gb"};
    EXPECT_THROW(profile_sizes(given, h200), Error);
}

TEST(ProfileRuns, EachJobOnTheWholeGpuThenItsSizesForEveryRepetition) {
    const std::vector<ProfileCell> cells = profile_cells(two_jobs(), {"1g.18gb", "3g.71gb"});
    ASSERT_EQ(cells.size(), 12u);
    EXPECT_EQ(cells[0].job, 0u);
    EXPECT_EQ(cells[0].where(), "whole GPU");
    EXPECT_EQ(cells[1].size, "1g.18gb");
    EXPECT_EQ(cells[3].job, 1u);
    EXPECT_EQ(cells[3].size, "");
    EXPECT_EQ(cells[6].repetition, 2u);
}

TEST(ProfileRuns, AWholeGpuCellIsSequentialAndASizeIsOneGreenPartition) {
    const ProfileRequest r = two_jobs();
    const CellRequest whole = profile_cell_request(r, {0, "", 1});
    EXPECT_EQ(whole.backend, partition::BackendKind::kSequential);
    EXPECT_EQ(whole.layout, "");
    ASSERT_EQ(whole.jobs.size(), 1u);
    EXPECT_EQ(whole.jobs[0].workload, "resnet18");
    EXPECT_DOUBLE_EQ(whole.duration_s, r.duration_s);
    EXPECT_EQ(whole.label, "profile");
    EXPECT_EQ(whole.run_dir, "runs/profile/resnet18-whole-1");
    const CellRequest small = profile_cell_request(r, {1, "1g.18gb", 2});
    EXPECT_EQ(small.backend, partition::BackendKind::kGreen);
    EXPECT_EQ(small.layout, "1g.18gb");
    EXPECT_EQ(small.jobs[0].mode, "finetune");
    EXPECT_EQ(small.run_dir, "runs/profile/" + small.jobs[0].name + "-1g.18gb-2");
}

}  // namespace
}  // namespace migscope::runner
