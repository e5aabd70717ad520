// Job profiles: the versioned JSON file, extraction from stored runs, interpolation by SMs.
#include "plan/profile.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "activity/injection.h"
#include "core/error.h"
#include "core/json_fields.h"
#include "core/statistics.h"
#include "core/text.h"
#include "core/text_file.h"
#include "partition/backend_traits.h"
#include "store/merge.h"
#include "store/store.h"
#include "telemetry/idle_baseline.h"

namespace migscope::plan {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "migscope-profiles";
constexpr int kVersion = 1;

Measured read_measured(const json& j, const std::string& path) {
    Fields f(j, path);
    Measured m;
    m.value = f.get<double>("value");
    m.reps = f.get<int>("reps");
    m.min = f.get<double>("min");
    m.max = f.get<double>("max");
    f.check_keys();
    if (m.reps < 1 || m.min > m.value || m.value > m.max)
        throw input_error(path + ": needs reps >= 1 and min <= value <= max");
    return m;
}

nlohmann::ordered_json measured_json(const Measured& m) {
    return {{"value", m.value}, {"reps", m.reps}, {"min", m.min}, {"max", m.max}};
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
}

// The catalog SMs of a partition label ("whole GPU": the model's), if known.
std::optional<unsigned> sms_of(const std::string& label, const mig::GpuModel& model) {
    if (label == kWholeGpu)
        return model.sm_count;
    const mig::Profile* p = model.find(label);
    return p ? p->sms : std::nullopt;
}

// A stored run's backend: one whose partitions plans place jobs on.
bool partition_backend(const std::string& backend) {
    return partition::plan_role_of(backend) == partition::PlanRole::kPartitions;
}

// A stored run's backend: one whose SM partitions are rounded up (the job's SMs as granted).
bool rounds_sms(const std::string& backend) {
    const partition::BackendTraits* b = partition::find_backend(backend);
    return b && b->rounds_sms;
}

// An external command profiled as fixed work: one run, timed from its launch to its end.
bool command_run(const store::JobRecord& j, const store::RunRecord& r) {
    return !j.workload && !j.command.empty() && r.mode == "work" && j.finish_s && *j.finish_s > 0;
}

bool usable_single_job(const store::RunRecord& r) {
    return r.jobs.size() == 1 && why_single_job_unused(r).empty();
}

bool usable_mix(const store::RunRecord& r) {
    if (r.interrupted || r.jobs.size() < 2 || r.mode != "duration" || !r.average_power_w ||
        !partition_backend(r.backend))
        return false;
    return std::all_of(r.jobs.begin(), r.jobs.end(), [](const store::JobRecord& j) {
        return j.status == "ok" && j.workload && stored_batch(j) && j.items_per_s;
    });
}

std::string joined(const std::set<std::string>& values) {
    std::string out;
    for (const std::string& v : values)
        out += (out.empty() ? "" : ", ") + v;
    return out;
}

// Median of each mix's measured / predicted values (throughput per job, dynamic power per run).
Correction calibrate(const ProfileSet& set, const std::vector<store::RunRecord>& runs,
                     const mig::GpuModel& model) {
    std::vector<double> throughput, power;
    for (const store::RunRecord& r : runs) {
        if (!usable_mix(r))
            continue;
        double predicted_dynamic_w = 0;
        bool complete = true;
        for (const store::JobRecord& j : r.jobs) {
            // The SMs it ran on: a green context's as granted, else its profile's.
            const auto sms = rounds_sms(r.backend) && j.sms
                                 ? std::optional<unsigned>(static_cast<unsigned>(*j.sms))
                                 : sms_of(j.partition, model);
            const JobProfile* profile = nullptr;
            for (const JobProfile& p : set.jobs) {
                if (!p.external() && p.workload == *j.workload && p.mode == j.mode &&
                    p.batch == *stored_batch(j))
                    profile = &p;
            }
            const auto e = profile && sms ? estimate(*profile, j.partition, *sms) : std::nullopt;
            if (!e) {
                complete = false;
                continue;
            }
            throughput.push_back(*j.items_per_s / e->items_per_s);
            predicted_dynamic_w += e->average_power_w - set.idle_power_w.value;
        }
        if (complete && predicted_dynamic_w > 0)
            power.push_back((*r.average_power_w - set.idle_power_w.value) / predicted_dynamic_w);
    }
    Correction c;
    if (!power.empty()) {
        c.mixes = static_cast<int>(power.size());
        c.dynamic_power = *percentile(power, 0.5);
        c.throughput = *percentile(throughput, 0.5);
    }
    return c;
}

}  // namespace

