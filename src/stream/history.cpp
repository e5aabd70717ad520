// Slurm sacct and Kubernetes Job lists into traces (docs/streams.md says what maps to what).
#include "stream/history.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::stream {
namespace {

using nlohmann::json;

bool digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
int64_t number(std::string_view s) {
    int64_t v = 0;
    for (char c : s)
        v = v * 10 + (c - '0');
    return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

// Days in month `m` (1-12) of year `y`, February of leap years 29.
int64_t days_in_month(int64_t y, int64_t m) {
    static const int64_t days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap ? 1 : 0);
}

// What a reader left out, counted by reason, for the notes.
class Skips {
  public:
    void add(const std::string& reason, const std::string& example = "") {
        auto& [count, examples] = reasons_[reason];
        ++count;
        if (!example.empty())
            ++examples[example];
    }
    std::vector<std::string> notes() const {
        std::vector<std::string> out;
        for (const auto& [reason, entry] : reasons_) {
            const auto& [count, examples] = entry;
            std::string line = "skipped " + std::to_string(count) + " " + reason;
            if (!examples.empty()) {
                std::vector<std::pair<std::string, int64_t>> sorted(examples.begin(),
                                                                    examples.end());
                std::stable_sort(sorted.begin(), sorted.end(),
                                 [](const auto& a, const auto& b) { return a.second > b.second; });
                std::string names;
                for (size_t i = 0; i < sorted.size() && i < 5; ++i)
                    names += (names.empty() ? "" : ", ") + user_text::shown(sorted[i].first) +
                             " x" + std::to_string(sorted[i].second);
                if (sorted.size() > 5)
                    names += ", ...";
                line += ": " + names;
            }
            out.push_back(line);
        }
        return out;
    }

  private:
    std::map<std::string, std::pair<int64_t, std::map<std::string, int64_t>>> reasons_;
};

const char* const kUnmapped =
    "jobs whose name maps to no workload (give --map NAME=WORKLOAD[:MODE][:BATCH])";

// Arrivals from absolute times: each job's time less the earliest, then sorted and named.
HistoryRead finish(std::vector<std::pair<double, TraceJob>> jobs, const std::string& origin,
                   const std::string& source, Skips& skips, size_t read) {
    if (jobs.empty())
        throw input_error(origin + ": no job left to trace out of " + std::to_string(read) +
                          " read" + (skips.notes().empty() ? "" : " (" + skips.notes()[0] + ")"));
    double first = jobs.front().first;
    for (const auto& [time, job] : jobs)
        first = std::min(first, time);
    HistoryRead out;
    out.trace.source = source;
    for (auto& [time, job] : jobs) {
        job.arrival_s = time - first;
        out.trace.jobs.push_back(std::move(job));
    }
    sort_and_name(out.trace);
    check_trace(out.trace, origin);
    out.notes.push_back(origin + ": " + std::to_string(out.trace.jobs.size()) + " jobs traced of " +
                        std::to_string(read) + " read");
    for (const std::string& n : skips.notes())
        out.notes.push_back(origin + ": " + n);
    return out;
}

std::string column_key(std::string_view name) {
    return text::lower(text::trim(name));
}

}  // namespace

std::vector<NameRule> parse_name_rules(const std::vector<std::string>& items) {
    std::vector<NameRule> rules;
    for (const std::string& item : items) {
        const size_t eq = item.find('=');
        const std::string where = "--map '" + user_text::shown(item) + "'";
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            throw input_error(where +
                              ": expected NAME=WORKLOAD[:MODE][:BATCH] (NAME may end in *)");
        const std::string job = item.substr(eq + 1);
        if (job.find(',') != std::string::npos)
            throw input_error(where + ": one workload per --map");
        NameRule rule;
        rule.pattern = item.substr(0, eq);
        std::vector<partition::JobSpec> specs = partition::parse_job_list(job);
        partition::check_builtin_workload(specs.front().workload, where);
        rule.job = specs.front();
        rules.push_back(std::move(rule));
    }
    return rules;
}

