// The worker's events (docs/worker-protocol.md): typed, with the writer the worker uses and the
// parser the runner and `migscope train` use, and external commands' progress lines (fd 3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace migscope::protocol {

// Why a job stopped measuring: its own rule (steps, seconds), or the runner's `stop` line or the
// end of its stdin. On the wire: "steps", "seconds", "stop", "eof".
enum class StoppedBy { kSteps, kSeconds, kStopLine, kEndOfInput };
const char* to_string(StoppedBy stopped_by);

// How the measured steps ran: replays of a captured CUDA graph, or eagerly. "cuda-graph", "eager".
enum class StepMode { kCudaGraph, kEager };
const char* to_string(StepMode mode);

// Model built, on the device, optimizer made.
struct ReadyEvent {
    std::string model;  // the workload
    std::string mode;
    int64_t batch = 0;
    std::string device;
    std::string torch_version;
    std::optional<std::string> device_name;  // none on CPU
    std::optional<int> device_sms;           // none on CPU
    std::optional<int> sms;                  // the SMs the job runs on; none on CPU
    std::optional<int64_t> memory_limit_bytes;
    std::optional<double> peak_flops_per_s;  // the partition's dense bf16 peak; none if unknown
    std::string precision;
    bool cuda_graph = false;  // the job will capture its step and replay it
    int64_t parameters = 0;
    int64_t trainable_parameters = 0;
    std::string item_unit;  // images | tokens
    int64_t items_per_step = 0;
    std::optional<double> train_flops_per_step;  // none where not counted (fine-tuning)
    std::string weights;
    std::string data;
};

// With hold-after-warmup: warm-up done, waiting for `start`.
struct WarmEvent {};

struct StepEvent {
    int64_t step = 0;  // from 0, warm-up included
    bool warmup = false;
    double step_time_s = 0;
    double loss = 0;  // NaN when the loss is not a number (null on the wire)
};

struct ResultEvent {
    int64_t steps = 0;  // measured steps
    StoppedBy stopped_by = StoppedBy::kSteps;
    std::optional<double> step_time_p50_s;
    std::optional<double> step_time_p95_s;
    double items_per_s = 0;  // NaN: not a number (null on the wire)
    std::string item_unit;
    std::optional<double> achieved_flops_per_s;
    std::optional<double> mfu;
    std::optional<int> sms;
    std::optional<int64_t> peak_memory_bytes;  // none on CPU
    StepMode step_mode = StepMode::kEager;
    std::optional<std::string> eager_reason;  // why a job that asked for a graph stepped eagerly
    double final_loss = 0;                    // NaN: not a number
};

struct ErrorEvent {
    std::string message;
};

using EventBody = std::variant<ReadyEvent, WarmEvent, StepEvent, ResultEvent, ErrorEvent>;

struct Event {
    std::optional<int> job;  // index in the group spec (0 for `train`); none: the group's own
    EventBody body;
};

// The event's name on the wire: "ready", "warm", "step", "result", "error".
const char* event_name(const EventBody& body);

// One JSON object on one line (no newline), keys sorted.
std::string to_json_line(const Event& event);

// A line read back: the event, or why the line is not one (not JSON, not an object, an unknown
// event, a missing field or one of the wrong type, named). Never throws for bad input. Keys it
// does not know are ignored, so that events may grow.
struct ParsedEvent {
    std::optional<Event> event;
    std::string error;  // empty when `event` is set
};
ParsedEvent parse_event_line(std::string_view line);

// A line an external command writes on fd 3 for each step it finishes:
// {"event": "step", "items": N, "step_time_s": S, "item_unit": "images"}, every field but
// "event" optional (without step_time_s the runner times the step by the lines' arrival).
struct ProgressStep {
    std::optional<double> items;
    std::optional<double> step_time_s;
    std::optional<std::string> item_unit;
};
struct ParsedProgress {
    std::optional<ProgressStep> step;
    std::string error;  // empty when `step` is set
};
ParsedProgress parse_progress_line(std::string_view line);
std::string to_json_line(const ProgressStep& step);

}  // namespace migscope::protocol
