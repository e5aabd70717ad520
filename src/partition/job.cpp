// Job lists from the command line and from JSON files.
#include "partition/job.h"

#include <algorithm>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text.h"
#include "core/text_file.h"
#include "core/user_text.h"

namespace migscope::partition {
namespace {

using text::split;
using text::trim;

bool all_digits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

int64_t parse_batch(std::string_view s, const std::string& where) {
    if (!all_digits(s) || s.size() > 9 || std::stoll(std::string(s)) <= 0)
        throw input_error(where + ": batch '" + user_text::shown(s) +
                          "' is not a positive integer");
    return std::stoll(std::string(s));
}

void check_mode(const std::string& mode, const std::string& where) {
    if (mode != "train" && mode != "finetune")
        throw input_error(where + ": mode '" + user_text::shown(mode) +
                          "' is not train or finetune");
}

}  // namespace

const std::vector<std::string>& builtin_workload_names() {
    static const std::vector<std::string> names = {
        "resnet18", "resnet50",    "vit-b16",  "bert-base", "gpt2-medium", "gpt2-xl",
        "mlp",      "resnet-tiny", "vit-tiny", "bert-tiny", "gpt2-tiny",   "mlp-tiny"};
    return names;
}

void check_job_name(const std::string& name, const std::string& where) {
    user_text::check_text(name, where);
    if (name.empty())
        throw input_error(where + ": a job name cannot be empty");
    if (name.size() > kMaxJobNameBytes)
        throw input_error(where + ": a job name is at most " + std::to_string(kMaxJobNameBytes) +
                          " bytes (this one has " + std::to_string(name.size()) + ")");
    // Valid UTF-8 by now: C0 and DEL are single bytes, C1 (U+0080-U+009F) is C2 80-9F, and the
    // bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which
    // turn the text printed after them around, are E2 80 AA-AE and E2 81 A6-A9.
    const auto byte = [&](size_t i) {
        return i < name.size() ? static_cast<unsigned char>(name[i]) : 0;
    };
    for (size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = byte(i);
        if (c < 0x20 || c == 0x7f || (c == 0xc2 && byte(i + 1) >= 0x80 && byte(i + 1) <= 0x9f))
            throw input_error(where + ": a job name cannot hold control characters (byte " +
                              std::to_string(c) + " at offset " + std::to_string(i) + ")");
        if (c == 0xe2 && ((byte(i + 1) == 0x80 && byte(i + 2) >= 0xaa && byte(i + 2) <= 0xae) ||
                          (byte(i + 1) == 0x81 && byte(i + 2) >= 0xa6 && byte(i + 2) <= 0xa9)))
            throw input_error(where +
                              ": a job name cannot hold bidirectional formatting characters "
                              "(U+202A-U+202E, U+2066-U+2069; at offset " +
                              std::to_string(i) + ")");
    }
}

void check_builtin_workload(const std::string& workload, const std::string& where) {
    const auto& known = builtin_workload_names();
    if (std::find(known.begin(), known.end(), workload) != known.end())
        return;
    std::string list;
    for (const std::string& k : known)
        list += (list.empty() ? "" : ", ") + k;
    // The workload is shown only when it is printable: it is the user's text.
    std::string shown = workload;
    try {
        check_job_name(workload, where);
    } catch (const Error&) {
        shown = "(not printable)";
    }
    throw input_error(where + ": unknown workload '" + shown + "'" +
                      (shown == workload ? text::did_you_mean(workload, known) : "") +
                      " (known: " + list + ")");
}

void make_names_unique(std::vector<JobSpec>& jobs) {
    std::set<std::string> taken;  // every name given, so that "a#2" made for a second "a" is new
    for (const JobSpec& j : jobs)
        taken.insert(j.name);
    std::map<std::string, int> seen;
    for (JobSpec& j : jobs) {
        if (++seen[j.name] == 1)
            continue;
        int n = seen[j.name];
        while (taken.count(j.name + "#" + std::to_string(n)))
            ++n;
        seen[j.name] = n;
        j.name += "#" + std::to_string(n);
        taken.insert(j.name);
    }
}

std::vector<JobSpec> parse_job_list(std::string_view text) {
    std::vector<JobSpec> jobs;
    for (const std::string& raw : split(text, ',')) {
        const std::string item = trim(raw);
        const std::string where = "job '" + user_text::shown(item) + "'";
        if (item.empty())
            throw input_error("empty job in list '" + user_text::shown(text) + "'");
        const std::vector<std::string> parts = split(item, ':');
        if (parts.size() > 3)
            throw input_error(where + ": expected WORKLOAD[:MODE][:BATCH]");
        JobSpec job;
        job.workload = trim(parts[0]);
        if (job.workload.empty())
            throw input_error(where + ": no workload name");
        check_job_name(job.workload, where);
        for (size_t i = 1; i < parts.size(); ++i) {
            const std::string p = trim(parts[i]);
            if (all_digits(p) && i == parts.size() - 1)
                job.batch = parse_batch(p, where);
            else if (i == 1) {
                job.mode = p;
                check_mode(job.mode, where);
            } else {
                throw input_error(where + ": expected WORKLOAD[:MODE][:BATCH]");
            }
        }
        job.name = job.workload + (job.mode == "finetune" ? "-ft" : "");
        jobs.push_back(std::move(job));
    }
    make_names_unique(jobs);
    return jobs;
}

const strict::Expected& jobs_file_keys() {
    static const strict::Expected keys{"workload",   "name",      "mode",
                                       "batch",      "lora_rank", "data",
                                       "checkpoint", "item_unit", "command"};
    return keys;
}

namespace {

// A job's "command": a non-empty array of strings, each a valid text.
std::vector<std::string> read_command(const nlohmann::json& value, const std::string& path) {
    if (!value.is_array() || value.empty())
        throw input_error(path + ".command must be a non-empty array of strings");
    std::vector<std::string> command;
    for (const nlohmann::json& a : value) {
        if (!a.is_string())
            throw input_error(path + ".command must be a non-empty array of strings");
        command.push_back(a.get<std::string>());
        user_text::check_text(command.back(),
                              path + ".command[" + std::to_string(command.size() - 1) + "]");
    }
    return command;
}

// Refuses a job that is both or neither a built-in workload and a command, or that gives what
// applies to the other kind only; names it (its command's program or its workload) where it
// has no name.
void check_file_job(JobSpec& job, const std::string& path) {
    if (job.workload.empty() == job.command.empty())
        throw input_error(path + ": give exactly one of \"workload\" and \"command\"");
    if (job.external() &&
        (job.batch || job.lora_rank || !job.data.empty() || !job.checkpoint.empty()))
        throw input_error(
            path + ": batch, data, checkpoint and lora_rank apply to built-in workloads only");
    if (!job.external() && job.item_unit)
        throw input_error(path +
                          ".item_unit: applies to commands only (a built-in "
                          "workload reports its own unit)");
    if (job.name.empty())
        job.name = job.external() ? job.command[0] : job.workload;
    check_job_name(job.name, path + ".name");
}

// One job object of the jobs file (at `path`), every key checked.
JobSpec read_file_job(const nlohmann::json& j, const std::string& path) {
    require_json_object(j, path);
    JobSpec job;
    auto string_at = [&](const std::string& key) {
        if (!j[key].is_string())
            throw strict::wrong_type(path + "." + key, "a string", json_type(j[key]));
        std::string value = j[key].get<std::string>();
        user_text::check_text(value, path + "." + key);  // "\u0000" is valid JSON
        return value;
    };
    auto positive_at = [&](const std::string& key) {
        if (!j[key].is_number_integer())
            throw strict::wrong_type(path + "." + key, "an integer", json_type(j[key]));
        if (j[key].get<int64_t>() <= 0)
            throw input_error(path + "." + key + " must be a positive integer");
        return j[key].get<int64_t>();
    };
    const strict::Expected& kJobKeys = jobs_file_keys();
    for (const auto& [key, value] : j.items()) {
        kJobKeys.check(key, strict::field_path(path, key));
        if (key == "workload") {
            job.workload = string_at(key);
            check_job_name(job.workload, path + ".workload");
        } else if (key == "name")
            job.name = string_at(key);
        else if (key == "mode") {
            job.mode = string_at(key);
            check_mode(job.mode, path + ".mode");
        } else if (key == "batch")
            job.batch = positive_at(key);
        else if (key == "lora_rank")
            job.lora_rank = positive_at(key);
        else if (key == "data")
            job.data = string_at(key);
        else if (key == "checkpoint")
            job.checkpoint = string_at(key);
        else if (key == "item_unit") {
            job.item_unit = string_at(key);
            check_job_name(*job.item_unit, path + ".item_unit");  // a word for tables
        } else if (key == "command")
            job.command = read_command(value, path);
    }
    check_file_job(job, path);
    return job;
}

}  // namespace

std::vector<JobSpec> parse_jobs_json(std::string_view text, const std::string& origin) {
    using nlohmann::json;
    user_text::check_text(text, origin);  // as every input file: named before its parser's words
    const json doc = parse_user_json(text, origin);
    require_json_object(doc, origin);
    const strict::Expected top_keys{"jobs"};
    for (const auto& [key, value] : doc.items())
        top_keys.check(key, origin + ": " + strict::field_path("", key));
    if (!doc.contains("jobs"))
        throw strict::missing_field(origin + ": jobs");
    if (!doc["jobs"].is_array())
        throw strict::wrong_type(origin + ": jobs", "an array", json_type(doc["jobs"]));
    std::vector<JobSpec> jobs;
    size_t index = 0;
    for (const json& j : doc["jobs"])
        jobs.push_back(read_file_job(j, origin + ": jobs[" + std::to_string(index++) + "]"));
    if (jobs.empty())
        throw input_error(origin + ": no jobs");
    make_names_unique(jobs);
    return jobs;
}

std::string job_text(const JobSpec& j) {
    if (j.external())
        return j.name;
    return j.workload + ":" + j.mode + (j.batch ? ":" + std::to_string(*j.batch) : "");
}

std::vector<JobSpec> jobs_from_options(std::string_view list, const std::string& file) {
    if (list.empty() && file.empty())
        throw input_error("give --jobs, --jobs-file or both");
    std::vector<JobSpec> jobs;
    if (!list.empty())
        jobs = parse_job_list(list);
    if (!file.empty()) {
        for (JobSpec& j : read_jobs_file(file))
            jobs.push_back(std::move(j));
        make_names_unique(jobs);
    }
    return jobs;
}

std::vector<JobSpec> read_jobs_file(const std::string& path) {
    return parse_jobs_json(read_text_file(path, "jobs file"), path);
}

}  // namespace migscope::partition