std::optional<partition::JobSpec> job_for_name(const std::vector<NameRule>& rules,
                                               const std::string& name) {
    for (const NameRule& r : rules) {
        const bool prefix = !r.pattern.empty() && r.pattern.back() == '*';
        const std::string_view head(r.pattern.data(), r.pattern.size() - (prefix ? 1 : 0));
        if (prefix ? text::starts_with(name, head) : name == r.pattern) {
            partition::JobSpec job = r.job;
            job.name = name;
            return job;
        }
    }
    const auto& known = partition::builtin_workload_names();
    if (std::find(known.begin(), known.end(), name) != known.end()) {
        partition::JobSpec job;
        job.workload = name;
        job.name = name;
        return job;
    }
    return std::nullopt;
}

std::optional<double> parse_time_s(std::string_view t, bool zone_required) {
    // YYYY-MM-DDTHH:MM:SS
    if (t.size() < 19 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != ' ') ||
        t[13] != ':' || t[16] != ':')
        return std::nullopt;
    const std::string_view parts[] = {t.substr(0, 4),  t.substr(5, 2),  t.substr(8, 2),
                                      t.substr(11, 2), t.substr(14, 2), t.substr(17, 2)};
    for (std::string_view p : parts) {
        if (!digits(p))
            return std::nullopt;
    }
    const int64_t y = number(parts[0]), mo = number(parts[1]), d = number(parts[2]);
    const int64_t h = number(parts[3]), mi = number(parts[4]), s = number(parts[5]);
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60)
        return std::nullopt;
    double seconds =
        static_cast<double>(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s);
    std::string_view rest = t.substr(19);
    if (!rest.empty() && rest[0] == '.') {  // a fraction of a second
        size_t n = 1;
        while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9')
            ++n;
        if (n == 1)
            return std::nullopt;
        seconds += std::stod("0" + std::string(rest.substr(0, n)));
        rest = rest.substr(n);
    }
    if (rest.empty())
        return zone_required ? std::nullopt : std::optional<double>(seconds);
    if (!zone_required)
        return std::nullopt;
    if (rest == "Z" || rest == "z")
        return seconds;
    if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' &&
        digits(rest.substr(1, 2)) && digits(rest.substr(4, 2)) && number(rest.substr(1, 2)) <= 23 &&
        number(rest.substr(4, 2)) <= 59) {
        const double offset_s =
            static_cast<double>(number(rest.substr(1, 2)) * 3600 + number(rest.substr(4, 2)) * 60);
        return rest[0] == '+' ? seconds - offset_s : seconds + offset_s;  // to UTC
    }
    return std::nullopt;
}

std::optional<double> parse_slurm_duration_s(std::string_view text) {
    int64_t days = 0;
    const size_t dash = text.find('-');
    if (dash != std::string_view::npos) {
        if (!digits(text.substr(0, dash)) || dash > 6)
            return std::nullopt;
        days = number(text.substr(0, dash));
        text = text.substr(dash + 1);
    }
    double fraction = 0;
    const size_t dot = text.find('.');
    if (dot != std::string_view::npos) {  // "MM:SS.mmm" for short steps
        const std::string_view f = text.substr(dot + 1);
        if (!digits(f) || f.size() > 9)
            return std::nullopt;
        fraction = static_cast<double>(number(f)) / std::pow(10.0, static_cast<double>(f.size()));
        text = text.substr(0, dot);
    }
    const std::vector<std::string> parts = text::split(text, ':');
    if (parts.size() < 2 || parts.size() > 3)
        return std::nullopt;
    int64_t total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::string& p = parts[i];
        if (!digits(p) || p.size() > 2)
            return std::nullopt;
        // Minutes and seconds below 60; hours below 24 where days are given ("1-23:59:59").
        const bool hours = parts.size() == 3 && i == 0;
        if ((!hours && number(p) > 59) ||
            (hours && dash != std::string_view::npos && number(p) > 23))
            return std::nullopt;
        total = total * 60 + number(p);
    }
    return static_cast<double>(days * 86400 + total) + fraction;
}

