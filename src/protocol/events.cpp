// Writing and reading the worker's event lines and external commands' progress lines.
#include "protocol/events.h"

#include <nlohmann/json.hpp>

#include <limits>

#include "core/json_fields.h"
#include "core/user_text.h"

namespace migscope::protocol {
namespace {

using nlohmann::json;

// A field missing or of the wrong type; caught in the parsers, never escapes them.
struct BadField {
    std::string message;
};

json optional_json(const auto& v) {
    return v ? json(*v) : json(nullptr);
}

// Reads the fields of one event object (other fields are ignored: a newer writer may add some);
// every failure names the event and the field, in the strict reader's words
// (core/strict_fields.h) where it is a missing field or a wrong type.
class EventFields {
  public:
    EventFields(const json& object, std::string event) : j_(object), event_(std::move(event)) {}

    std::string string(const char* key) const {
        const json& v = at(key);
        if (!v.is_string())
            wrong_type(key, "a string");
        return v.get<std::string>();
    }
    std::optional<std::string> optional_string(const char* key) const {
        return absent(key) ? std::nullopt : std::optional<std::string>(string(key));
    }
    int64_t integer(const char* key) const {
        const json& v = at(key);
        if (!v.is_number_integer())
            wrong_type(key, "an integer");
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
            bad(key, "an integer below 2^63");
        return v.get<int64_t>();
    }
    std::optional<int64_t> optional_integer(const char* key) const {
        return absent(key) ? std::nullopt : std::optional<int64_t>(integer(key));
    }
    std::optional<int> optional_int(const char* key) const {
        const auto x = optional_integer(key);
        if (x && (*x < std::numeric_limits<int>::min() || *x > std::numeric_limits<int>::max()))
            bad(key, "a 32-bit integer");
        return x ? std::optional<int>(static_cast<int>(*x)) : std::nullopt;
    }
    double number(const char* key) const {
        const json& v = at(key);
        if (!v.is_number())
            wrong_type(key, "a number");
        return v.get<double>();
    }
    // A number that may be null on the wire (what the writer makes of NaN).
    double number_or_nan(const char* key) const {
        return absent(key) ? std::numeric_limits<double>::quiet_NaN() : number(key);
    }
    std::optional<double> optional_number(const char* key) const {
        return absent(key) ? std::nullopt : std::optional<double>(number(key));
    }
    bool boolean(const char* key) const {
        const json& v = at(key);
        if (!v.is_boolean())
            wrong_type(key, "true or false");
        return v.get<bool>();
    }

    // A value of the right type that is not one this field takes.
    [[noreturn]] void bad(const char* key, const std::string& expected) const {
        const auto it = j_.find(key);
        throw BadField{path(key) + ": expected " + expected + ", got " +
                       (it == j_.end() ? std::string("nothing") : it->dump())};
    }