std::optional<int64_t> stored_batch(const store::JobRecord& j) {
    if (j.batch)
        return j.batch;
    // One image or sample per item: the batch is the items per step (tokens are not).
    if ((j.item_unit == "images" || j.item_unit == "samples") && j.steps > 0 && j.items > 0)
        return static_cast<int64_t>(std::llround(j.items / double(j.steps)));
    return std::nullopt;
}

std::string why_single_job_unused(const store::RunRecord& r) {
    if (r.jobs.size() != 1)
        return "";
    const store::JobRecord& j = r.jobs[0];
    if (r.interrupted)
        return "interrupted";
    if (j.status != "ok")
        return "its job ended " + j.status;
    if (!r.average_power_w)
        return "no board power measured";
    if (partition::plan_role_of(r.backend) == partition::PlanRole::kNone)
        return "backend " + r.backend + " has no partitions the planner models";
    if (command_run(j, r))
        return "";
    if (!j.workload)
        return "no workload recorded";
    if (!stored_batch(j))
        return "no batch recorded, and its items (" + j.item_unit.value_or("no unit") +
               ") do not give it: profile it with an explicit batch (" + *j.workload + ":BATCH)";
    if (!j.items_per_s)
        return "no throughput measured";
    return "";
}

Measured measured_of(std::vector<double> values) {
    if (values.empty())
        throw input_error("no measured values");
    Measured m;
    m.value = *percentile(values, 0.5);
    m.reps = static_cast<int>(values.size());
    m.min = *std::min_element(values.begin(), values.end());
    m.max = *std::max_element(values.begin(), values.end());
    return m;
}

std::string JobProfile::label() const {
    return external() ? name : workload + ":" + mode + ":" + std::to_string(batch);
}

const JobProfile& ProfileSet::require_command(const std::string& name,
                                              const std::vector<std::string>& command) const {
    std::set<std::string> commands;
    for (const JobProfile& p : jobs) {
        if (!p.external())
            continue;
        commands.insert(p.name);
        if (p.name != name)
            continue;
        if (p.command != command) {
            throw input_error("job '" + name + "': profiled as `" + text::join(p.command, " ") +
                              "`, now `" + text::join(command, " ") +
                              "`: its work may differ (profile it again with `migscope profile "
                              "--jobs-file`)");
        }
        return p;
    }
    throw input_error("job '" + name + "': no profile of a command by that name on " + gpu_model +
                      (commands.empty() ? "" : "; profiled commands: " + joined(commands)) +
                      " (measure it with `migscope profile --jobs-file FILE --backend mps`)");
}

const JobProfile& ProfileSet::require(const std::string& who, const std::string& workload,
                                      const std::string& mode, std::optional<int64_t> batch) const {
    std::vector<const JobProfile*> same;
    std::set<std::string> workloads;
    for (const JobProfile& p : jobs) {
        if (p.external())
            continue;
        workloads.insert(p.workload + ":" + p.mode);
        if (p.workload == workload && p.mode == mode)
            same.push_back(&p);
    }
    if (same.empty()) {
        std::vector<std::string> names;
        for (const JobProfile& p : jobs) {
            if (!p.external())
                names.push_back(p.workload);
        }
        throw input_error("job '" + who + "': no profile for workload '" + workload + "' (" + mode +
                          ") on " + gpu_model + text::did_you_mean(workload, names) +
                          "; profiled: " + joined(workloads) +
                          " (measure it with `migscope profile`)");
    }
    std::string batches;
    for (const JobProfile* p : same) {
        if (batch && p->batch == *batch)
            return *p;
        batches += (batches.empty() ? "" : ", ") + std::to_string(p->batch);
    }
    if (!batch && same.size() == 1)
        return *same.front();
    throw input_error("job '" + who + "': " + workload + " (" + mode + ") is profiled at batch " +
                      batches + (batch ? ", not " + std::to_string(*batch) : "; give one") +
                      " (measure it with `migscope profile`)");
}