namespace {

// One row of sacct's output, its fields found by the header's column names.
struct SacctRow {
    const std::map<std::string, size_t>& column;
    const std::vector<std::string>& fields;
    // A column's field, trimmed; none where the header has no such column.
    std::optional<std::string> field(const char* name) const {
        const auto it = column.find(name);
        if (it == column.end())
            return std::nullopt;
        return text::trim(fields[it->second]);
    }
};

// The header's columns by their lower-case names. Refuses a header without JobID, JobName and
// Submit, or with neither Elapsed nor Start and End.
std::map<std::string, size_t> sacct_columns(const std::vector<std::string>& fields,
                                            const std::string& at) {
    std::map<std::string, size_t> column;
    for (size_t i = 0; i < fields.size(); ++i)
        column[column_key(fields[i])] = i;
    for (const char* need : {"jobid", "jobname", "submit"}) {
        if (!column.count(need))
            throw input_error(at + ": the header has no " + std::string(need) +
                              " column (expected `sacct --parsable2` output with its header, e.g. "
                              "--format=JobID,JobName,Submit,Start,End,Elapsed,State,AllocTRES)");
    }
    if (!column.count("elapsed") && !(column.count("start") && column.count("end")))
        throw input_error(at + ": the header has neither Elapsed nor Start and End");
    return column;
}

// A job that never ran or has not ended: its state says so, or its Start or End is no time
// ("Unknown", "None").
bool not_ended(const std::string& state, const SacctRow& row) {
    const std::optional<std::string> start = row.field("start");
    const std::optional<std::string> end = row.field("end");
    return state == "PENDING" || state == "RUNNING" || state == "REQUEUED" ||
           state == "SUSPENDED" || state == "RESIZING" || (start && !parse_time_s(*start, false)) ||
           (end && !parse_time_s(*end, false));
}

// A job's run time: its Elapsed, else its End less its Start (the header has one or the other).
double sacct_duration_s(const SacctRow& row, const std::string& at) {
    if (const std::optional<std::string> elapsed = row.field("elapsed")) {
        const std::optional<double> d = parse_slurm_duration_s(*elapsed);
        if (!d)
            throw input_error(at + ": Elapsed: '" + user_text::shown(*elapsed) +
                              "' is not a duration ([D-]HH:MM:SS)");
        return *d;
    }
    return *parse_time_s(*row.field("end"), false) - *parse_time_s(*row.field("start"), false);
}

// A job's name: its JobName, or where migscope cannot show that, "slurm-" and its job id.
std::string sacct_job_name(const std::string& job_name, const std::string& job_id) {
    try {
        partition::check_job_name(job_name, "JobName");
    } catch (const Error&) {
        return "slurm-" + job_id;
    }
    return job_name;
}

}  // namespace

