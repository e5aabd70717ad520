// The group spec parser: strict, every error names the offending key path.
#include "workloads/job_spec.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

#include "core/error.h"

namespace migscope::workloads {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
    throw input_error("group spec: " + path + ": " + why);
}

int64_t get_integer(const json& v, const std::string& path, int64_t min) {
    if (!v.is_number_integer())
        fail(path, "expected an integer, got " + v.dump());
    const int64_t x =
        v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX ? INT64_MAX : v.get<int64_t>();
    if (x < min)
        fail(path, "must be at least " + std::to_string(min) + ", got " + v.dump());
    return x;
}

double get_positive_number(const json& v, const std::string& path) {
    if (!v.is_number())
        fail(path, "expected a number, got " + v.dump());
    const double x = v.get<double>();
    if (!(x > 0) || !std::isfinite(x))
        fail(path, "must be positive, got " + v.dump());
    return x;
}

std::string get_string(const json& v, const std::string& path) {
    if (!v.is_string())
        fail(path, "expected a string, got " + v.dump());
    return v.get<std::string>();
}

JobSpec parse_job(const json& j, const std::string& path) {
    if (!j.is_object())
        fail(path, "expected an object, got " + j.dump());
    static const std::set<std::string> kKeys = {"model",
                                                "mode",
                                                "batch",
                                                "sms",
                                                "memory_limit_gib",
                                                "warmup_steps",
                                                "steps",
                                                "seconds",
                                                "seed",
                                                "lora_rank",
                                                "data",
                                                "until_stopped",
                                                "hold_after_warmup",
                                                "cuda_graph",
                                                "checkpoint",
                                                "save_checkpoint",
                                                "after"};
    for (const auto& [key, value] : j.items()) {
        if (!kKeys.count(key))
            fail(path + "." + key, "unknown key");
    }
    JobSpec s;
    if (!j.contains("model"))
        fail(path + ".model", "missing (the workload's name)");
    s.model = get_string(j["model"], path + ".model");
    if (j.contains("mode")) {
        s.mode = get_string(j["mode"], path + ".mode");
        if (s.mode != "train" && s.mode != "finetune")
            fail(path + ".mode", "expected \"train\" or \"finetune\", got \"" + s.mode + "\"");
    }
    if (j.contains("batch"))
        s.batch = get_integer(j["batch"], path + ".batch", 1);
    if (j.contains("sms"))
        s.sms =
            static_cast<int>(std::min<int64_t>(get_integer(j["sms"], path + ".sms", 1), 1 << 20));
    if (j.contains("memory_limit_gib"))
        s.memory_limit_gib = get_positive_number(j["memory_limit_gib"], path + ".memory_limit_gib");
    if (j.contains("warmup_steps"))
        s.warmup_steps = get_integer(j["warmup_steps"], path + ".warmup_steps", 0);
    if (j.contains("seed"))
        s.seed = static_cast<uint64_t>(get_integer(j["seed"], path + ".seed", 0));
    if (j.contains("lora_rank"))
        s.lora_rank = get_integer(j["lora_rank"], path + ".lora_rank", 1);
    if (j.contains("data"))
        s.data = get_string(j["data"], path + ".data");
    if (j.contains("checkpoint"))
        s.checkpoint = get_string(j["checkpoint"], path + ".checkpoint");
    if (j.contains("save_checkpoint"))
        s.save_checkpoint = get_string(j["save_checkpoint"], path + ".save_checkpoint");

    int stop_rules = 0;
    if (j.contains("steps")) {
        s.stop = StopRule::kSteps;
        s.steps = get_integer(j["steps"], path + ".steps", 1);
        ++stop_rules;
    }
    if (j.contains("seconds")) {
        s.stop = StopRule::kSeconds;
        s.seconds_s = get_positive_number(j["seconds"], path + ".seconds");
        ++stop_rules;
    }
    if (j.contains("until_stopped")) {
        if (!j["until_stopped"].is_boolean())
            fail(path + ".until_stopped",
                 "expected true or false, got " + j["until_stopped"].dump());
        if (j["until_stopped"].get<bool>()) {
            s.stop = StopRule::kUntilStopped;
            ++stop_rules;
        }
    }
    const auto get_flag = [&](const char* key, bool& flag) {
        if (!j.contains(key))
            return;
        if (!j[key].is_boolean())
            fail(path + "." + key, "expected true or false, got " + j[key].dump());
        flag = j[key].get<bool>();
    };
    get_flag("hold_after_warmup", s.hold_after_warmup);
    get_flag("cuda_graph", s.cuda_graph);
    if (stop_rules > 1)
        fail(path, "give at most one of steps, seconds and until_stopped");
    if (j.contains("after"))
        s.after = static_cast<int>(
            std::min<int64_t>(get_integer(j["after"], path + ".after", 0), 1 << 20));
    return s;
}

// A queued job follows an earlier job on that job's partition; both end on their own.
void check_queue(const std::vector<JobSpec>& jobs) {
    for (size_t i = 0; i < jobs.size(); ++i) {
        const JobSpec& s = jobs[i];
        if (!s.after)
            continue;
        const std::string path = "jobs[" + std::to_string(i) + "]";
        if (static_cast<size_t>(*s.after) >= i)
            fail(path + ".after", "must name an earlier job (0 to " +
                                      (i == 0 ? std::string("none") : std::to_string(i - 1)) +
                                      "), got " + std::to_string(*s.after));
        if (s.sms)
            fail(path + ".sms", "a queued job (after) runs on the partition of the job it follows");
        for (const size_t k : {i, static_cast<size_t>(*s.after)}) {
            if (jobs[k].stop == StopRule::kUntilStopped)
                fail("jobs[" + std::to_string(k) + "].until_stopped",
                     "a job in a queue (after) must stop by steps or seconds");
        }
    }
}

}  // namespace

GroupSpec parse_group_spec(const std::string& json_text) {
    json j;
    try {
        j = json::parse(json_text);
    } catch (const json::parse_error& e) {
        throw input_error(std::string("group spec: not JSON: ") + e.what());
    }
    if (!j.is_object())
        fail("(top level)", "expected an object with \"device\" and \"jobs\"");
    for (const auto& [key, value] : j.items()) {
        if (key != "device" && key != "jobs")
            fail(key, "unknown key");
    }
    GroupSpec g;
    if (!j.contains("device"))
        fail("device", "missing (cpu, cuda or cuda:N)");
    g.device = get_string(j["device"], "device");
    if (!j.contains("jobs"))
        fail("jobs", "missing (a list of jobs)");
    if (!j["jobs"].is_array() || j["jobs"].empty())
        fail("jobs", "expected a non-empty list of jobs, got " + j["jobs"].dump());
    for (size_t i = 0; i < j["jobs"].size(); ++i)
        g.jobs.push_back(parse_job(j["jobs"][i], "jobs[" + std::to_string(i) + "]"));
    check_queue(g.jobs);
    return g;
}

}  // namespace migscope::workloads
