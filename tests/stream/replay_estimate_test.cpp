// Tests of a replayed schedule's figures and interval: the schedule run on the replay's clock at
// the model's point reproduces the simulation, and at the error's ends each layout's work runs
// as planned and the next layout waits for it.
#include "stream/replay_estimate.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "stream/fixture.h"
#include "stream/policies.h"

namespace migscope::stream {
namespace {

using testing::add_residuals;
using testing::SplitOnSecondArrival;
using testing::two_jobs;

// a from 0 on the whole GPU; b arrives at 1 s and the GPU is split (10 s + 0.2 s × 2 instances):
// a stopped after 20 of its 100 steps, then 80 on 2g from 11.4 s, b on 1g from 11.4 s.
struct Split {
    plan::Problem problem = two_jobs();
    std::vector<StreamJob> jobs = {{0, 0, {}}, {1, 1, 35.0}};
    std::vector<int64_t> steps = {100, 100};
    SimulationOptions options;
    StreamResult schedule;
    ReplayPlan plan;
    Split() {
        options.reconfiguration.orchestrator_s = 10;
        options.reconfiguration.per_instance_s = 0.2;
        SplitOnSecondArrival policy;
        schedule = simulate(problem, jobs, policy, options);
        plan = replay_plan(schedule, jobs, steps);
    }
};

TEST(StreamReplayEstimate, AtTheModelsPointTheReplaysClockIsTheSimulations) {
    const Split s;
    const StreamResult r = replay_run(s.problem, s.jobs, s.plan, s.steps, s.options);
    for (size_t j = 0; j < s.jobs.size(); ++j) {
        EXPECT_NEAR(r.jobs[j].start_s, s.schedule.jobs[j].start_s, 1e-9) << j;
        EXPECT_NEAR(r.jobs[j].end_s, s.schedule.jobs[j].end_s, 1e-9) << j;
    }
    EXPECT_NEAR(r.jobs[0].end_s, 19.4, 1e-9);
    EXPECT_NEAR(r.jobs[1].end_s, 31.4, 1e-9);
    // Each layout's energy and the change's 10.4 s at idle power: the simulation's.
    EXPECT_NEAR(r.energy_j, s.schedule.energy_j, 1e-9);
    EXPECT_NEAR(r.horizon_s, 31.4, 1e-9);
    EXPECT_NEAR(r.mean_completion_s, s.schedule.mean_completion_s, 1e-9);
    EXPECT_DOUBLE_EQ(r.tardiness_s, 0);
}

// Slow (half speed whole, 0.8 on partitions): the first layout runs a's 20 steps in 2 s, not
// the 1 s planned, so the change starts at 2 s and the split's work at 12.4 s: a's 80 steps on
// 2g take 10 s (22.4 s), b on 1g 25 s (37.4 s, 2.4 s past its deadline). The policy is not asked
// again: it would have split at b's arrival (1 s) with a less far along.
TEST(StreamReplayEstimate, EachLayoutsWorkRunsAsPlannedAndTheNextWaitsForIt) {
    Split s;
    SimulationOptions slow = s.options;
    slow.speed_ratio_whole = 0.5;
    slow.speed_ratio_partitioned = 0.8;
    const StreamResult r = replay_run(s.problem, s.jobs, s.plan, s.steps, slow);
    EXPECT_NEAR(r.jobs[0].end_s, 22.4, 1e-9);
    EXPECT_NEAR(r.jobs[1].start_s, 12.4, 1e-9);
    EXPECT_NEAR(r.jobs[1].end_s, 37.4, 1e-9);
    EXPECT_NEAR(r.tardiness_s, 2.4, 1e-9);
    EXPECT_EQ(r.late_jobs, 1u);
    // Idle over 37.4 s; a's 200 W for 2 s whole; 100 W for 10 s and 50 W for 25 s on the split.
    EXPECT_NEAR(r.energy_j, 100 * 37.4 + 200 * 2 + 100 * 10 + 50 * 25, 1e-9);
}

plan::ModelError bands(double speed_lo, double speed_hi) {
    plan::ModelError e;
    add_residuals(e, plan::ResidualKind::kSpeed, "alone", speed_lo, speed_hi);
    add_residuals(e, plan::ResidualKind::kSpeed, "mix/small/plain", speed_lo, speed_hi);
    add_residuals(e, plan::ResidualKind::kDynamicEnergy, "mix/plain", 0.9, 1.1);
    return e;
}

// Every job's completion lies strictly inside its interval when the bands straddle the point:
// the same schedule runs every job later at the slow end and earlier at the fast end.
TEST(StreamReplayEstimate, TheIntervalIsTheSchedulesAtTheErrorsEnds) {
    const Split s;
    const plan::ModelError error = bands(0.8, 1.25);
    const StreamEstimate e =
        replay_estimate(s.problem, s.jobs, s.schedule, s.plan, s.steps, s.options, &error, 700);
    ASSERT_TRUE(e.known) << e.unknown_why;
    EXPECT_DOUBLE_EQ(e.point.energy_j, s.schedule.energy_j);
    for (size_t j = 0; j < s.jobs.size(); ++j) {
        const double point = s.schedule.jobs[j].end_s - s.jobs[j].arrival_s;
        EXPECT_LT(e.job_completion_s[j].lo, point - 0.1) << j;
        EXPECT_GT(e.job_completion_s[j].hi, point + 0.1) << j;
    }
    EXPECT_LT(e.energy_j.lo, s.schedule.energy_j);
    EXPECT_GT(e.energy_j.hi, s.schedule.energy_j);
    EXPECT_GT(e.tardiness_s.hi, 0);  // b, due at 35 s, is late at the slow end
}

TEST(StreamReplayEstimate, WithoutBandsThePointAloneSaysWhy) {
    const Split s;
    const StreamEstimate e =
        replay_estimate(s.problem, s.jobs, s.schedule, s.plan, s.steps, s.options, nullptr, 700);
    EXPECT_FALSE(e.known);
    EXPECT_FALSE(e.unknown_why.empty());
    EXPECT_DOUBLE_EQ(e.energy_j.lo, s.schedule.energy_j);
    EXPECT_DOUBLE_EQ(e.energy_j.hi, s.schedule.energy_j);
}

TEST(StreamReplayEstimate, RefusesStepsThatDoNotMatchTheJobs) {
    const Split s;
    EXPECT_THROW(replay_run(s.problem, s.jobs, s.plan, {100}, s.options), Error);
}

}  // namespace
}  // namespace migscope::stream
