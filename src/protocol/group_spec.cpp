// The group spec's strict reader (every error names the offending key path), its writer, and the
// worker's `train` argv.
#include "protocol/group_spec.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/user_text.h"

namespace migscope::protocol {
namespace {

using nlohmann::json;

std::string at(const std::string& path) {
    return "group spec: " + path;
}

[[noreturn]] void fail(const std::string& path, const std::string& why) {
    throw input_error(at(path) + ": " + why);
}

int64_t get_integer(const json& v, const std::string& path, int64_t min) {
    if (!v.is_number_integer())
        throw strict::wrong_type(at(path), "an integer", json_type(v));
    const int64_t x =
        v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX ? INT64_MAX : v.get<int64_t>();
    if (x < min)
        fail(path, "must be at least " + std::to_string(min) + ", got " + v.dump());
    return x;
}

double get_positive_number(const json& v, const std::string& path) {
    if (!v.is_number())
        throw strict::wrong_type(at(path), "a number", json_type(v));
    const double x = v.get<double>();
    if (!(x > 0) || !std::isfinite(x))
        fail(path, "must be positive, got " + v.dump());
    return x;
}

std::string get_string(const json& v, const std::string& path) {
    if (!v.is_string())
        throw strict::wrong_type(at(path), "a string", json_type(v));
    return v.get<std::string>();
}

bool get_bool(const json& v, const std::string& path) {
    if (!v.is_boolean())
        throw strict::wrong_type(at(path), "true or false", json_type(v));
    return v.get<bool>();
}

// Refuses a key a job object does not have, naming it (and "model", the old name of "workload").
void check_job_keys(const json& j, const std::string& path) {
    static const strict::Expected kKeys = {"workload",
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
                                           "checkpoint",
                                           "save_checkpoint",
                                           "after",
                                           "until_stopped",
                                           "hold_after_warmup",
                                           "start_after_s",
                                           "cuda_graph"};
    for (const auto& [key, value] : j.items()) {
        // "model": the spec's name for it before the job-spec types became one
        kKeys.check(key, at(strict::field_path(path, key)),
                    key == "model" ? "the workload's key is \"workload\"" : "");
    }
}

// The job's training definition: its workload (also its name), mode, batch, LoRA rank, data and
// checkpoint.
JobSpec read_job_spec(const json& j, const std::string& path) {
    JobSpec job;
    if (!j.contains("workload"))
        throw strict::missing_field(at(path + ".workload"), "the workload's name");
    job.workload = get_string(j["workload"], path + ".workload");
    if (job.workload.empty())
        fail(path + ".workload", "must name a workload, got \"\"");
    job.name = job.workload;
    if (j.contains("mode")) {
        job.mode = get_string(j["mode"], path + ".mode");
        if (job.mode != "train" && job.mode != "finetune")
            fail(path + ".mode", "expected \"train\" or \"finetune\", got \"" + job.mode + "\"");
    }
    if (j.contains("batch"))
        job.batch = get_integer(j["batch"], path + ".batch", 1);
    if (j.contains("lora_rank"))
        job.lora_rank = get_integer(j["lora_rank"], path + ".lora_rank", 1);
    if (j.contains("data"))
        job.data = get_string(j["data"], path + ".data");
    if (j.contains("checkpoint"))
        job.checkpoint = get_string(j["checkpoint"], path + ".checkpoint");
    return job;
}

// The job's stop rules (steps, seconds, until_stopped) into `s`; returns how many were given.
int read_stop_rules(const json& j, const std::string& path, WorkerJob& s) {
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
    if (j.contains("until_stopped") && get_bool(j["until_stopped"], path + ".until_stopped")) {
        s.stop = StopRule::kUntilStopped;
        ++stop_rules;
    }
    return stop_rules;
}

// The job's later start: finite seconds >= 0, counted from `start`, so only with
// hold_after_warmup.
double read_start_after_s(const json& v, const std::string& path, Hold hold) {
    if (!v.is_number())
        throw strict::wrong_type(at(path), "a number", json_type(v));
    const double start_after_s = v.get<double>();
    if (!(start_after_s >= 0) || !std::isfinite(start_after_s))
        fail(path, "must be finite and at least 0, got " + v.dump());
    if (start_after_s > 0 && hold != Hold::kUntilStart)
        fail(path, "counts from `start`: needs hold_after_warmup");
    return start_after_s;
}

WorkerJob parse_job(const json& j, const std::string& path) {
    require_json_object(j, at(path));
    check_job_keys(j, path);
    WorkerJob s;
    s.job = read_job_spec(j, path);
    if (j.contains("sms"))
        s.sms =
            static_cast<int>(std::min<int64_t>(get_integer(j["sms"], path + ".sms", 1), 1 << 20));
    if (j.contains("memory_limit_gib"))
        s.memory_limit_gib = get_positive_number(j["memory_limit_gib"], path + ".memory_limit_gib");
    if (j.contains("warmup_steps"))
        s.warmup_steps = get_integer(j["warmup_steps"], path + ".warmup_steps", 0);
    if (j.contains("seed"))
        s.seed = static_cast<uint64_t>(get_integer(j["seed"], path + ".seed", 0));
    if (j.contains("save_checkpoint"))
        s.save_checkpoint = get_string(j["save_checkpoint"], path + ".save_checkpoint");

    const int stop_rules = read_stop_rules(j, path, s);
    if (j.contains("hold_after_warmup") &&
        get_bool(j["hold_after_warmup"], path + ".hold_after_warmup"))
        s.hold_after_warmup = Hold::kUntilStart;
    if (j.contains("cuda_graph") && !get_bool(j["cuda_graph"], path + ".cuda_graph"))
        s.cuda_graph = CudaGraph::kEager;
    if (stop_rules > 1)
        fail(path, "give at most one of steps, seconds and until_stopped");
    if (j.contains("after"))
        s.after = static_cast<int>(
            std::min<int64_t>(get_integer(j["after"], path + ".after", 0), 1 << 20));
    if (j.contains("start_after_s"))
        s.start_after_s =
            read_start_after_s(j["start_after_s"], path + ".start_after_s", s.hold_after_warmup);
    return s;
}

// A queued job follows an earlier job on that job's partition; both end on their own.
void check_queue(const std::vector<WorkerJob>& jobs) {
    for (size_t i = 0; i < jobs.size(); ++i) {
        const WorkerJob& s = jobs[i];
        if (!s.after)
            continue;
        const std::string path = "jobs[" + std::to_string(i) + "]";
        if (*s.after < 0 || static_cast<size_t>(*s.after) >= i)
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

// Shortest text that reads back as the same double ("30", "0.5", "69.75").
std::string number_text(double x) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(x);
}

json job_json(const WorkerJob& s, const std::string& path) {
    const JobSpec& job = s.job;
    if (job.external())
        throw input_error("group spec: " + path + ": an external command (" +
                          (job.command.empty() ? std::string("no workload") : job.command[0]) +
                          ") cannot run inside the worker");
    if (!s.profile_trace.empty())
        throw input_error("group spec: " + path +
                          ": a profile trace is recorded for `train` jobs only");
    json j;
    j["workload"] = job.workload;
    j["mode"] = job.mode;
    if (job.batch)
        j["batch"] = *job.batch;
    if (!job.data.empty())
        j["data"] = job.data;
    if (!job.checkpoint.empty())
        j["checkpoint"] = job.checkpoint;
    if (job.lora_rank)
        j["lora_rank"] = *job.lora_rank;
    if (s.after)
        j["after"] = *s.after;
    if (s.start_after_s > 0)
        j["start_after_s"] = s.start_after_s;
    if (s.sms)
        j["sms"] = *s.sms;
    if (s.memory_limit_gib)
        j["memory_limit_gib"] = *s.memory_limit_gib;
    j["warmup_steps"] = s.warmup_steps;
    switch (s.stop) {
        case StopRule::kSteps:
            j["steps"] = s.steps;
            break;
        case StopRule::kSeconds:
            j["seconds"] = s.seconds_s;
            break;
        case StopRule::kUntilStopped:
            j["until_stopped"] = true;
            break;
    }
    if (s.seed != 0)
        j["seed"] = s.seed;
    if (!s.save_checkpoint.empty())
        j["save_checkpoint"] = s.save_checkpoint;
    if (s.hold_after_warmup == Hold::kUntilStart)
        j["hold_after_warmup"] = true;
    if (s.cuda_graph == CudaGraph::kEager)
        j["cuda_graph"] = false;
    return j;
}

}  // namespace

GroupSpec parse_group_spec(const std::string& json_text) {
    json j;
    try {
        j = json::parse(json_text);
    } catch (const json::exception& e) {
        throw input_error(std::string("group spec: not JSON: ") +
                          user_text::foreign_message(e.what()));
    }
    require_json_object(j, at("(top level)"));
    const strict::Expected top_keys{"device", "jobs"};
    for (const auto& [key, value] : j.items())
        top_keys.check(key, at(strict::field_path("", key)));
    GroupSpec g;
    if (!j.contains("device"))
        throw strict::missing_field(at("device"), "cpu, cuda or cuda:N");
    g.device = get_string(j["device"], "device");
    if (!j.contains("jobs"))
        throw strict::missing_field(at("jobs"), "a list of jobs");
    if (!j["jobs"].is_array() || j["jobs"].empty())
        fail("jobs", "expected a non-empty list of jobs, got " + j["jobs"].dump());
    for (size_t i = 0; i < j["jobs"].size(); ++i)
        g.jobs.push_back(parse_job(j["jobs"][i], "jobs[" + std::to_string(i) + "]"));
    check_queue(g.jobs);
    return g;
}

std::string to_json_text(const GroupSpec& spec) {
    json out;
    out["device"] = spec.device;
    out["jobs"] = json::array();
    for (size_t i = 0; i < spec.jobs.size(); ++i)
        out["jobs"].push_back(job_json(spec.jobs[i], "jobs[" + std::to_string(i) + "]"));
    return out.dump(2) + '\n';
}

std::vector<std::string> train_argv(const std::string& worker_path, const WorkerJob& s,
                                    const std::string& device) {
    const JobSpec& job = s.job;
    if (job.external())
        throw input_error("job '" + job.name + "': an external command is not a worker job");
    if (s.after)
        throw input_error("job '" + job.name + "': a queue (after) needs a group of jobs");
    if (s.start_after_s > 0)
        throw input_error("job '" + job.name +
                          "': a later start (start_after_s) is the runner's for `train` jobs");
    std::vector<std::string> a = {
        worker_path, "train",    "--model", job.workload,     "--mode",
        job.mode,    "--device", device,    "--warmup-steps", std::to_string(s.warmup_steps)};
    if (job.batch)
        a.insert(a.end(), {"--batch", std::to_string(*job.batch)});
    if (!job.data.empty())
        a.insert(a.end(), {"--data", job.data});
    if (!job.checkpoint.empty())
        a.insert(a.end(), {"--checkpoint", job.checkpoint});
    if (job.lora_rank)
        a.insert(a.end(), {"--lora-rank", std::to_string(*job.lora_rank)});
    if (s.seed != 0)
        a.insert(a.end(), {"--seed", std::to_string(s.seed)});
    if (s.sms)
        a.insert(a.end(), {"--sms", std::to_string(*s.sms)});
    if (s.memory_limit_gib)
        a.insert(a.end(), {"--memory-limit-gib", number_text(*s.memory_limit_gib)});
    if (!s.save_checkpoint.empty())
        a.insert(a.end(), {"--save-checkpoint", s.save_checkpoint});
    if (!s.profile_trace.empty())
        a.insert(a.end(), {"--profile-trace", s.profile_trace});
    switch (s.stop) {
        case StopRule::kSteps:
            a.insert(a.end(), {"--steps", std::to_string(s.steps)});
            break;
        case StopRule::kSeconds:
            a.insert(a.end(), {"--seconds", number_text(s.seconds_s)});
            break;
        case StopRule::kUntilStopped:
            a.push_back("--until-stopped");
            break;
    }
    if (s.hold_after_warmup == Hold::kUntilStart)
        a.push_back("--hold-after-warmup");
    if (s.cuda_graph == CudaGraph::kEager)
        a.push_back("--no-cuda-graph");
    return a;
}

}  // namespace migscope::protocol