HistoryRead read_sacct(std::string_view text, const std::string& origin,
                       const HistoryOptions& options) {
    // Long as one row's checks in the order they apply, each skipping the row or refusing it.
    user_text::check_text(text, origin);
    std::vector<std::string> lines = text::split(text, '\n');
    size_t line_no = 0;
    std::map<std::string, size_t> column;
    size_t columns = 0;
    Skips skips;
    std::vector<std::pair<double, TraceJob>> jobs;
    size_t read = 0;
    bool gpu_column_warned = false;
    std::vector<std::string> notes;
    std::set<std::string> job_ids;  // each job once: `sacct --duplicates` repeats requeued ones
    for (std::string& line : lines) {
        ++line_no;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (text::trim(line).empty())
            continue;
        const std::string at = origin + ":" + std::to_string(line_no);
        const std::vector<std::string> fields = text::split(line, '|');
        if (column.empty()) {  // the header
            column = sacct_columns(fields, at);
            columns = fields.size();
            continue;
        }
        if (fields.size() != columns)
            throw input_error(at + ": " + std::to_string(fields.size()) +
                              " fields, the header has " + std::to_string(columns) +
                              " (a '|' in a job name breaks the columns)");
        const SacctRow row{column, fields};
        const std::string job_id = *row.field("jobid");
        if (job_id.find('.') != std::string::npos) {  // 123.batch, 123.extern, 123.0
            skips.add("job steps (JobID with '.')");
            continue;
        }
        if (!job_ids.insert(job_id).second) {
            skips.add(
                "rows repeating a JobID above (the first kept; sacct --duplicates lists a "
                "requeued job's runs)",
                job_id);
            continue;
        }
        ++read;
        const std::string state = text::split(row.field("state").value_or(""), ' ').front();
        if (not_ended(state, row)) {
            skips.add("jobs that did not run to an end (State, Start or End)",
                      state.empty() ? "" : state);
            continue;
        }
        const std::optional<std::string> tres =
            row.field("alloctres") ? row.field("alloctres") : row.field("reqtres");
        if (tres) {
            if (tres->find("gres/gpu") == std::string::npos) {
                skips.add("jobs without a GPU (no gres/gpu in " +
                          std::string(column.count("alloctres") ? "AllocTRES" : "ReqTRES") + ")");
                continue;
            }
        } else if (!gpu_column_warned) {
            gpu_column_warned = true;
            notes.push_back(origin +
                            ": no AllocTRES or ReqTRES column: jobs without a GPU are kept too");
        }
        const std::string submit_text = *row.field("submit");
        const std::optional<double> submit = parse_time_s(submit_text, false);
        if (!submit)
            throw input_error(at + ": Submit: '" + user_text::shown(submit_text) +
                              "' is not a time (YYYY-MM-DDTHH:MM:SS)");
        const double duration_s = sacct_duration_s(row, at);
        if (!(duration_s > 0)) {
            skips.add("jobs that ran 0 s");
            continue;
        }
        const std::string name = sacct_job_name(*row.field("jobname"), job_id);
        std::optional<partition::JobSpec> job = job_for_name(options.rules, name);
        if (!job) {
            skips.add(kUnmapped, name);
            continue;
        }
        TraceJob t;
        t.job = std::move(*job);
        t.duration_s = duration_s;
        jobs.emplace_back(*submit, std::move(t));
    }
    if (column.empty())
        throw input_error(origin + ": empty (expected `sacct --parsable2` output with its header)");
    HistoryRead out = finish(std::move(jobs), origin, "sacct " + origin, skips, read);
    out.notes.insert(out.notes.end(), notes.begin(), notes.end());
    return out;
}

namespace {

// The Jobs of `kubectl get jobs -o json` (a List or JobList) or of one Job, and the prefix their
// paths start with in messages ("items", or none for one Job).
struct KubectlItems {
    std::vector<json> items;
    std::string prefix;
};

KubectlItems parse_kubectl_items(std::string_view text, const std::string& origin) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        throw input_error(origin + ": not valid JSON: " + user_text::foreign_message(e.what()));
    }
    if (!doc.is_object())
        throw input_error(origin +
                          ": expected a Kubernetes List of Jobs (kubectl get jobs -o json)");
    const std::string kind = doc.value("kind", "");
    if (kind == "Job")
        return {{doc}, ""};
    if ((kind == "List" || kind == "JobList") && doc.contains("items") && doc["items"].is_array())
        return {doc["items"].get<std::vector<json>>(), "items"};
    throw input_error(origin + ": kind '" + user_text::shown(kind) +
                      "' with no items array: expected a List of Jobs (kubectl get jobs -o json)");
}

// One Job of the list, its fields read by their path; errors name the field after the Job's
// place in the list ("k.json: items[2].metadata.name: missing").
class KubectlJob {
  public:
    KubectlJob(const json& item, const std::string& origin, const KubectlItems& list, size_t i)
        : item_(item),
          path_(origin + ": " +
                (list.prefix.empty() ? std::string("")
                                     : list.prefix + "[" + std::to_string(i) + "]")),
          dot_(list.prefix.empty() ? "" : ".") {
        if (!item_.is_object())
            throw input_error(path_ + ": expected an object");
        if (item_.value("kind", "Job") != "Job")
            throw input_error(where("kind") + ": '" + user_text::shown(item_.value("kind", "")) +
                              "' is not Job");
    }

