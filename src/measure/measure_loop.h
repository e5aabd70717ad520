// The worker's measuring loop without torch: warm-up (with the step that captures a CUDA graph),
// the hold for the runner's `start`, the wait for a queued job's predecessor, the measured steps
// and the rules that stop them, as named phases on an injected clock (nvbench's measure phases
// and stopping criteria are the model). The worker supplies the steps and reports through hooks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/events.h"
#include "protocol/group_spec.h"

namespace migscope::measure {

// In order; kCapture is one warm-up step (warm-up goes on after it), the others are entered once
// each when they apply: warm-up steps, hold, wait, measured steps, done.
enum class Phase {
    kWarmup,
    kCapture,
    kHold,
    kWaitForPredecessor,
    kWaitForStartTime,  // LoopSettings::start_after_s
    kMeasure,
    kDone
};
const char* to_string(Phase phase);

// Monotonic time and waiting, injected so that tests drive the loop on a fake clock.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual double now_s() = 0;
    virtual void sleep_s(double duration_s) = 0;
};

// std::chrono::steady_clock and std::this_thread::sleep_for.
class SteadyClock final : public Clock {
  public:
    double now_s() override;
    void sleep_s(double duration_s) override;
};

// Whether a job captures its step as a CUDA graph, and at which warm-up step.
struct CapturePlan {
    std::optional<int64_t> step;              // the warm-up step that captures; none: eager
    std::optional<std::string> eager_reason;  // why a graph that was asked for is not tried
};

// The capture happens at warm-up step `capture_step` (the trainer's kEagerStepsBeforeCapture),
// so that every measured step replays the graph: with no more warm-up steps than that, no graph
// is tried and the reason says so. Graphs are CUDA's: on the CPU no capture and no reason.
enum class Device { kCpu, kCuda };
CapturePlan plan_capture(protocol::CudaGraph wanted, Device device, int64_t warmup_steps,
                         int64_t capture_step);

// A queued job (group spec `after`) waits for the job it follows before its measured steps.
enum class Predecessor { kNone, kWaitForIt };

struct LoopSettings {
    int64_t warmup_steps = 3;
    protocol::StopRule stop = protocol::StopRule::kSteps;
    int64_t steps = 20;    // kSteps: at least 1
    double seconds_s = 0;  // kSeconds: > 0, counted from the start of the first measured step
    protocol::Hold hold = protocol::Hold::kNo;
    Predecessor predecessor = Predecessor::kNone;
    // With Hold::kUntilStart: the measured steps start no earlier than this many seconds after
    // `start` was received (a later arrival in a stream replay); 0: at once.
    double start_after_s = 0;
    std::optional<int64_t> capture_step;  // CapturePlan::step
};

// The loop's settings for a worker job.
LoopSettings loop_settings(const protocol::WorkerJob& job, const CapturePlan& capture);

struct StepInfo {
    int64_t index = 0;             // from 0, warm-up included
    Phase phase = Phase::kWarmup;  // kWarmup, kCapture or kMeasure
};

struct StepRecord {
    StepInfo step;
    double step_time_s = 0;  // on the loop's clock, around LoopHooks::step
};

struct LoopHooks {
    // Runs one step; the loop times it. Required.
    std::function<void(const StepInfo&)> step;
    // After every step (the worker's `step` event and memory cap); may throw to end the job.
    std::function<void(const StepRecord&)> step_done;
    // When a phase begins (the worker's `warm` event at kHold, its profiler at kMeasure).
    std::function<void(Phase)> phase_begins;
    // Optional, once the measured steps stop: waits for the steps still running on the device (a
    // worker that launches each step before the previous one has ended). Its time counts in the
    // last measured step's, so that the measured time ends when the last step does.
    std::function<void()> finish_steps;
    // Polled, every kPollInterval_s while waiting and before every measured step:
    // the runner's `start` line (needed with Hold::kUntilStart);
    std::function<bool()> start_received;
    // the runner's `stop` line (kStopLine) or the end of its stdin (kEndOfInput), none while
    // not told (needed with StopRule::kUntilStopped). It also ends a hold or a wait, and the
    // measured steps after at least one, whatever the job's own rule;
    std::function<std::optional<protocol::StoppedBy>()> stop_requested;
    // the end of the job a queued job follows (needed with Predecessor::kWaitForIt).
    std::function<bool()> predecessor_ended;
};

struct LoopOutcome {
    std::vector<double> step_times_s;  // the measured steps', in order
    protocol::StoppedBy stopped_by = protocol::StoppedBy::kSteps;
    double measured_s = 0;                // from the start of the first measured step to the stop
    std::optional<int64_t> capture_step;  // the step that ran as kCapture, if one did
};

constexpr double kPollInterval_s = 0.001;

// Runs the phases: warm-up steps (the capture step among them), hold until `start`, wait for the
// predecessor, measured steps until the stop rule says so or the runner's stop (after at least
// one measured step), done. Settings that cannot work (steps < 1, seconds <= 0, a rule or hold
// whose hook is missing) throw std::invalid_argument; what the hooks throw goes through.
LoopOutcome run_measure_loop(const LoopSettings& settings, const LoopHooks& hooks, Clock& clock);

}  // namespace migscope::measure
