// The measuring loop's phases and stop rules.
#include "measure/measure_loop.h"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace migscope::measure {

using protocol::StoppedBy;
using protocol::StopRule;

const char* to_string(Phase phase) {
    switch (phase) {
        case Phase::kWarmup:
            return "warm-up";
        case Phase::kCapture:
            return "capture";
        case Phase::kHold:
            return "hold";
        case Phase::kWaitForPredecessor:
            return "wait for predecessor";
        case Phase::kWaitForStartTime:
            return "wait for start time";
        case Phase::kMeasure:
            return "measure";
        case Phase::kDone:
            return "done";
    }
    return "?";
}

double SteadyClock::now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void SteadyClock::sleep_s(double duration_s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(duration_s));
}

CapturePlan plan_capture(protocol::CudaGraph wanted, Device device, int64_t warmup_steps,
                         int64_t capture_step) {
    CapturePlan plan;
    if (wanted == protocol::CudaGraph::kEager || device != Device::kCuda)
        return plan;
    if (warmup_steps > capture_step) {
        plan.step = capture_step;
        return plan;
    }
    plan.eager_reason = "a CUDA graph is captured at warm-up step " + std::to_string(capture_step) +
                        ": needs at least " + std::to_string(capture_step + 1) +
                        " warm-up steps, got " + std::to_string(warmup_steps);
    return plan;
}

LoopSettings loop_settings(const protocol::WorkerJob& job, const CapturePlan& capture) {
    LoopSettings s;
    s.warmup_steps = job.warmup_steps;
    s.stop = job.stop;
    s.steps = job.steps;
    s.seconds_s = job.seconds_s;
    s.hold = job.hold_after_warmup;
    s.predecessor = job.after ? Predecessor::kWaitForIt : Predecessor::kNone;
    s.start_after_s = job.start_after_s;
    s.capture_step = capture.step;
    return s;
}

namespace {

void check(const LoopSettings& s, const LoopHooks& h) {
    if (!h.step)
        throw std::invalid_argument("measure loop: no step to run");
    if (s.warmup_steps < 0)
        throw std::invalid_argument("measure loop: negative warm-up steps");
    if (s.stop == StopRule::kSteps && s.steps < 1)
        throw std::invalid_argument("measure loop: needs at least 1 measured step");
    if (s.stop == StopRule::kSeconds && !(s.seconds_s > 0))
        throw std::invalid_argument("measure loop: needs a positive measuring time");
    if (s.stop == StopRule::kUntilStopped && !h.stop_requested)
        throw std::invalid_argument("measure loop: runs until stopped without a stop signal");
    if (s.hold == protocol::Hold::kUntilStart && !h.start_received)
        throw std::invalid_argument("measure loop: holds for `start` without a start signal");
    if (s.predecessor == Predecessor::kWaitForIt && !h.predecessor_ended)
        throw std::invalid_argument("measure loop: waits for a predecessor it cannot see");
    if (!(s.start_after_s >= 0))
        throw std::invalid_argument("measure loop: negative start time");
    if (s.start_after_s > 0 && s.hold != protocol::Hold::kUntilStart)
        throw std::invalid_argument(
            "measure loop: a start time counts from `start`: needs the hold");
}

// One run of the loop: the phase it is in and what it has measured.
class Loop {
  public:
    Loop(const LoopSettings& settings, const LoopHooks& hooks, Clock& clock)
        : s_(settings), h_(hooks), clock_(clock) {}

    LoopOutcome run() {
        int64_t index = 0;
        for (; index < s_.warmup_steps; ++index)
            step(index, s_.capture_step == index ? Phase::kCapture : Phase::kWarmup);
        double started_s = 0;  // when `start` came
        if (s_.hold == protocol::Hold::kUntilStart) {
            enter(Phase::kHold);
            wait_until([&] { return h_.start_received(); });
            started_s = clock_.now_s();
        }
        if (s_.predecessor == Predecessor::kWaitForIt) {
            enter(Phase::kWaitForPredecessor);
            wait_until([&] { return h_.predecessor_ended(); });
        }
        if (s_.start_after_s > 0 && clock_.now_s() - started_s < s_.start_after_s) {
            enter(Phase::kWaitForStartTime);
            wait_until([&] { return clock_.now_s() - started_s >= s_.start_after_s; });
        }
        enter(Phase::kMeasure);
        const double start_s = clock_.now_s();
        while (true) {
            const double elapsed_s = clock_.now_s() - start_s;
            if (const auto why = stop_now(elapsed_s)) {
                out_.stopped_by = *why;
                out_.measured_s = elapsed_s;
                break;
            }
            step(index++, Phase::kMeasure);
        }
        if (h_.finish_steps) {
            const double t0_s = clock_.now_s();
            h_.finish_steps();
            const double finish_s = clock_.now_s() - t0_s;
            out_.step_times_s.back() += finish_s;  // stop_now: at least one measured step
            out_.measured_s += finish_s;
        }
        enter(Phase::kDone);
        return std::move(out_);
    }

  private:
    void enter(Phase phase) {
        if (phase_ == phase)
            return;
        phase_ = phase;
        if (h_.phase_begins)
            h_.phase_begins(phase);
    }

    void step(int64_t index, Phase phase) {
        enter(phase);
        const StepInfo info{index, phase};
        const double t0_s = clock_.now_s();
        h_.step(info);
        const double dt_s = clock_.now_s() - t0_s;
        if (phase == Phase::kMeasure)
            out_.step_times_s.push_back(dt_s);
        if (phase == Phase::kCapture)
            out_.capture_step = index;
        if (h_.step_done)
            h_.step_done({info, dt_s});
    }

    std::optional<StoppedBy> told_to_stop() const {
        return h_.stop_requested ? h_.stop_requested() : std::nullopt;
    }

    // A hold or a wait ends when its condition holds or the runner says stop.
    template <class Condition>
    void wait_until(Condition done) {
        while (!done() && !told_to_stop())
            clock_.sleep_s(kPollInterval_s);
    }

    // Before each measured step: whether to stop, and why. The runner's stop (or the end of its
    // stdin) ends every job after at least one measured step, whatever its own rule: an
    // interrupted run must not wait for the work.
    std::optional<StoppedBy> stop_now(double elapsed_s) const {
        const size_t measured = out_.step_times_s.size();
        if (measured == 0)
            return std::nullopt;
        if (const auto told = told_to_stop())
            return told;
        switch (s_.stop) {
            case StopRule::kSteps:
                if (static_cast<int64_t>(measured) >= s_.steps)
                    return StoppedBy::kSteps;
                break;
            case StopRule::kSeconds:
                if (elapsed_s >= s_.seconds_s)
                    return StoppedBy::kSeconds;
                break;
            case StopRule::kUntilStopped:
                break;
        }
        return std::nullopt;
    }

    const LoopSettings& s_;
    const LoopHooks& h_;
    Clock& clock_;
    std::optional<Phase> phase_;
    LoopOutcome out_;
};

}  // namespace

LoopOutcome run_measure_loop(const LoopSettings& settings, const LoopHooks& hooks, Clock& clock) {
    check(settings, hooks);
    return Loop(settings, hooks, clock).run();
}

}  // namespace migscope::measure