    const json& item() const { return item_; }
    // "ORIGIN: items[I].FIELD".
    std::string where(const std::string& field) const { return path_ + dot_ + field; }

    // A string field by its keys; an input error naming it when it is not a string, or when it
    // is `required` and missing (named up to the first missing key).
    std::optional<std::string> string_at(std::initializer_list<const char*> keys,
                                         bool required) const {
        const json* j = &item_;
        std::string at = path_ + dot_;
        bool first = true;
        for (const char* k : keys) {
            at += (first ? "" : ".") + std::string(k);
            first = false;
            if (!j->is_object() || !j->contains(k) || (*j)[k].is_null()) {
                if (required)
                    throw input_error(at + ": missing");
                return std::nullopt;
            }
            j = &(*j)[k];
        }
        if (!j->is_string())
            throw input_error(at + ": expected a string");
        return j->get<std::string>();
    }

    // An optional RFC 3339 time field in Unix seconds.
    std::optional<double> time_at(std::initializer_list<const char*> keys) const {
        const std::optional<std::string> t = string_at(keys, false);
        if (!t)
            return std::nullopt;
        const std::optional<double> s = parse_time_s(*t, true);
        std::string at = path_ + dot_;
        for (const char* k : keys)
            at += std::string(k) + ".";
        at.pop_back();
        if (!s)
            throw input_error(at + ": '" + user_text::shown(*t) +
                              "' is not an RFC 3339 time (2024-03-05T14:02:11Z)");
        return s;
    }

  private:
    const json& item_;
    std::string path_;
    std::string dot_;
};

// The pod template's containers (a copy: absent parts read as empty).
json pod_containers(const json& item) {
    const json containers = item.contains("spec") && item["spec"].is_object()
                                ? item["spec"].value("template", json::object())
                                : json::object();
    return containers.is_object() && containers.contains("spec") && containers["spec"].is_object()
               ? containers["spec"].value("containers", json::array())
               : json::array();
}

// The index of the first container that asks for an nvidia.com/ resource (limits or requests).
std::optional<size_t> first_gpu_container(const json& containers) {
    for (size_t k = 0; k < containers.size(); ++k) {
        const json& c = containers[k];
        if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object())
            continue;
        for (const char* part : {"limits", "requests"}) {
            const json& r = c["resources"].value(part, json::object());
            if (!r.is_object())
                continue;
            for (const auto& [key, value] : r.items()) {
                if (text::starts_with(key, "nvidia.com/"))
                    return k;
            }
        }
    }
    return std::nullopt;
}

// The workload the Job names, as a job called `name`: its annotation, else its label (a label
// cannot hold ':'); none when it names none.
std::optional<partition::JobSpec> named_workload(const KubectlJob& job, const std::string& name) {
    std::optional<std::string> named =
        job.string_at({"metadata", "annotations", "migscope.io/workload"}, false);
    std::string named_where = "metadata.annotations.migscope.io/workload";
    if (!named) {
        named = job.string_at({"metadata", "labels", "migscope.io/workload"}, false);
        named_where = "metadata.labels.migscope.io/workload";
    }
    if (!named)
        return std::nullopt;
    const std::string where = job.where(named_where);
    if (named->find(',') != std::string::npos)
        throw input_error(where + ": one workload, WORKLOAD[:MODE][:BATCH]");
    std::vector<partition::JobSpec> specs;
    try {
        specs = partition::parse_job_list(*named);
        partition::check_builtin_workload(specs.front().workload, "workload");
    } catch (const Error& e) {
        throw input_error(where + ": " + e.what());
    }
    partition::JobSpec spec = specs.front();
    spec.name = name;
    return spec;
}

// The container's own command and args as one argv; none when it has no command (the image's
// entrypoint, which the Job does not hold).
std::optional<std::vector<std::string>> container_argv(const KubectlJob& job, const json& container,
                                                       size_t index) {
    std::vector<std::string> argv;
    for (const char* part : {"command", "args"}) {
        const json& a = container.value(part, json::array());
        const std::string where =
            job.where("spec.template.spec.containers[" + std::to_string(index) + "]." + part);
        if (!a.is_array())
            throw input_error(where + ": expected an array of strings");
        for (const json& word : a) {
            if (!word.is_string())
                throw input_error(where + ": expected an array of strings");
            argv.push_back(word.get<std::string>());
        }
    }
    if (container.value("command", json::array()).empty())
        return std::nullopt;
    return argv;
}

