// Tests of the measuring loop on a fake clock with fake steps: phases, stop rules, the hold, the
// queue's wait, the runner's stop and the capture step.
#include "measure/measure_loop.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace migscope::measure;
using migscope::protocol::CudaGraph;
using migscope::protocol::Hold;
using migscope::protocol::StoppedBy;
using migscope::protocol::StopRule;

namespace {

// Time moves only when a step runs or the loop sleeps.
class FakeClock : public Clock {
  public:
    double now_s() override { return t_s; }
    void sleep_s(double duration_s) override {
        t_s += duration_s;
        ++sleeps;
    }
    double t_s = 100;
    int sleeps = 0;
};

// A job whose steps take `step_s` each on the fake clock, recording what the loop did.
struct FakeJob {
    FakeClock clock;
    double step_s = 0.5;
    std::vector<Phase> phases;
    std::vector<StepRecord> steps;
    std::optional<StoppedBy> stop;     // the runner's stop, once told
    std::optional<double> stop_at_s;   // tell it at this time
    std::optional<double> start_at_s;  // the runner's `start` at this time
    std::optional<double> predecessor_ends_at_s;
    LoopHooks hooks() {
        LoopHooks h;
        h.step = [this](const StepInfo&) { clock.t_s += step_s; };
        h.step_done = [this](const StepRecord& r) { steps.push_back(r); };
        h.phase_begins = [this](Phase p) { phases.push_back(p); };
        h.start_received = [this] { return start_at_s && clock.t_s >= *start_at_s; };
        h.stop_requested = [this]() -> std::optional<StoppedBy> {
            if (stop_at_s && clock.t_s >= *stop_at_s)
                return stop.value_or(StoppedBy::kStopLine);
            return std::nullopt;
        };
        h.predecessor_ended = [this] {
            return predecessor_ends_at_s && clock.t_s >= *predecessor_ends_at_s;
        };
        return h;
    }
    LoopOutcome run(const LoopSettings& s) { return run_measure_loop(s, hooks(), clock); }
    size_t measured() const {
        size_t n = 0;
        for (const StepRecord& r : steps)
            n += r.step.phase == Phase::kMeasure;
        return n;
    }
};

LoopSettings steps(int64_t warmup, int64_t measured) {
    LoopSettings s;
    s.warmup_steps = warmup;
    s.stop = StopRule::kSteps;
    s.steps = measured;
    return s;
}

}  // namespace

TEST(MeasureLoop, StepsRuleMeasuresExactlyThatMany) {
    FakeJob job;
    const LoopOutcome out = job.run(steps(3, 5));
    EXPECT_EQ(out.stopped_by, StoppedBy::kSteps);
    ASSERT_EQ(out.step_times_s.size(), 5u);
    for (double t : out.step_times_s)
        EXPECT_DOUBLE_EQ(t, 0.5);
    ASSERT_EQ(job.steps.size(), 8u);
    for (size_t i = 0; i < job.steps.size(); ++i) {
        EXPECT_EQ(job.steps[i].step.index, static_cast<int64_t>(i));
        EXPECT_EQ(job.steps[i].step.phase, i < 3 ? Phase::kWarmup : Phase::kMeasure);
    }
    EXPECT_EQ(job.phases, (std::vector<Phase>{Phase::kWarmup, Phase::kMeasure, Phase::kDone}));
    EXPECT_DOUBLE_EQ(out.measured_s, 2.5);
    EXPECT_FALSE(out.capture_step);
    EXPECT_EQ(job.clock.sleeps, 0);  // nothing to wait for
}

TEST(MeasureLoop, SecondsRuleCountsFromTheFirstMeasuredStep) {
    FakeJob job;
    LoopSettings s = steps(2, 0);
    s.stop = StopRule::kSeconds;
    s.seconds_s = 2.2;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(out.stopped_by, StoppedBy::kSeconds);
    // 0.5 s steps: 2.0 s is not yet 2.2, the fifth step ends at 2.5 s.
    EXPECT_EQ(out.step_times_s.size(), 5u);
    EXPECT_DOUBLE_EQ(out.measured_s, 2.5);
}

TEST(MeasureLoop, ASecondsWindowShorterThanAStepStillMeasuresOne) {
    FakeJob job;
    job.step_s = 10;
    LoopSettings s = steps(0, 0);
    s.stop = StopRule::kSeconds;
    s.seconds_s = 0.1;
    EXPECT_EQ(job.run(s).step_times_s.size(), 1u);
}