namespace {

// The file's "provenance" object: where and how the profiles were measured.
ProfileProvenance read_provenance(const json& node) {
    Fields prov(node, "provenance");
    ProfileProvenance p;
    p.created_at = prov.get<std::string>("created_at");
    p.measured_from = prov.get<std::string>("measured_from");
    p.measured_to = prov.get<std::string>("measured_to");
    p.gpu = prov.get<std::string>("gpu");
    p.driver = prov.get<std::string>("driver");
    p.migscope = prov.get<std::string>("migscope");
    p.command = prov.get<std::string>("command");
    p.source = prov.get<std::string>("source");
    p.steps = prov.optional<std::string>("steps").value_or("");
    p.cuda_injection = prov.optional<std::string>("cuda_injection").value_or("");
    prov.check_keys();
    return p;
}

// One partition size of a job's profile (at `path`); its items_per_s and sms must be positive.
PartitionProfile read_partition_profile(const json& node, const std::string& path) {
    Fields pf(node, path);
    PartitionProfile pp;
    pp.partition = pf.get<std::string>("partition");
    pp.sms = pf.get<unsigned>("sms");
    pp.items_per_s = read_measured(pf.child("items_per_s"), path + ".items_per_s");
    pp.average_power_w = read_measured(pf.child("average_power_w"), path + ".average_power_w");
    pp.window_s = pf.get<double>("window_s");
    if (pf.has("startup_s"))
        pp.startup_s = read_measured(pf.child("startup_s"), path + ".startup_s");
    if (pf.has("between_steps_share")) {
        pp.between_steps_share =
            read_measured(pf.child("between_steps_share"), path + ".between_steps_share");
    }
    if (pf.has("memory_utilization_pct")) {
        pp.memory_utilization_pct =
            read_measured(pf.child("memory_utilization_pct"), path + ".memory_utilization_pct");
    }
    pf.check_keys();
    if (pp.items_per_s.value <= 0 || pp.sms == 0)
        throw input_error(path + ": items_per_s and sms must be positive");
    return pp;
}

// One job's profile (at `path`): a built-in workload's (workload, mode, batch) or an external
// command's (name, command), its unit, and its partition sizes, fewest SMs first.
JobProfile read_job_profile(const json& node, const std::string& path) {
    Fields f(node, path);
    JobProfile job;
    if (f.optional<std::string>("name")) {  // an external command
        job.name = f.get<std::string>("name");
        const json& argv = f.child("command");
        if (!argv.is_array() || argv.empty())
            throw input_error(path + ".command: expected a non-empty array of strings");
        for (const json& a : argv) {
            if (!a.is_string())
                throw input_error(path + ".command: expected a non-empty array of strings");
            job.command.push_back(a.get<std::string>());
        }
        if (job.name.empty())
            throw input_error(path + ".name: empty");
    } else {
        job.workload = f.get<std::string>("workload");
        job.mode = f.get<std::string>("mode");
        job.batch = f.get<int64_t>("batch");
    }
    job.backend = f.optional<std::string>("backend").value_or("");
    if (!job.backend.empty() && !partition_backend(job.backend))
        throw input_error(path + ".backend: \"" + job.backend + "\" is not " +
                          partition::backend_names_text(partition::plans_partitions, "or"));
    job.item_unit = f.get<std::string>("item_unit");
    job.items_per_step = f.get<double>("items_per_step");
    if (job.items_per_step <= 0)
        throw input_error(path + ".items_per_step: must be positive");
    job.peak_memory_gib = f.optional<double>("peak_memory_gib");
    const json& parts = f.child("partitions");
    if (!parts.is_array() || parts.empty())
        throw input_error(path + ".partitions: expected a non-empty array");
    for (size_t k = 0; k < parts.size(); ++k) {
        job.partitions.push_back(
            read_partition_profile(parts[k], path + ".partitions[" + std::to_string(k) + "]"));
    }
    std::sort(job.partitions.begin(), job.partitions.end(),
              [](const auto& a, const auto& b) { return a.sms < b.sms; });
    f.check_keys();
    return job;
}

}  // namespace

