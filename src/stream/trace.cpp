// The trace format's reader, writer, checks and summary (docs/streams.md).
#include "stream/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/strict_fields.h"
#include "core/text_file.h"
#include "core/user_text.h"
#include "plan/model.h"

namespace migscope::stream {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

// The keys a trace entry adds to a jobs-file entry.
const char* const kTraceKeys[] = {"arrival_s", "work", "duration_s", "deadline_s", "priority"};

bool is_trace_key(const std::string& key) {
    return std::find(std::begin(kTraceKeys), std::end(kTraceKeys), key) != std::end(kTraceKeys);
}

std::string number_text(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

void check_time(double value, const std::string& where) {
    if (!std::isfinite(value))
        throw input_error(where + ": must be a finite number of seconds");
    if (value < 0)
        throw input_error(where + ": must not be negative (" + number_text(value) + ")");
    if (value > kMaxTraceSeconds)
        throw input_error(where + ": " + number_text(value) + " s is beyond the " +
                          number_text(kMaxTraceSeconds) + " s (31.7 years) a trace may span");
}

// The checks of one entry that need no other entry; `path` is "ORIGIN: jobs[I]".
void check_entry(const TraceJob& t, const std::string& path) {
    check_time(t.arrival_s, path + ".arrival_s");
    if (t.work_steps.has_value() == t.duration_s.has_value())
        throw input_error(path + ": give exactly one of \"work\" (steps) and \"duration_s\"");
    if (t.work_steps && (*t.work_steps <= 0 || *t.work_steps > plan::kMaxWorkSteps))
        throw input_error(path + ".work: must be a whole number of steps from 1 to 1e15, not " +
                          std::to_string(*t.work_steps));
    if (t.duration_s) {
        check_time(*t.duration_s, path + ".duration_s");
        if (*t.duration_s == 0)
            throw input_error(path + ".duration_s: must be above zero");
    }
    if (t.deadline_s) {
        check_time(*t.deadline_s, path + ".deadline_s");
        if (!(*t.deadline_s > t.arrival_s))
            throw input_error(path + ".deadline_s: " + number_text(*t.deadline_s) +
                              " is not after the job's arrival_s " + number_text(t.arrival_s));
    }
    if (!t.job.external())
        partition::check_builtin_workload(t.job.workload, path + ".workload");
}

void check_order(const Trace& trace, const std::string& origin) {
    for (size_t i = 1; i < trace.jobs.size(); ++i) {
        if (trace.jobs[i].arrival_s < trace.jobs[i - 1].arrival_s)
            throw input_error(origin + ": jobs[" + std::to_string(i) +
                              "].arrival_s: " + number_text(trace.jobs[i].arrival_s) +
                              " is before jobs[" + std::to_string(i - 1) + "].arrival_s " +
                              number_text(trace.jobs[i - 1].arrival_s) +
                              ": a trace is sorted by arrival_s");
    }
}

ojson job_entry(const TraceJob& t) {
    const partition::JobSpec& j = t.job;
    ojson e;
    e["arrival_s"] = t.arrival_s;
    e["name"] = j.name;
    if (j.external()) {
        e["command"] = j.command;
        if (j.item_unit)
            e["item_unit"] = *j.item_unit;
    } else {
        e["workload"] = j.workload;
        e["mode"] = j.mode;
        if (j.batch)
            e["batch"] = *j.batch;
        if (!j.data.empty())
            e["data"] = j.data;
        if (!j.checkpoint.empty())
            e["checkpoint"] = j.checkpoint;
        if (j.lora_rank)
            e["lora_rank"] = *j.lora_rank;
    }
    if (t.work_steps)
        e["work"] = *t.work_steps;
    if (t.duration_s)
        e["duration_s"] = *t.duration_s;
    if (t.deadline_s)
        e["deadline_s"] = *t.deadline_s;
    if (t.priority != 0)
        e["priority"] = t.priority;
    return e;
}

}  // namespace

Trace parse_trace_json(std::string_view text, const std::string& origin) {
    user_text::check_text(text, origin);
    const json doc = parse_user_json(text, origin);
    if (!doc.is_object())
        throw input_error(origin + ": expected an object with \"version\" and \"jobs\"");
    Trace trace;
    json job_parts = json::array();  // the jobs-file entries, read by partition::parse_jobs_json
    try {
        Fields top(doc, "");
        const int64_t version = top.get<int64_t>("version");
        if (version != kTraceVersion)
            throw input_error(
                "version: " + std::to_string(version) + " is not " + std::to_string(kTraceVersion) +
                " (this migscope reads trace version " + std::to_string(kTraceVersion) + ")");
        trace.source = top.optional<std::string>("source").value_or("");
        user_text::check_text(trace.source, "source");
        const json& jobs = top.child("jobs");
        top.check_keys();
        if (!jobs.is_array())
            throw input_error("jobs: expected an array");
        if (jobs.empty())
            throw input_error("jobs: no jobs");
        for (size_t i = 0; i < jobs.size(); ++i) {
            const std::string path = "jobs[" + std::to_string(i) + "]";
            Fields f(jobs[i], path);
            TraceJob t;
            t.arrival_s = f.get<double>("arrival_s");
            t.work_steps = f.optional<int64_t>("work");
            t.duration_s = f.optional<double>("duration_s");
            t.deadline_s = f.optional<double>("deadline_s");
            t.priority = f.optional<int64_t>("priority").value_or(0);
            // Every key is a trace key or a jobs file's (keys starting with '_' are comments).
            strict::Expected entry_keys(strict::Expected::Comments::kAllowed);
            for (const std::string& key : partition::jobs_file_keys().keys())
                entry_keys.expect(key);
            for (const char* key : kTraceKeys)
                entry_keys.expect(key);
            json part = json::object();
            for (const auto& [key, value] : jobs[i].items()) {
                entry_keys.check(key, strict::field_path(path, key));
                if (!is_trace_key(key) && key.rfind('_', 0) != 0)
                    part[key] = value;
            }
            job_parts.push_back(std::move(part));
            trace.jobs.push_back(std::move(t));
        }
    } catch (const Error& e) {
        throw input_error(origin + ": " + e.what());
    }
    // The job part of each entry, read as a jobs file reads it: its errors name "jobs[I]" of the
    // same file; names made unique across the trace.
    std::vector<partition::JobSpec> specs =
        partition::parse_jobs_json(json{{"jobs", job_parts}}.dump(), origin);
    for (size_t i = 0; i < specs.size(); ++i) {
        trace.jobs[i].job = std::move(specs[i]);
        check_entry(trace.jobs[i], origin + ": jobs[" + std::to_string(i) + "]");
    }
    check_order(trace, origin);
    return trace;
}

Trace read_trace_file(const std::string& path) {
    return parse_trace_json(read_text_file(path, "trace file"), path);
}

void check_trace(const Trace& trace, const std::string& origin) {
    if (trace.jobs.empty())
        throw input_error(origin + ": no jobs");
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
        const std::string path = origin + ": jobs[" + std::to_string(i) + "]";
        const partition::JobSpec& j = trace.jobs[i].job;
        partition::check_job_name(j.name, path + ".name");
        if (j.workload.empty() == j.command.empty())
            throw input_error(path + ": give exactly one of \"workload\" and \"command\"");
        check_entry(trace.jobs[i], path);
    }
    check_order(trace, origin);
}

