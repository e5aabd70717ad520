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

// Built-in runs take their window plus a start until runs have measured it; a command's run
// is unknown until its first, then as long as its longest.
TEST(ProfileRuns, TimeLeftLearnsFromTheRunsMade) {
    ProfileRequest r = two_jobs();
    r.duration_s = 10;
    partition::JobSpec mine;
    mine.name = "mine";
    mine.command = {"python3", "train.py"};
    r.jobs.push_back(mine);
    const std::vector<ProfileCell> cells = profile_cells(r, {"1g.18gb"});  // 3 jobs × 2 × 2
    ASSERT_EQ(cells.size(), 12u);
    Measurement m;
    m.idle_probe_s = 2;
    ProfilePace pace;
    ProfileTimeLeft left = profile_time_left(r, cells, 0, pace, m);
    EXPECT_EQ(left.runs, 12u);
    EXPECT_EQ(left.unknown_command_runs, 4u);
    EXPECT_DOUBLE_EQ(left.seconds, 8 * (10 + kProfileRunStartS + 4));
    pace.record(r, cells[0], 25);  // a built-in run: 15 s beyond its window
    pace.record(r, cells[1], 21);  // 11 s: 13 on average
    pace.record(r, {2, "", 1}, 40);
    pace.record(r, {2, "1g.18gb", 1}, 55);
    left = profile_time_left(r, cells, 6, pace, m);  // the second repetition
    EXPECT_EQ(left.runs, 6u);
    EXPECT_EQ(left.unknown_command_runs, 0u);
    EXPECT_DOUBLE_EQ(left.seconds, 4 * (10 + 13) + 2 * 55);
}

TEST(ProfileRuns, AWholeGpuCellIsSequentialAndASizeIsOneGreenPartition) {
    const ProfileRequest r = two_jobs();
    const CellRequest whole = profile_cell_request(r, {0, "", 1}, mig::builtin_model("h200"));
    EXPECT_EQ(whole.backend, partition::BackendKind::kSequential);
    EXPECT_EQ(whole.layout.text(), "");
    ASSERT_EQ(whole.jobs.size(), 1u);
    EXPECT_EQ(whole.jobs[0].workload, "resnet18");
    EXPECT_DOUBLE_EQ(whole.duration_s, r.duration_s);
    EXPECT_EQ(whole.label, "profile");
    EXPECT_EQ(whole.run_dir, "runs/profile/resnet18-whole-1");
    const CellRequest small =
        profile_cell_request(r, {1, "1g.18gb", 2}, mig::builtin_model("h200"));
    EXPECT_EQ(small.backend, partition::BackendKind::kGreen);
    EXPECT_EQ(small.layout.text(), "1g.18gb");
    EXPECT_EQ(small.jobs[0].mode, "finetune");
    EXPECT_EQ(small.run_dir, "runs/profile/" + small.jobs[0].name + "-1g.18gb-2");
}

}  // namespace
}  // namespace migscope::runner
