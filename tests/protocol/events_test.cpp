// Tests of the worker's events: what the writer puts on the wire, the parser reads back, and what
// the parser says about lines that are not events; and the runner's stdin commands.
#include "protocol/events.h"

#include "protocol/commands.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

using namespace migscope::protocol;
using nlohmann::json;

namespace {

ReadyEvent a_ready() {
    ReadyEvent e;
    e.model = "resnet18";
    e.mode = "train";
    e.batch = 32;
    e.device = "cuda:0";
    e.torch_version = "2.11.0";
    e.device_name = "NVIDIA H200";
    e.device_sms = 132;
    e.sms = 16;
    e.memory_limit_bytes = 17179869184;
    e.peak_flops_per_s = 1.2e14;
    e.precision = "bf16-autocast";
    e.cuda_graph = true;
    e.parameters = 11689512;
    e.trainable_parameters = 11689512;
    e.item_unit = "images";
    e.items_per_step = 32;
    e.train_flops_per_step = 3.5e11;
    e.weights = "random initialisation";
    e.data = "synthetic, made on the device";
    return e;
}

ResultEvent a_result() {
    ResultEvent e;
    e.steps = 20;
    e.stopped_by = StoppedBy::kEndOfInput;
    e.step_time_p50_s = 0.01;
    e.step_time_p95_s = 0.012;
    e.items_per_s = 3200;
    e.item_unit = "images";
    e.achieved_flops_per_s = 3.5e13;
    e.mfu = 0.29;
    e.sms = 16;
    e.peak_memory_bytes = 2147483648;
    e.step_mode = StepMode::kCudaGraph;
    e.final_loss = 6.9;
    return e;
}

Event parsed(const std::string& line) {
    ParsedEvent p = parse_event_line(line);
    EXPECT_TRUE(p.error.empty()) << p.error << "\n" << line;
    if (!p.event)
        throw std::runtime_error("not an event: " + p.error);
    return std::move(*p.event);
}

std::string error_of(const std::string& line) {
    const ParsedEvent p = parse_event_line(line);
    EXPECT_FALSE(p.event) << line;
    return p.error;
}

}  // namespace

TEST(Events, TheWireKeepsTheDocumentedFieldNames) {
    const json ready = json::parse(to_json_line({2, a_ready()}));
    EXPECT_EQ(ready["event"], "ready");
    EXPECT_EQ(ready["job"], 2);
    for (const char* key :
         {"model", "mode", "batch", "device", "torch_version", "device_name", "device_sms", "sms",
          "memory_limit_bytes", "peak_flops_per_s", "precision", "parameters",
          "trainable_parameters", "item_unit", "items_per_step", "train_flops_per_step", "weights",
          "data", "cuda_graph"})
        EXPECT_TRUE(ready.contains(key)) << key;
    EXPECT_EQ(ready.size(), 21u);  // those, event and job

    const json result = json::parse(to_json_line({0, a_result()}));
    EXPECT_EQ(result["stopped_by"], "eof");
    EXPECT_EQ(result["step_mode"], "cuda-graph");
    EXPECT_TRUE(result["eager_reason"].is_null());
    EXPECT_EQ(result.size(), 15u);

    EXPECT_EQ(to_json_line({std::nullopt, ErrorEvent{"no device"}}),
              R"({"event":"error","job":null,"message":"no device"})");
    EXPECT_EQ(to_json_line({1, WarmEvent{}}), R"({"event":"warm","job":1})");
    EXPECT_EQ(to_json_line({0, StepEvent{3, false, 0.5, 2.25}}),
              R"({"event":"step","job":0,"loss":2.25,"step":3,"step_time_s":0.5,"warmup":false})");
}

TEST(Events, EveryEventReadsBackAsWritten) {
    const Event ready = parsed(to_json_line({2, a_ready()}));
    EXPECT_EQ(ready.job, 2);
    const auto& r = std::get<ReadyEvent>(ready.body);
    EXPECT_EQ(r.model, "resnet18");
    EXPECT_EQ(r.device_name, "NVIDIA H200");
    EXPECT_EQ(r.sms, 16);
    EXPECT_EQ(r.memory_limit_bytes, 17179869184);
    EXPECT_EQ(r.train_flops_per_step, 3.5e11);
    EXPECT_TRUE(r.cuda_graph);

    ReadyEvent on_cpu = a_ready();
    on_cpu.device_name.reset();
    on_cpu.device_sms.reset();
    on_cpu.sms.reset();
    on_cpu.memory_limit_bytes.reset();
    on_cpu.peak_flops_per_s.reset();
    on_cpu.train_flops_per_step.reset();
    const Event cpu_event = parsed(to_json_line({0, on_cpu}));
    const auto& c = std::get<ReadyEvent>(cpu_event.body);
    EXPECT_FALSE(c.device_name || c.device_sms || c.sms || c.memory_limit_bytes ||
                 c.peak_flops_per_s || c.train_flops_per_step);

    const Event result = parsed(to_json_line({0, a_result()}));
    const auto& res = std::get<ResultEvent>(result.body);
    EXPECT_EQ(res.steps, 20);
    EXPECT_EQ(res.stopped_by, StoppedBy::kEndOfInput);
    EXPECT_EQ(res.step_mode, StepMode::kCudaGraph);
    EXPECT_EQ(res.peak_memory_bytes, 2147483648);
    EXPECT_DOUBLE_EQ(*res.mfu, 0.29);
    EXPECT_FALSE(res.eager_reason);

    const Event step_event = parsed(to_json_line({1, StepEvent{4, true, 0.1, 3}}));
    const auto& step = std::get<StepEvent>(step_event.body);
    EXPECT_EQ(step.step, 4);
    EXPECT_TRUE(step.warmup);
    EXPECT_DOUBLE_EQ(step.step_time_s, 0.1);

    EXPECT_TRUE(std::holds_alternative<WarmEvent>(parsed(to_json_line({0, WarmEvent{}})).body));
    const Event error = parsed(to_json_line({std::nullopt, ErrorEvent{"bad spec"}}));
    EXPECT_FALSE(error.job);
    EXPECT_EQ(std::get<ErrorEvent>(error.body).message, "bad spec");
}