TEST(MeasureLoop, UntilStoppedRunsUntilTheRunnerSaysStop) {
    FakeJob job;
    job.stop_at_s = 103.2;  // after 1 warm-up and 5 measured steps (100 + 6 x 0.5 = 103.0)...
    LoopSettings s = steps(1, 0);
    s.stop = StopRule::kUntilStopped;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(out.stopped_by, StoppedBy::kStopLine);
    EXPECT_EQ(out.step_times_s.size(), 6u);  // ...the step running at 103.2 s finishes first

    FakeJob eof;
    eof.stop = StoppedBy::kEndOfInput;
    eof.stop_at_s = 101;
    EXPECT_EQ(eof.run(s).stopped_by, StoppedBy::kEndOfInput);
}

TEST(MeasureLoop, AStopBeforeTheFirstMeasuredStepStillMeasuresOne) {
    FakeJob job;
    job.stop_at_s = 0;  // told before anything ran
    const LoopOutcome out = job.run(steps(3, 20));
    EXPECT_EQ(out.stopped_by, StoppedBy::kStopLine);
    EXPECT_EQ(out.step_times_s.size(), 1u);
    EXPECT_EQ(job.steps.size(), 4u);  // the warm-up runs whole
}

TEST(MeasureLoop, AStopAfterTheFirstMeasuredStepEndsAnyRule) {
    FakeJob job;
    job.stop_at_s = 100 + 3 * 0.5 + 2 * 0.5;  // after two measured steps
    const LoopOutcome out = job.run(steps(3, 20));
    EXPECT_EQ(out.stopped_by, StoppedBy::kStopLine);
    EXPECT_EQ(out.step_times_s.size(), 2u);
}

TEST(MeasureLoop, TheRunnersStopWinsWhenTheRuleIsMetAtTheSameTime) {
    FakeJob job;
    job.stop_at_s = 100 + 2 * 0.5;
    EXPECT_EQ(job.run(steps(0, 2)).stopped_by, StoppedBy::kStopLine);
}

TEST(MeasureLoop, AHeldJobWaitsForStartAfterItsWarmUp) {
    FakeJob job;
    job.start_at_s = 110;
    LoopSettings s = steps(2, 3);
    s.hold = Hold::kUntilStart;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(job.phases,
              (std::vector<Phase>{Phase::kWarmup, Phase::kHold, Phase::kMeasure, Phase::kDone}));
    EXPECT_EQ(out.step_times_s.size(), 3u);
    EXPECT_GE(job.clock.t_s, 110 + 3 * 0.5);  // measured after the start
    EXPECT_DOUBLE_EQ(out.measured_s, 1.5);    // the wait is not measured
    EXPECT_GT(job.clock.sleeps, 0);
    // The first measured step began at or after the start line.
    EXPECT_EQ(job.steps[2].step.phase, Phase::kMeasure);
}

TEST(MeasureLoop, AStopEndsTheHoldAndStillMeasuresOneStep) {
    FakeJob job;
    job.stop = StoppedBy::kEndOfInput;
    job.stop_at_s = 105;  // no start ever comes
    LoopSettings s = steps(1, 10);
    s.hold = Hold::kUntilStart;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(out.stopped_by, StoppedBy::kEndOfInput);
    EXPECT_EQ(out.step_times_s.size(), 1u);
}

TEST(MeasureLoop, AQueuedJobWaitsForItsPredecessorAfterTheStart) {
    FakeJob job;
    job.start_at_s = 105;
    job.predecessor_ends_at_s = 120;
    LoopSettings s = steps(2, 2);
    s.hold = Hold::kUntilStart;
    s.predecessor = Predecessor::kWaitForIt;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(job.phases,
              (std::vector<Phase>{Phase::kWarmup, Phase::kHold, Phase::kWaitForPredecessor,
                                  Phase::kMeasure, Phase::kDone}));
    EXPECT_EQ(out.stopped_by, StoppedBy::kSteps);
    EXPECT_GE(job.clock.t_s, 120 + 2 * 0.5);
    EXPECT_DOUBLE_EQ(out.measured_s, 1.0);
}

