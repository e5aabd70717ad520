// Slurm job ids out of /proc/PID/cgroup texts, as Slurm's cgroup plugins lay them out.
#include "exporter/slurm.h"

#include <gtest/gtest.h>

namespace migscope::exporter {
namespace {

TEST(SlurmCgroup, CgroupV2) {
    EXPECT_EQ(parse_slurm_job_cgroup("0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0\n"),
              "123");
    EXPECT_EQ(parse_slurm_job_cgroup("0::/system.slice/slurmstepd.scope/job_77/step_batch/user/"
                                     "task_0\n"),
              "77");
    // Several slurmd on one host: NODE_slurmstepd.scope.
    EXPECT_EQ(parse_slurm_job_cgroup("0::/system.slice/n1_slurmstepd.scope/job_9/step_extern/user\n"),
              "9");
}

TEST(SlurmCgroup, CgroupV1) {
    const char* text =
        "12:pids:/user.slice\n"
        "11:memory:/slurm/uid_1000/job_4567/step_0/task_1\n"
        "4:devices:/slurm/uid_1000/job_4567/step_0\n";
    EXPECT_EQ(parse_slurm_job_cgroup(text), "4567");
    EXPECT_EQ(parse_slurm_job_cgroup("5:freezer:/slurm_node7/uid_0/job_31/step_batch\n"), "31");
}

TEST(SlurmCgroup, NotInAJob) {
    EXPECT_FALSE(parse_slurm_job_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
    // slurmstepd itself, before it makes a job's cgroup.
    EXPECT_FALSE(parse_slurm_job_cgroup("0::/system.slice/slurmstepd.scope/system\n"));
    // "job_" outside Slurm's tree, or not followed by digits.
    EXPECT_FALSE(parse_slurm_job_cgroup("0::/user.slice/job_12\n"));
    EXPECT_FALSE(parse_slurm_job_cgroup("0::/system.slice/slurmstepd.scope/job_12x/step_0\n"));
    EXPECT_FALSE(parse_slurm_job_cgroup("0::/system.slice/slurmstepd.scope/job_/step_0\n"));
    // A pod's cgroup (kubernetes.h reads those).
    EXPECT_FALSE(parse_slurm_job_cgroup(
        "0::/kubepods.slice/kubepods-pod1f0c2d3e_4a5b_6c7d_8e9f_a0b1c2d3e4f5.slice\n"));
    EXPECT_FALSE(parse_slurm_job_cgroup(""));
    EXPECT_FALSE(parse_slurm_job_cgroup("garbage without colons\n"));
}

}  // namespace
}  // namespace migscope::exporter