TEST(Events, EveryStopReasonAndStepModeHasItsWireName) {
    for (StoppedBy b :
         {StoppedBy::kSteps, StoppedBy::kSeconds, StoppedBy::kStopLine, StoppedBy::kEndOfInput}) {
        ResultEvent r = a_result();
        r.stopped_by = b;
        EXPECT_EQ(std::get<ResultEvent>(parsed(to_json_line({0, r})).body).stopped_by, b);
    }
    EXPECT_STREQ(to_string(StoppedBy::kStopLine), "stop");
    EXPECT_STREQ(to_string(StepMode::kEager), "eager");
}

TEST(Events, ALossThatIsNotANumberIsNullOnTheWire) {
    const std::string line =
        to_json_line({0, StepEvent{0, false, 0.1, std::numeric_limits<double>::quiet_NaN()}});
    EXPECT_TRUE(json::parse(line)["loss"].is_null());
    EXPECT_TRUE(std::isnan(std::get<StepEvent>(parsed(line).body).loss));
}

TEST(Events, UnknownFieldsAreIgnoredSoThatEventsMayGrow) {
    const Event e = parsed(R"({"event":"warm","job":0,"new_field":1})");
    EXPECT_TRUE(std::holds_alternative<WarmEvent>(e.body));
}

TEST(Events, MalformedLinesAreErrorsNamingWhatIsWrong) {
    EXPECT_EQ(error_of("Traceback (most recent call last):"), "not JSON");
    EXPECT_EQ(error_of(""), "not JSON");
    EXPECT_EQ(error_of("[1, 2]"), "not a JSON object");
    EXPECT_EQ(error_of(R"({"job": 0})"), "no \"event\" name");
    EXPECT_EQ(error_of(R"({"event": 3})"), "no \"event\" name");
    EXPECT_EQ(error_of(R"({"event": "dance", "job": 0})"), "unknown event \"dance\"");
    EXPECT_NE(error_of(R"({"event": "step", "job": 0, "step": 1, "warmup": false})")
                  .find("step event: step_time_s: missing field"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"event": "step", "job": 0, "step": "1", "warmup": false,
                          "step_time_s": 0.1, "loss": 1})")
                  .find("step event: step: wrong type: expected an integer, got a string"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"event": "error", "job": -1, "message": "x"})")
                  .find("error event: job: expected"),
              std::string::npos);
    EXPECT_NE(
        error_of(R"({"event": "error", "job": 0})").find("error event: message: missing field"),
        std::string::npos);
    json result = json::parse(to_json_line({0, a_result()}));
    result["stopped_by"] = "boredom";
    EXPECT_NE(error_of(result.dump()).find("steps, seconds, stop or eof"), std::string::npos);
}

TEST(Events, ProgressLinesOfExternalCommands) {
    const ParsedProgress full =
        parse_progress_line(R"({"event": "step", "items": 64, "step_time_s": 0.25,
                               "item_unit": "samples", "epoch": 1})");
    ASSERT_TRUE(full.step) << full.error;
    EXPECT_EQ(full.step->items, 64);
    EXPECT_EQ(full.step->step_time_s, 0.25);
    EXPECT_EQ(full.step->item_unit, "samples");
    const ParsedProgress bare = parse_progress_line(R"({"event": "step"})");
    ASSERT_TRUE(bare.step);
    EXPECT_FALSE(bare.step->items || bare.step->step_time_s || bare.step->item_unit);
    const ParsedProgress back = parse_progress_line(to_json_line(*full.step));
    ASSERT_TRUE(back.step);
    EXPECT_EQ(back.step->items, 64);

    EXPECT_EQ(parse_progress_line("epoch 1 done").error, "not JSON");
    EXPECT_NE(parse_progress_line(R"({"event": "epoch"})").error.find("not a step event"),
              std::string::npos);
    EXPECT_EQ(parse_progress_line(R"({"event": "step", "items": "many"})").error,
              "step event: items: wrong type: expected a number, got a string");
}

TEST(Commands, TheRunnersLinesReadBack) {
    using migscope::protocol::Command;
    for (Command c : {Command::kStart, Command::kStop})
        EXPECT_EQ(parse_command_line(to_line(c)), c);
    EXPECT_STREQ(to_line(Command::kStop), "stop");
    EXPECT_FALSE(parse_command_line("stop "));
    EXPECT_FALSE(parse_command_line(""));
}