ProfileSet parse_profiles_json(std::string_view text, const std::string& origin) {
    const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        throw input_error(origin + ": not valid JSON");
    ProfileSet set;
    try {
        Fields top(doc, "");
        top.require_format(kFormat, kVersion);
        set.gpu_model = top.get<std::string>("gpu_model");
        set.provenance = read_provenance(top.child("provenance"));
        set.idle_power_w = read_measured(top.child("idle_power_w"), "idle_power_w");
        set.idle_state = top.optional<std::string>("idle_state").value_or("");
        set.power_limit_w = top.optional<double>("power_limit_w");
        if (set.power_limit_w && !(*set.power_limit_w > 0))
            throw input_error("power_limit_w: must be positive watts");
        if (!set.idle_state.empty() && !telemetry::parse_idle_state(set.idle_state))
            throw input_error("idle_state: \"" + set.idle_state +
                              "\" is not clocks-up, deep or no-clock");
        Fields corr(top.child("correction"), "correction");
        set.correction.throughput = corr.get<double>("throughput");
        set.correction.dynamic_power = corr.get<double>("dynamic_power");
        set.correction.mixes = corr.get<int>("mixes");
        corr.check_keys();
        const json& jobs = top.array("jobs");
        for (size_t i = 0; i < jobs.size(); ++i)
            set.jobs.push_back(read_job_profile(jobs[i], "jobs[" + std::to_string(i) + "]"));
        top.check_keys();
    } catch (const Error& e) {
        throw input_error(origin + ": " + e.what());
    }
    return set;
}

ProfileSet read_profiles_file(const std::string& path) {
    return parse_profiles_json(read_text_file(path, "profiles"), path);
}

std::string write_profiles_json(const ProfileSet& set) {
    const ProfileProvenance& p = set.provenance;
    using ojson = nlohmann::ordered_json;
    ojson doc = {{"format", kFormat},
                 {"version", kVersion},
                 {"gpu_model", set.gpu_model},
                 {"provenance",
                  {{"created_at", p.created_at},
                   {"measured_from", p.measured_from},
                   {"measured_to", p.measured_to},
                   {"gpu", p.gpu},
                   {"driver", p.driver},
                   {"migscope", p.migscope},
                   {"command", p.command},
                   {"source", p.source},
                   {"steps", p.steps},
                   {"cuda_injection", p.cuda_injection}}},
                 {"idle_power_w", measured_json(set.idle_power_w)},
                 {"idle_state", set.idle_state},
                 {"power_limit_w", set.power_limit_w ? ojson(*set.power_limit_w) : ojson(nullptr)},
                 {"correction",
                  {{"throughput", set.correction.throughput},
                   {"dynamic_power", set.correction.dynamic_power},
                   {"mixes", set.correction.mixes}}},
                 {"jobs", ojson::array()}};
    for (const JobProfile& j : set.jobs) {
        ojson parts = ojson::array();
        for (const PartitionProfile& pp : j.partitions) {
            parts.push_back({{"partition", pp.partition},
                             {"sms", pp.sms},
                             {"items_per_s", measured_json(pp.items_per_s)},
                             {"average_power_w", measured_json(pp.average_power_w)},
                             {"window_s", pp.window_s}});
            if (pp.startup_s)
                parts.back()["startup_s"] = measured_json(*pp.startup_s);
            if (pp.between_steps_share)
                parts.back()["between_steps_share"] = measured_json(*pp.between_steps_share);
            if (pp.memory_utilization_pct)
                parts.back()["memory_utilization_pct"] = measured_json(*pp.memory_utilization_pct);
        }
        ojson job = j.external()
                        ? ojson{{"name", j.name}, {"command", j.command}}
                        : ojson{{"workload", j.workload}, {"mode", j.mode}, {"batch", j.batch}};
        job["backend"] = j.backend;
        job["item_unit"] = j.item_unit;
        job["items_per_step"] = j.items_per_step;
        job["peak_memory_gib"] = j.peak_memory_gib ? ojson(*j.peak_memory_gib) : ojson(nullptr);
        job["partitions"] = parts;
        doc["jobs"].push_back(job);
    }
    return doc.dump(2) + "\n";
}