  private:
    // "step event: step_time_s"; the event's name is the writer's text.
    std::string path(const char* key) const { return user_text::shown(event_) + " event: " + key; }
    [[noreturn]] void wrong_type(const char* key, const char* expected) const {
        throw BadField{strict::wrong_type(path(key), expected, json_type(j_.at(key))).what()};
    }
    const json& at(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end())
            throw BadField{strict::missing_field(path(key)).what()};
        return *it;
    }
    // Missing and null both mean "none" for the fields that may be null.
    bool absent(const char* key) const {
        const auto it = j_.find(key);
        return it == j_.end() || it->is_null();
    }
    const json& j_;
    std::string event_;
};

StoppedBy parse_stopped_by(const EventFields& f) {
    const std::string s = f.string("stopped_by");
    for (StoppedBy b :
         {StoppedBy::kSteps, StoppedBy::kSeconds, StoppedBy::kStopLine, StoppedBy::kEndOfInput}) {
        if (s == to_string(b))
            return b;
    }
    f.bad("stopped_by", "steps, seconds, stop or eof");
}

StepMode parse_step_mode(const EventFields& f) {
    const std::string s = f.string("step_mode");
    for (StepMode m : {StepMode::kCudaGraph, StepMode::kEager}) {
        if (s == to_string(m))
            return m;
    }
    f.bad("step_mode", "cuda-graph or eager");
}

ReadyEvent parse_ready(const EventFields& f) {
    ReadyEvent e;
    e.model = f.string("model");
    e.mode = f.string("mode");
    e.batch = f.integer("batch");
    e.device = f.string("device");
    e.torch_version = f.string("torch_version");
    e.device_name = f.optional_string("device_name");
    e.device_sms = f.optional_int("device_sms");
    e.sms = f.optional_int("sms");
    e.memory_limit_bytes = f.optional_integer("memory_limit_bytes");
    e.peak_flops_per_s = f.optional_number("peak_flops_per_s");
    e.precision = f.string("precision");
    e.cuda_graph = f.boolean("cuda_graph");
    e.parameters = f.integer("parameters");
    e.trainable_parameters = f.integer("trainable_parameters");
    e.item_unit = f.string("item_unit");
    e.items_per_step = f.integer("items_per_step");
    e.train_flops_per_step = f.optional_number("train_flops_per_step");
    e.weights = f.string("weights");
    e.data = f.string("data");
    return e;
}

StepEvent parse_step(const EventFields& f) {
    StepEvent e;
    e.step = f.integer("step");
    e.warmup = f.boolean("warmup");
    e.step_time_s = f.number("step_time_s");
    e.loss = f.number_or_nan("loss");
    return e;
}

ResultEvent parse_result(const EventFields& f) {
    ResultEvent e;
    e.steps = f.integer("steps");
    e.stopped_by = parse_stopped_by(f);
    e.step_time_p50_s = f.optional_number("step_time_p50_s");
    e.step_time_p95_s = f.optional_number("step_time_p95_s");
    e.items_per_s = f.number_or_nan("items_per_s");
    e.item_unit = f.string("item_unit");
    e.achieved_flops_per_s = f.optional_number("achieved_flops_per_s");
    e.mfu = f.optional_number("mfu");
    e.sms = f.optional_int("sms");
    e.peak_memory_bytes = f.optional_integer("peak_memory_bytes");
    e.step_mode = parse_step_mode(f);
    e.eager_reason = f.optional_string("eager_reason");
    e.final_loss = f.number_or_nan("final_loss");
    return e;
}

json body_json(const ReadyEvent& e) {
    return {{"model", e.model},
            {"mode", e.mode},
            {"batch", e.batch},
            {"device", e.device},
            {"torch_version", e.torch_version},
            {"device_name", optional_json(e.device_name)},
            {"device_sms", optional_json(e.device_sms)},
            {"sms", optional_json(e.sms)},
            {"memory_limit_bytes", optional_json(e.memory_limit_bytes)},
            {"peak_flops_per_s", optional_json(e.peak_flops_per_s)},
            {"precision", e.precision},
            {"cuda_graph", e.cuda_graph},
            {"parameters", e.parameters},
            {"trainable_parameters", e.trainable_parameters},
            {"item_unit", e.item_unit},
            {"items_per_step", e.items_per_step},
            {"train_flops_per_step", optional_json(e.train_flops_per_step)},
            {"weights", e.weights},
            {"data", e.data}};
}

json body_json(const WarmEvent&) {
    return json::object();
}

json body_json(const StepEvent& e) {
    return {
        {"step", e.step}, {"warmup", e.warmup}, {"step_time_s", e.step_time_s}, {"loss", e.loss}};
}

json body_json(const ResultEvent& e) {
    return {{"steps", e.steps},
            {"stopped_by", to_string(e.stopped_by)},
            {"step_time_p50_s", optional_json(e.step_time_p50_s)},
            {"step_time_p95_s", optional_json(e.step_time_p95_s)},
            {"items_per_s", e.items_per_s},
            {"item_unit", e.item_unit},
            {"achieved_flops_per_s", optional_json(e.achieved_flops_per_s)},
            {"mfu", optional_json(e.mfu)},
            {"sms", optional_json(e.sms)},
            {"peak_memory_bytes", optional_json(e.peak_memory_bytes)},
            {"step_mode", to_string(e.step_mode)},
            {"eager_reason", optional_json(e.eager_reason)},
            {"final_loss", e.final_loss}};
}

json body_json(const ErrorEvent& e) {
    return {{"message", e.message}};
}

// The line as a JSON object, or why it is not one.
std::optional<json> object_of(std::string_view line, std::string& error) {
    json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        error = "not JSON";
        return std::nullopt;
    }
    if (!j.is_object()) {
        error = "not a JSON object";
        return std::nullopt;
    }
    if (!j.contains("event") || !j["event"].is_string()) {
        error = "no \"event\" name";
        return std::nullopt;
    }
    return j;
}

}  // namespace