// A later start (a stream replay's arrival): the measured steps begin start_after_s after the
// `start` line, and after the predecessor when that ends later.
TEST(MeasureLoop, AJobWithAStartTimeWaitsThatLongAfterTheStart) {
    FakeJob job;
    job.start_at_s = 105;
    LoopSettings s = steps(1, 2);
    s.hold = Hold::kUntilStart;
    s.start_after_s = 7;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(job.phases,
              (std::vector<Phase>{Phase::kWarmup, Phase::kHold, Phase::kWaitForStartTime,
                                  Phase::kMeasure, Phase::kDone}));
    ASSERT_EQ(out.step_times_s.size(), 2u);
    // The first measured step ended no earlier than 105 + 7 + one step.
    EXPECT_GE(job.clock.t_s, 112 + 2 * 0.5);
    EXPECT_LT(job.clock.t_s, 112 + 2 * 0.5 + 0.01);

    FakeJob queued;  // the predecessor ends after the start time: no wait beyond it
    queued.start_at_s = 105;
    queued.predecessor_ends_at_s = 130;
    s.predecessor = Predecessor::kWaitForIt;
    queued.run(s);
    EXPECT_EQ(queued.phases,
              (std::vector<Phase>{Phase::kWarmup, Phase::kHold, Phase::kWaitForPredecessor,
                                  Phase::kMeasure, Phase::kDone}));
    EXPECT_LT(queued.clock.t_s, 130 + 2 * 0.5 + 0.01);

    FakeJob stopped;  // a stop ends the wait
    stopped.start_at_s = 105;
    stopped.stop_at_s = 106;
    s.predecessor = Predecessor::kNone;
    EXPECT_EQ(stopped.run(s).stopped_by, StoppedBy::kStopLine);
    EXPECT_LT(stopped.clock.t_s, 108);
}

TEST(MeasureLoop, AStopEndsTheWaitForAPredecessor) {
    FakeJob job;
    job.stop_at_s = 101;  // the predecessor never ends
    LoopSettings s = steps(0, 5);
    s.predecessor = Predecessor::kWaitForIt;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(out.stopped_by, StoppedBy::kStopLine);
    EXPECT_EQ(out.step_times_s.size(), 1u);
}

TEST(MeasureLoop, NoWarmUpGoesStraightToMeasuring) {
    FakeJob job;
    LoopSettings s = steps(0, 2);
    s.hold = Hold::kUntilStart;
    job.start_at_s = 0;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(job.phases, (std::vector<Phase>{Phase::kHold, Phase::kMeasure, Phase::kDone}));
    EXPECT_EQ(job.steps.front().step.index, 0);
    EXPECT_EQ(out.step_times_s.size(), 2u);
}

TEST(MeasureLoop, TheCaptureStepIsOneOfTheWarmUpSteps) {
    FakeJob job;
    LoopSettings s = steps(4, 2);
    s.capture_step = 2;
    const LoopOutcome out = job.run(s);
    EXPECT_EQ(out.capture_step, 2);
    EXPECT_EQ(job.steps[2].step.phase, Phase::kCapture);
    EXPECT_EQ(job.steps[3].step.phase, Phase::kWarmup);
    EXPECT_EQ(job.phases, (std::vector<Phase>{Phase::kWarmup, Phase::kCapture, Phase::kWarmup,
                                              Phase::kMeasure, Phase::kDone}));
    EXPECT_EQ(out.step_times_s.size(), 2u);  // the capture step is not measured
}

TEST(MeasureLoop, CapturePlanNeedsMoreWarmUpStepsThanTheCaptureStep) {
    const CapturePlan yes = plan_capture(CudaGraph::kCapture, Device::kCuda, 3, 2);
    EXPECT_EQ(yes.step, 2);
    EXPECT_FALSE(yes.eager_reason);
    const CapturePlan too_few = plan_capture(CudaGraph::kCapture, Device::kCuda, 2, 2);
    EXPECT_FALSE(too_few.step);
    EXPECT_EQ(too_few.eager_reason,
              "a CUDA graph is captured at warm-up step 2: needs at least 3 warm-up steps, got 2");
    const CapturePlan eager = plan_capture(CudaGraph::kEager, Device::kCuda, 5, 2);
    EXPECT_FALSE(eager.step || eager.eager_reason);
    const CapturePlan cpu = plan_capture(CudaGraph::kCapture, Device::kCpu, 5, 2);
    EXPECT_FALSE(cpu.step || cpu.eager_reason);
}

TEST(MeasureLoop, SettingsComeFromTheWorkerJob) {
    migscope::protocol::WorkerJob j;
    j.warmup_steps = 4;
    j.stop = StopRule::kSeconds;
    j.seconds_s = 9;
    j.hold_after_warmup = Hold::kUntilStart;
    j.after = 1;
    const LoopSettings s = loop_settings(j, plan_capture(CudaGraph::kCapture, Device::kCuda, 4, 2));
    EXPECT_EQ(s.warmup_steps, 4);
    EXPECT_EQ(s.stop, StopRule::kSeconds);
    EXPECT_DOUBLE_EQ(s.seconds_s, 9);
    EXPECT_EQ(s.hold, Hold::kUntilStart);
    EXPECT_EQ(s.predecessor, Predecessor::kWaitForIt);
    EXPECT_EQ(s.capture_step, 2);
}