bool used_for_profiles(const store::RunRecord& run) {
    return usable_single_job(run) || usable_mix(run);
}

namespace {

// One partition size's values over a job's single-job runs.
struct PartitionValues {
    std::vector<double> items_per_s, power_w, window_s;
    std::vector<double> startup_s;    // a command's runs that reported steps
    std::vector<double> memory_pct;   // the runs that recorded it
    std::vector<double> between_steps;  // built-in jobs: span / busy - 1, where recorded
    std::vector<double> granted_sms;  // green contexts: the SMs the worker was granted
};

// One job's values over its single-job runs: what its profile is made of.
struct JobValues {
    std::string item_unit;
    std::vector<double> items_per_step;
    std::optional<double> peak_memory_gib;
    std::map<std::string, PartitionValues> partitions;
    std::set<std::string> step_modes;             // more than one: refused
    std::set<std::string> backends;               // of its partition sizes; more than one: refused
    std::set<std::vector<std::string>> commands;  // external: more than one: refused
};

// (workload, mode, batch), or for a command ("", "", 0, name)
using JobKey = std::tuple<std::string, std::string, int64_t, std::string>;

// What the runs used for profiles hold: each job's values, the idle power, the provenance.
struct RunValues {
    std::map<JobKey, JobValues> by_job;
    std::map<std::string, std::vector<double>> idle_by_state;  // "" for runs without a state
    std::set<std::string> gpus, drivers, builds, step_modes;
    // The CUDA injection the runs' workers loaded ("unknown": stored before schema 8); the
    // activity probe beside anything else: refused.
    std::set<std::string> injections;
    std::set<double> limits_w;  // the boards' power limits, where runs recorded them
    std::set<int64_t> ids;
    std::string first, last;
};

// Adds a usable single-job run's job to its job's values, unless the model does not know its
// partition.
void add_single_job(const store::RunRecord& r, const mig::GpuModel& model,
                    std::map<JobKey, JobValues>& by_job) {
    const store::JobRecord& j = r.jobs[0];
    if (!sms_of(j.partition, model))
        return;  // a partition the model does not know (cores of a CPU run)
    const bool command = !j.workload;
    JobValues& jv = by_job[command ? JobKey(std::string(), std::string(), int64_t{0}, j.name)
                                   : JobKey(*j.workload, j.mode, *stored_batch(j), std::string())];
    jv.step_modes.insert(store::step_mode_of(j));
    if (partition_backend(r.backend))
        jv.backends.insert(r.backend);
    if (command) {
        jv.commands.insert(j.command);
        jv.item_unit = "runs";
        jv.items_per_step.push_back(1);
    } else {
        jv.item_unit = j.item_unit.value_or("items");
        if (j.steps > 0)
            jv.items_per_step.push_back(j.items / double(j.steps));
    }
    if (j.peak_memory_bytes) {
        const double gib = static_cast<double>(*j.peak_memory_bytes) / (1024.0 * 1024 * 1024);
        jv.peak_memory_gib = std::max(jv.peak_memory_gib.value_or(0.0), gib);
    }
    // An instance of every compute slice (7g.141gb) is the whole GPU.
    const mig::Profile* full = model.find(j.partition);
    const bool whole = full && full->compute_slices == model.compute_slices;
    PartitionValues& v = jv.partitions[whole ? std::string(kWholeGpu) : j.partition];
    v.items_per_s.push_back(command ? 1 / *j.finish_s : *j.items_per_s);
    if (command && j.steps > 0 && j.busy_s > 0)  // it reported steps: the rest is start-up
        v.startup_s.push_back(std::max(0.0, *j.finish_s - j.busy_s));
    v.power_w.push_back(*r.average_power_w);
    v.window_s.push_back(r.window_s);
    if (j.memory_utilization_pct)
        v.memory_pct.push_back(*j.memory_utilization_pct);
    if (!command && j.span_s && j.busy_s > 0)
        v.between_steps.push_back(std::max(0.0, *j.span_s / j.busy_s - 1));
    if (rounds_sms(r.backend) && j.sms)
        v.granted_sms.push_back(double(*j.sms));
}

RunValues collect_run_values(const std::vector<store::RunRecord>& runs,
                             const mig::GpuModel& model) {
    RunValues out;
    for (const store::RunRecord& r : runs) {
        if (!used_for_profiles(r))
            continue;
        if (r.idle_power_w)
            out.idle_by_state[r.idle_state.value_or("")].push_back(*r.idle_power_w);
        if (r.provenance.gpu_name && mig::names_other_model(*r.provenance.gpu_name, model))
            throw input_error("run " + std::to_string(r.id) + " was measured on " +
                              *r.provenance.gpu_name + ", not on " + model.key +
                              " (--gpu-model): export each GPU model's stores with its own");
        if (r.provenance.gpu_name)
            out.gpus.insert(*r.provenance.gpu_name);
        if (r.provenance.driver_version)
            out.drivers.insert(*r.provenance.driver_version);
        if (r.provenance.power_limit_w)
            out.limits_w.insert(*r.provenance.power_limit_w);
        out.injections.insert(r.provenance.cuda_injection.value_or("unknown"));
        out.builds.insert(r.provenance.migscope_version + " (" + r.provenance.migscope_commit +
                          ")");
        out.ids.insert(r.id);
        for (const store::JobRecord& j : r.jobs) {
            if (j.workload)  // a command has no step mode of migscope's
                out.step_modes.insert(store::step_mode_of(j));
        }
        out.first = out.first.empty() ? r.started_at : std::min(out.first, r.started_at);
        out.last = std::max(out.last, r.started_at);
        if (usable_single_job(r))
            add_single_job(r, model, out.by_job);
    }
    return out;
}

// Refuses runs no profile can be made of: no usable single-job run, no idle power, a job's runs
// of more than one step mode, backend or command, boards under different power limits.
void check_profilable(const RunValues& values) {
    if (values.by_job.empty()) {
        throw input_error(
            "no usable single-job runs (green, mps, mig or sequential, one job, status ok) to "
            "profile from");
    }
    if (values.idle_by_state.empty())
        throw input_error("no idle power in the runs (run them with --idle-probe above 0)");
    // The activity probe slows a job and lowers its power (resnet18:32 alone on an H100: 6 %
    // slower, 9.6 % less power with kernel records): one profile must not mix runs with and
    // without it.
    if (values.injections.size() > 1 &&
        std::any_of(values.injections.begin(), values.injections.end(),
                    [](const std::string& i) { return activity::is_activity_probe(i); })) {
        throw input_error("the runs mix CUDA injections (" + joined(values.injections) +
                          "): the activity probe slows a job and lowers its power; export "
                          "stores made one way (docs/exporter.md)");
    }
    // A CUDA graph speeds a small-batch job on the whole GPU by up to 2.5x: one profile must not
    // take the median of both kinds.
    for (const auto& [key, jv] : values.by_job) {
        const auto& [workload, mode, batch, name] = key;
        const std::string who =
            name.empty() ? workload + ":" + mode + ":" + std::to_string(batch) : "'" + name + "'";
        if (jv.step_modes.size() > 1) {
            throw input_error("the runs of " + who + " mix step modes (" + joined(jv.step_modes) +
                              "): export stores of one kind (migscope run --no-cuda-graph "
                              "measures eager steps)");
        }
        if (jv.backends.size() > 1) {
            throw input_error("the runs of " + who + " were made on more than one backend (" +
                              joined(jv.backends) +
                              "): export stores of one kind, so that a profile says what its "
                              "partitions were");
        }
        if (jv.commands.size() > 1) {
            throw input_error("the runs of " + who +
                              " ran different commands: export stores of one kind");
        }
    }
    if (values.limits_w.size() > 1) {
        std::string listed;
        for (double w : values.limits_w)
            listed += (listed.empty() ? "" : ", ") + std::to_string(std::lround(w));
        throw input_error("the runs were made under different board power limits (" + listed +
                          " W): export stores of one limit, which the planner models");
    }
}

ProfileProvenance provenance_of(const RunValues& values) {
    ProfileProvenance p;
    p.created_at = utc_now();
    p.measured_from = values.first;
    p.measured_to = values.last;
    p.gpu = joined(values.gpus);
    p.driver = joined(values.drivers);
    p.migscope = joined(values.builds);
    p.steps = joined(values.step_modes);
    p.cuda_injection = joined(values.injections);
    p.source = "runs";
    for (int64_t id : values.ids)
        p.source += (id == *values.ids.begin() ? " " : ", ") + std::to_string(id);
    return p;
}

// A job's profile from its values: medians and spreads per partition size, smallest first.
JobProfile job_profile_of(const JobKey& key, const JobValues& jv, const mig::GpuModel& model) {
    JobProfile job;
    std::tie(job.workload, job.mode, job.batch, job.name) = key;
    if (!jv.commands.empty())
        job.command = *jv.commands.begin();
    if (!jv.backends.empty())
        job.backend = *jv.backends.begin();
    job.item_unit = jv.item_unit;
    job.items_per_step =
        jv.items_per_step.empty() ? double(job.batch) : *percentile(jv.items_per_step, 0.5);
    job.peak_memory_gib = jv.peak_memory_gib;
    for (const auto& [label, v] : jv.partitions) {
        PartitionProfile pp;
        pp.partition = label;
        // A green context may get more than its profile's SMs (the first split of a layout is
        // rounded up): what it ran on is what it measured.
        pp.sms = v.granted_sms.empty()
                     ? *sms_of(label, model)
                     : static_cast<unsigned>(std::lround(*percentile(v.granted_sms, 0.5)));
        pp.items_per_s = measured_of(v.items_per_s);
        pp.average_power_w = measured_of(v.power_w);
        pp.window_s = *percentile(v.window_s, 0.5);
        if (!v.startup_s.empty() && v.startup_s.size() == v.items_per_s.size())
            pp.startup_s = measured_of(v.startup_s);
        if (!v.memory_pct.empty())
            pp.memory_utilization_pct = measured_of(v.memory_pct);
        if (!v.between_steps.empty())
            pp.between_steps_share = measured_of(v.between_steps);
        job.partitions.push_back(pp);
    }
    std::sort(job.partitions.begin(), job.partitions.end(),
              [](const auto& a, const auto& b) { return a.sms < b.sms; });
    return job;
}

}  // namespace