std::string write_trace_json(const Trace& trace) {
    ojson doc;
    doc["version"] = kTraceVersion;
    if (!trace.source.empty())
        doc["source"] = trace.source;
    doc["jobs"] = ojson::array();
    for (const TraceJob& t : trace.jobs)
        doc["jobs"].push_back(job_entry(t));
    return doc.dump(2) + "\n";
}

void sort_and_name(Trace& trace) {
    std::stable_sort(
        trace.jobs.begin(), trace.jobs.end(),
        [](const TraceJob& a, const TraceJob& b) { return a.arrival_s < b.arrival_s; });
    std::vector<partition::JobSpec> specs;
    for (const TraceJob& t : trace.jobs)
        specs.push_back(t.job);
    partition::make_names_unique(specs);
    for (size_t i = 0; i < specs.size(); ++i)
        trace.jobs[i].job.name = specs[i].name;
}

TraceSummary summarize(const Trace& trace) {
    TraceSummary s;
    s.jobs = static_cast<int64_t>(trace.jobs.size());
    if (trace.jobs.empty())
        return s;
    s.first_arrival_s = trace.jobs.front().arrival_s;
    s.last_arrival_s = trace.jobs.back().arrival_s;
    s.span_s = s.last_arrival_s - s.first_arrival_s;
    // n arrivals span n - 1 gaps: the rate that the gaps between them show.
    if (s.jobs > 1 && s.span_s > 0)
        s.arrival_rate_per_h = static_cast<double>(s.jobs - 1) / s.span_s * 3600.0;
    std::map<std::string, int64_t> counts;
    for (const TraceJob& t : trace.jobs) {
        if (t.work_steps) {
            ++s.jobs_with_work;
            s.total_work_steps += static_cast<double>(*t.work_steps);
        }
        if (t.duration_s) {
            ++s.jobs_with_duration;
            s.total_duration_s += *t.duration_s;
        }
        if (t.deadline_s)
            ++s.jobs_with_deadline;
        const partition::JobSpec& j = t.job;
        ++counts[j.external() ? "command" : j.workload + (j.mode == "finetune" ? ":finetune" : "")];
    }
    for (const auto& [workload, jobs] : counts)
        s.workloads.push_back({workload, jobs});
    std::stable_sort(
        s.workloads.begin(), s.workloads.end(),
        [](const WorkloadCount& a, const WorkloadCount& b) { return a.jobs > b.jobs; });
    return s;
}

}  // namespace migscope::stream