TEST(MeasureLoop, WhatAStepHookThrowsEndsTheLoop) {
    FakeJob job;
    LoopHooks h = job.hooks();
    h.step_done = [](const StepRecord& r) {
        if (r.step.index == 4)
            throw std::runtime_error("exceeded its memory limit");
    };
    EXPECT_THROW(run_measure_loop(steps(2, 10), h, job.clock), std::runtime_error);
}

TEST(MeasureLoop, SettingsThatCannotWorkAreRefused) {
    FakeJob job;
    EXPECT_THROW(job.run(steps(0, 0)), std::invalid_argument);
    EXPECT_THROW(job.run(steps(-1, 1)), std::invalid_argument);
    LoopSettings seconds = steps(0, 1);
    seconds.stop = StopRule::kSeconds;
    EXPECT_THROW(job.run(seconds), std::invalid_argument);
    LoopHooks no_signals;
    no_signals.step = [](const StepInfo&) {};
    LoopSettings until = steps(0, 1);
    until.stop = StopRule::kUntilStopped;
    EXPECT_THROW(run_measure_loop(until, no_signals, job.clock), std::invalid_argument);
    LoopSettings held = steps(0, 1);
    held.hold = Hold::kUntilStart;
    EXPECT_THROW(run_measure_loop(held, no_signals, job.clock), std::invalid_argument);
    LoopSettings queued = steps(0, 1);
    queued.predecessor = Predecessor::kWaitForIt;
    EXPECT_THROW(run_measure_loop(queued, no_signals, job.clock), std::invalid_argument);
    LoopSettings later = steps(0, 1);  // a start time counts from `start`: needs the hold
    later.start_after_s = 3;
    EXPECT_THROW(job.run(later), std::invalid_argument);
    later.start_after_s = -1;
    later.hold = Hold::kUntilStart;
    EXPECT_THROW(job.run(later), std::invalid_argument);
    EXPECT_THROW(run_measure_loop(steps(0, 1), LoopHooks{}, job.clock), std::invalid_argument);
    EXPECT_EQ(run_measure_loop(steps(0, 1), no_signals, job.clock).step_times_s.size(), 1u);
}

// A job that launches each step before the previous one has ended (launch 0.01 s on the host, 0.5
// s on the device) and waits only for the one before: without finish_steps the measured time
// would end when the second-to-last step does, one step short of the steps it counts.
TEST(MeasureLoop, FinishingTheLaunchedStepsCountsInTheLastMeasuredStep) {
    FakeJob job;
    double device_free_at_s = 0;
    std::vector<double> ends_s;  // launched steps' end times, oldest unread first
    auto wait_oldest = [&] {
        job.clock.t_s = std::max(job.clock.t_s, ends_s.front());
        ends_s.erase(ends_s.begin());
    };
    LoopHooks h = job.hooks();
    h.step = [&](const StepInfo&) {
        job.clock.t_s += 0.01;
        device_free_at_s = std::max(device_free_at_s, job.clock.t_s) + 0.5;
        ends_s.push_back(device_free_at_s);
        if (ends_s.size() > 1)
            wait_oldest();
    };
    int finished = 0;
    h.finish_steps = [&] {
        ++finished;
        while (!ends_s.empty())
            wait_oldest();
    };
    h.phase_begins = [&](Phase) {  // the warm-up's steps end before the measured ones start
        while (!ends_s.empty())
            wait_oldest();
    };
    const LoopOutcome out = run_measure_loop(steps(2, 5), h, job.clock);
    EXPECT_EQ(finished, 1);
    ASSERT_EQ(out.step_times_s.size(), 5u);
    double measured_s = 0;
    for (double t : out.step_times_s)
        measured_s += t;
    EXPECT_NEAR(measured_s, 5 * 0.5 + 0.01, 1e-9);  // the first launch, then five steps end to end
    EXPECT_NEAR(out.measured_s, measured_s, 1e-9);
    EXPECT_NEAR(out.step_times_s.front(), 0.01, 1e-9);  // its launch: nothing before it to wait for
    EXPECT_NEAR(out.step_times_s.back(), 1.0, 1e-9);    // the one before it, then itself
}