ProfileSet profiles_from_runs(const std::vector<store::RunRecord>& runs,
                              const mig::GpuModel& model) {
    const RunValues values = collect_run_values(runs, model);
    check_profilable(values);
    ProfileSet set;
    set.gpu_model = model.key;
    if (!values.limits_w.empty())
        set.power_limit_w = *values.limits_w.begin();
    for (const char* state : {"clocks-up", "no-clock", "deep", ""}) {
        if (const auto it = values.idle_by_state.find(state); it != values.idle_by_state.end()) {
            set.idle_power_w = measured_of(it->second);
            set.idle_state = state;
            break;
        }
    }
    set.provenance = provenance_of(values);
    for (const auto& [key, jv] : values.by_job)
        set.jobs.push_back(job_profile_of(key, jv, model));
    set.correction = calibrate(set, runs, model);
    return set;
}

namespace {

// A command's start-up over every size it was measured on (Estimate); empty when none has it.
std::optional<double> pooled_startup_s(const JobProfile& job, Spread spread) {
    std::vector<double> values;
    for (const PartitionProfile& p : job.partitions) {
        if (!p.startup_s)
            continue;
        values.push_back(spread == Spread::kMedian    ? p.startup_s->value
                         : spread == Spread::kFastest ? p.startup_s->min
                                                      : p.startup_s->max);
    }
    if (values.empty())
        return std::nullopt;
    if (spread == Spread::kFastest)
        return *std::min_element(values.begin(), values.end());
    if (spread == Spread::kSlowest)
        return *std::max_element(values.begin(), values.end());
    return *percentile(values, 0.5);
}

}  // namespace

