// Tests of a simulated schedule as runs to replay: the simulator's stretches, each epoch's
// jobs in the simulator's order with their queues, steps and arrivals, and a layout change.
#include "stream/replay_plan.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "stream/fixture.h"
#include "stream/policies.h"

namespace migscope::stream {
namespace {

using testing::SplitOnSecondArrival;
using testing::two_jobs;

// Whole GPU, three jobs arriving at 0, 1 and 2 s: one epoch, each job queued after the one
// before it, all its steps, in the simulator's order.
TEST(StreamReplayPlan, OneLayoutQueuesJobsInTheSimulatorsOrder) {
    const plan::Problem p = two_jobs();
    const std::vector<StreamJob> jobs = {{0, 0, {}}, {1, 1, {}}, {2, 2, {}}};
    NeverPartition never;
    const StreamResult r = simulate(p, jobs, never, {});
    ASSERT_EQ(r.segments.size(), 3u);
    const ReplayPlan plan = replay_plan(r, jobs, {100, 100, 40});
    ASSERT_EQ(plan.epochs.size(), 1u);
    const ReplayEpoch& e = plan.epochs[0];
    EXPECT_FALSE(e.layout.has_value());
    EXPECT_EQ(e.partitions, std::vector<std::string>{"whole GPU"});
    EXPECT_DOUBLE_EQ(e.change_s, 0);
    EXPECT_DOUBLE_EQ(e.ready_s, 0);
    ASSERT_EQ(e.jobs.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(e.jobs[k].job, k);
        EXPECT_EQ(e.jobs[k].partition, 0u);
        EXPECT_DOUBLE_EQ(e.jobs[k].arrival_s, double(k));
        EXPECT_FALSE(e.jobs[k].stopped);
    }
    EXPECT_FALSE(e.jobs[0].after.has_value());
    EXPECT_EQ(e.jobs[1].after, 0u);
    EXPECT_EQ(e.jobs[2].after, 1u);
    EXPECT_EQ(e.jobs[0].steps, 100);
    EXPECT_EQ(e.jobs[2].steps, 40);
    // a 0-5 s, b 5-15 s, a2 15-20 s.
    EXPECT_DOUBLE_EQ(e.jobs[1].planned_start_s, 5);
    EXPECT_DOUBLE_EQ(e.jobs[1].planned_end_s, 15);
    EXPECT_DOUBLE_EQ(e.jobs[2].planned_start_s, 15);
}

// a runs alone from 0; at 1 s b arrives and the GPU is split (10 s + 0.2 s × 2 instances): a is
// stopped with 20 of its 100 steps done and resumes on 2g with the other 80 from 11.4 s, b runs
// on 1g from 11.4 s.
TEST(StreamReplayPlan, ALayoutChangeSplitsAJobsWorkAcrossEpochs) {
    const plan::Problem p = two_jobs();
    const std::vector<StreamJob> jobs = {{0, 0, {}}, {1, 1, {}}};
    SplitOnSecondArrival policy;
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 10;
    o.reconfiguration.per_instance_s = 0.2;
    const StreamResult r = simulate(p, jobs, policy, o);
    ASSERT_EQ(r.segments.size(), 3u);
    EXPECT_TRUE(r.segments[0].stopped);
    EXPECT_NEAR(r.segments[0].work_left_to, 0.8, 1e-12);
    EXPECT_NEAR(r.layouts[1].ready_s, 11.4, 1e-12);

    const ReplayPlan plan = replay_plan(r, jobs, {100, 100});
    ASSERT_EQ(plan.epochs.size(), 2u);
    const ReplayEpoch& first = plan.epochs[0];
    ASSERT_EQ(first.jobs.size(), 1u);
    EXPECT_EQ(first.jobs[0].job, 0u);
    EXPECT_EQ(first.jobs[0].steps, 20);
    EXPECT_TRUE(first.jobs[0].stopped);
    EXPECT_DOUBLE_EQ(first.jobs[0].planned_end_s, 1);

    const ReplayEpoch& second = plan.epochs[1];
    ASSERT_TRUE(second.layout.has_value());
    EXPECT_EQ(second.partitions, (std::vector<std::string>{"2g.35gb@0", "1g.18gb@2"}));
    EXPECT_DOUBLE_EQ(second.change_s, 1);
    EXPECT_NEAR(second.ready_s, 11.4, 1e-12);
    ASSERT_EQ(second.jobs.size(), 2u);
    EXPECT_EQ(second.jobs[0].job, 0u);  // the stopped job is placed again first
    EXPECT_EQ(second.jobs[0].partition, 0u);
    EXPECT_EQ(second.jobs[0].steps, 80);
    EXPECT_FALSE(second.jobs[0].after.has_value());
    EXPECT_EQ(second.jobs[1].job, 1u);
    EXPECT_EQ(second.jobs[1].partition, 1u);
    EXPECT_EQ(second.jobs[1].steps, 100);
    EXPECT_FALSE(second.jobs[1].after.has_value());  // alone on its partition
    EXPECT_NEAR(second.jobs[1].planned_start_s, 11.4, 1e-12);
}

// A job's stretches add up to its steps whatever the fractions; one rounded to no step is left
// out.
TEST(StreamReplayPlan, StretchesAddUpToTheJobsSteps) {
    StreamResult r;
    r.layouts.push_back({0, 0, "whole GPU", std::nullopt, 0});
    r.layouts.push_back({5, 0, "whole GPU", std::nullopt, 6});
    r.layouts.push_back({9, 0, "whole GPU", std::nullopt, 10});
    r.segments.push_back({0, 0, 0, "whole GPU", 0, 0, 5, 1, 0.66, true});
    r.segments.push_back({0, 0, 0, "whole GPU", 1, 6, 9, 0.66, 0.34, true});
    r.segments.push_back({0, 0, 0, "whole GPU", 2, 10, 12, 0.34, 0, false});
    const std::vector<StreamJob> jobs = {{0, 0, {}}};
    const ReplayPlan three = replay_plan(r, jobs, {3});
    int64_t total = 0;
    for (const ReplayEpoch& e : three.epochs) {
        for (const ReplayJob& j : e.jobs)
            total += j.steps;
    }
    EXPECT_EQ(total, 3);
    const ReplayPlan one = replay_plan(r, jobs, {1});
    ASSERT_EQ(one.epochs.size(), 3u);
    EXPECT_TRUE(one.epochs[0].jobs.empty());   // 0.34 of a step
    ASSERT_EQ(one.epochs[1].jobs.size(), 1u);  // the step is done here (rounded)
    EXPECT_EQ(one.epochs[1].jobs[0].steps, 1);
    EXPECT_TRUE(one.epochs[2].jobs.empty());
}

TEST(StreamReplayPlan, RefusesSchedulesItCannotRun) {
    const plan::Problem p = two_jobs();
    const std::vector<StreamJob> jobs = {{0, 0, {}}, {1, 0, {}}};
    NeverPartition never;
    SimulationOptions two;
    two.gpus = 2;
    const StreamResult r = simulate(p, jobs, never, two);
    try {
        replay_plan(r, jobs, {100, 100});
        FAIL() << "two GPUs replayed";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("--gpus 1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(replay_plan(simulate(p, jobs, never, {}), jobs, {100}), Error);
    EXPECT_THROW(replay_plan(simulate(p, jobs, never, {}), jobs, {100, 0}), Error);
}

TEST(StreamReplayPlan, JobStepsAreTheTracesWork) {
    const Trace trace = parse_trace_json(R"({"version": 1, "jobs": [
        {"arrival_s": 0, "workload": "resnet18", "work": 30},
        {"arrival_s": 1, "workload": "bert-base", "work": 20}]})",
                                         "t.json");
    EXPECT_EQ(replay_job_steps(trace, "t.json"), (std::vector<int64_t>{30, 20}));
}

TEST(StreamReplayPlan, JobStepsRefuseCommandsAndDurationsNamingTheJob) {
    const auto message = [](const std::string& text) {
        try {
            replay_job_steps(parse_trace_json(text, "t.json"), "t.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(R"({"version": 1, "jobs": [
        {"arrival_s": 0, "workload": "resnet18", "work": 30},
        {"arrival_s": 1, "name": "x", "command": ["x"], "work": 5}]})")
                  .rfind("t.json: jobs[1].command: a replay runs built-in workloads", 0),
              0u);
    EXPECT_EQ(message(R"({"version": 1, "jobs": [
        {"arrival_s": 0, "workload": "resnet18", "duration_s": 30}]})")
                  .rfind("t.json: jobs[0].duration_s: a replay runs fixed work", 0),
              0u);
}

// A layout changes at its simulated time, or when the work before it ended if later; its work
// starts after the change's cost.
TEST(StreamReplayPlan, AnEpochStartsAfterItsChangeAndTheWorkBeforeIt) {
    ReplayEpoch e;
    e.change_s = 10;
    e.ready_s = 15;  // a 5 s change
    EXPECT_DOUBLE_EQ(epoch_start_s(e, 0), 15);
    EXPECT_DOUBLE_EQ(epoch_start_s(e, 12), 17);  // the work before ran 2 s late
    ReplayEpoch first;                           // at 0, no cost
    EXPECT_DOUBLE_EQ(epoch_start_s(first, 0), 0);
}

}  // namespace
}  // namespace migscope::stream