const char* to_string(StoppedBy stopped_by) {
    switch (stopped_by) {
        case StoppedBy::kSteps:
            return "steps";
        case StoppedBy::kSeconds:
            return "seconds";
        case StoppedBy::kStopLine:
            return "stop";
        case StoppedBy::kEndOfInput:
            return "eof";
    }
    return "?";
}

const char* to_string(StepMode mode) {
    return mode == StepMode::kCudaGraph ? "cuda-graph" : "eager";
}

const char* event_name(const EventBody& body) {
    static constexpr const char* kNames[] = {"ready", "warm", "step", "result", "error"};
    static_assert(std::size(kNames) == std::variant_size_v<EventBody>);
    return kNames[body.index()];
}

std::string to_json_line(const Event& event) {
    json j = std::visit([](const auto& body) { return body_json(body); }, event.body);
    j["event"] = event_name(event.body);
    j["job"] = optional_json(event.job);
    return j.dump();
}

ParsedEvent parse_event_line(std::string_view line) {
    ParsedEvent out;
    const std::optional<json> j = object_of(line, out.error);
    if (!j)
        return out;
    const std::string name = (*j)["event"].get<std::string>();
    try {
        const EventFields f(*j, name);
        Event e;
        e.job = f.optional_int("job");
        if (e.job && *e.job < 0)
            f.bad("job", "an index (0 or more) or null");
        if (name == "ready")
            e.body = parse_ready(f);
        else if (name == "warm")
            e.body = WarmEvent{};
        else if (name == "step")
            e.body = parse_step(f);
        else if (name == "result")
            e.body = parse_result(f);
        else if (name == "error")
            e.body = ErrorEvent{f.string("message")};
        else {
            out.error = "unknown event \"" + name + "\"";
            return out;
        }
        out.event = std::move(e);
    } catch (const BadField& bad) {
        out.error = bad.message;
    }
    return out;
}

ParsedProgress parse_progress_line(std::string_view line) {
    ParsedProgress out;
    const std::optional<json> j = object_of(line, out.error);
    if (!j)
        return out;
    const std::string name = (*j)["event"].get<std::string>();
    if (name != "step") {
        out.error = "not a step event (\"" + name + "\")";
        return out;
    }
    try {
        const EventFields f(*j, name);
        ProgressStep s;
        s.items = f.optional_number("items");
        s.step_time_s = f.optional_number("step_time_s");
        s.item_unit = f.optional_string("item_unit");
        out.step = std::move(s);
    } catch (const BadField& bad) {
        out.error = bad.message;
    }
    return out;
}

std::string to_json_line(const ProgressStep& step) {
    json j = {{"event", "step"}};
    if (step.items)
        j["items"] = *step.items;
    if (step.step_time_s)
        j["step_time_s"] = *step.step_time_s;
    if (step.item_unit)
        j["item_unit"] = *step.item_unit;
    return j.dump();
}

}  // namespace migscope::protocol