std::optional<Estimate> estimate(const JobProfile& job, std::string_view partition, unsigned sms,
                                 Spread spread) {
    const auto pick = [spread](const Measured& m, bool more_is_faster) {
        if (spread == Spread::kMedian)
            return m.value;
        return (spread == Spread::kFastest) == more_is_faster ? m.max : m.min;
    };
    const std::optional<double> startup_s = pooled_startup_s(job, spread);
    const auto measured = [&](const PartitionProfile& p) {
        std::optional<double> memory_pct;
        if (p.memory_utilization_pct)
            memory_pct = p.memory_utilization_pct->value;
        // Over the steps' span: the time between them is the job's too.
        double items_per_s =
            pick(p.items_per_s, true) /
            (1 + (p.between_steps_share ? pick(*p.between_steps_share, false) : 0));
        if (p.startup_s && startup_s)  // its run less its own start-up, plus the job's
            items_per_s =
                1 / std::max(1e-9, 1 / items_per_s - pick(*p.startup_s, false) + *startup_s);
        return Estimate{items_per_s, p.average_power_w.value,
                        p.startup_s ? startup_s.value_or(0) : 0.0, false, memory_pct};
    };
    const PartitionProfile* below = nullptr;
    const PartitionProfile* above = nullptr;
    for (const PartitionProfile& p : job.partitions) {
        if (p.partition == partition && p.sms == sms)
            return measured(p);
    }
    for (const PartitionProfile& p : job.partitions) {
        if (p.sms == sms)  // another size measured on the same SMs (a green context's granted)
            return measured(p);
    }
    for (const PartitionProfile& p : job.partitions) {
        if (p.sms <= sms && (!below || p.sms >= below->sms))
            below = &p;
        if (p.sms >= sms && !above)
            above = &p;
    }
    if (!below || !above)
        return std::nullopt;
    const double f =
        above->sms == below->sms ? 0.0 : double(sms - below->sms) / double(above->sms - below->sms);
    auto mix = [f](double a, double b) { return a + f * (b - a); };
    const Estimate b = measured(*below), a = measured(*above);
    std::optional<double> memory_pct;
    if (b.memory_utilization_pct && a.memory_utilization_pct)
        memory_pct = mix(*b.memory_utilization_pct, *a.memory_utilization_pct);
    return Estimate{mix(b.items_per_s, a.items_per_s), mix(b.average_power_w, a.average_power_w),
                    mix(b.startup_s, a.startup_s), true, memory_pct};
}