// One finished Job that asked for a GPU as (creation time, trace job); none, counted in
// `skips`, when it is still running or failed, used no GPU, names no job or ran 0 s.
std::optional<std::pair<double, TraceJob>> read_kubectl_job(const KubectlJob& item,
                                                            const HistoryOptions& options,
                                                            Skips& skips) {
    const std::string name = *item.string_at({"metadata", "name"}, true);
    const std::optional<double> created = item.time_at({"metadata", "creationTimestamp"});
    if (!created)
        throw input_error(item.where("metadata.creationTimestamp") + ": missing");
    const std::optional<double> started = item.time_at({"status", "startTime"});
    const std::optional<double> completed = item.time_at({"status", "completionTime"});
    if (!started || !completed) {
        skips.add("jobs without status.startTime and status.completionTime (running or failed)");
        return std::nullopt;
    }
    const json containers = pod_containers(item.item());
    const std::optional<size_t> gpu_index = first_gpu_container(containers);
    if (!gpu_index) {
        skips.add("jobs without a GPU (no nvidia.com/ resource in a container)");
        return std::nullopt;
    }
    std::optional<partition::JobSpec> job = named_workload(item, name);
    if (!job)
        job = job_for_name(options.rules, name);
    if (!job) {
        const std::optional<std::vector<std::string>> argv =
            container_argv(item, containers[*gpu_index], *gpu_index);
        if (!argv) {
            skips.add(
                "jobs with no workload annotation, no --map and no container command "
                "(the image's entrypoint is not in the Job)",
                name);
            return std::nullopt;
        }
        job = partition::JobSpec{};
        job->name = name;
        job->command = *argv;
    }
    try {
        partition::check_job_name(job->name, "name");
    } catch (const Error& e) {
        throw input_error(item.where("metadata.name") + ": " + e.what());
    }
    const double duration_s = *completed - *started;
    if (duration_s < 0)
        throw input_error(item.where("status.completionTime") + ": before status.startTime");
    if (!(duration_s > 0)) {
        skips.add("jobs that ran 0 s");
        return std::nullopt;
    }
    TraceJob t;
    t.job = std::move(*job);
    t.duration_s = duration_s;
    return std::pair(*created, std::move(t));
}

HistoryRead read_kubectl_items(std::string_view text, const std::string& origin,
                               const HistoryOptions& options) {
    const KubectlItems list = parse_kubectl_items(text, origin);
    Skips skips;
    std::vector<std::pair<double, TraceJob>> jobs;
    size_t read = 0;
    std::set<std::string> seen;  // namespace/name: each Job once (two lists joined by hand)
    for (size_t i = 0; i < list.items.size(); ++i) {
        const KubectlJob item(list.items[i], origin, list, i);
        const std::string key = item.string_at({"metadata", "namespace"}, false).value_or("") +
                                "/" + *item.string_at({"metadata", "name"}, true);
        if (!seen.insert(key).second) {
            skips.add("Jobs listed twice (namespace and name; the first kept)", key);
            continue;
        }
        ++read;
        if (std::optional<std::pair<double, TraceJob>> job = read_kubectl_job(item, options, skips))
            jobs.push_back(std::move(*job));
    }
    return finish(std::move(jobs), origin, "kubectl " + origin, skips, read);
}

}  // namespace

HistoryRead read_kubectl_jobs(std::string_view text, const std::string& origin,
                              const HistoryOptions& options) {
    user_text::check_text(text, origin);
    try {
        return read_kubectl_items(text, origin, options);
    } catch (const json::exception& e) {  // a field of another type than a Job's ("kind": 3)
        throw input_error(origin +
                          ": not a Job list's shape: " + user_text::foreign_message(e.what()));
    }
}

}  // namespace migscope::stream