ProfileSet profiles_from_stores(const std::vector<std::string>& db_paths,
                                const mig::GpuModel& model, std::vector<std::string>* unused) {
    std::vector<store::RunRecord> runs;
    // The runs of the stores before: a store given twice, or a merged copy, counts each run once.
    // (Within one store, runs of a second apart may share an identity: they are all kept.)
    std::set<store::RunIdentity> before;
    std::string command = "migscope profile export", source;
    for (const std::string& path : db_paths) {
        store::Store db = store::Store::open(path, store::OpenMode::kRead);
        std::string ids;
        std::set<store::RunIdentity> here;
        for (store::RunRecord& r : db.list_runs()) {
            const store::RunIdentity identity = store::run_identity(r);
            here.insert(identity);
            if (before.count(identity)) {
                if (unused)
                    unused->push_back(path + ": run " + std::to_string(r.id) +
                                      ": the same run as in a store before it, counted once");
                continue;
            }
            if (used_for_profiles(r))
                ids += (ids.empty() ? "runs " : ", ") + std::to_string(r.id);
            else if (const std::string why = why_single_job_unused(r); unused && !why.empty())
                unused->push_back(path + ": run " + std::to_string(r.id) + " (" +
                                  r.jobs[0].name + "): " + why);
            runs.push_back(std::move(r));
        }
        before.insert(here.begin(), here.end());
        command += " --db " + path;
        source += (source.empty() ? "" : "; ") + path + ": " + (ids.empty() ? "none" : ids);
    }
    ProfileSet set = profiles_from_runs(runs, model);
    set.provenance.command = command + " --gpu-model " + model.key;
    set.provenance.source = source;
    return set;
}

}  // namespace migscope::plan
