// Residuals of the model on stored runs: rebuild each run as a plan, predict it, compare.
#include "plan/residuals.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "mig/layout.h"
#include "partition/backend_traits.h"
#include "plan/objective.h"
#include "plan/verify.h"
#include "store/store.h"

namespace migscope::plan {
namespace {

// A stored run's backend: one whose partitions plans place jobs on.
bool partition_backend(const std::string& backend) {
    return partition::plan_role_of(backend) == partition::PlanRole::kPartitions;
}

bool baseline_backend(const std::string& backend) {
    return partition::plan_role_of(backend) == partition::PlanRole::kBaseline;
}

// The queue assignment a `plan --verify` label names (" --assign 0,0,1"): the layout term of
// each job; empty when the label names none.
std::optional<std::vector<size_t>> assign_of(const std::string& label) {
    const std::string key = " --assign ";
    const size_t at = label.find(key);
    if (at == std::string::npos)
        return std::nullopt;
    std::vector<size_t> out;
    size_t i = at + key.size();
    while (i < label.size() && label[i] != ' ') {
        size_t end = i;
        while (end < label.size() && std::isdigit(static_cast<unsigned char>(label[end])))
            ++end;
        if (end == i)
            return std::nullopt;
        out.push_back(std::stoul(label.substr(i, end - i)));
        i = end < label.size() && label[end] == ',' ? end + 1 : end;
    }
    return out;
}

// A stored run's jobs as requests: a built-in workload's measured steps as its work (a repeated
// name made unique by its index), a command as itself.
std::vector<JobRequest> requests_of(const store::RunRecord& r) {
    std::vector<JobRequest> requests;
    std::set<std::string> names;
    for (size_t i = 0; i < r.jobs.size(); ++i) {
        const store::JobRecord& j = r.jobs[i];
        JobRequest q;
        q.name = j.name;
        if (j.workload) {
            q.workload = *j.workload;
            q.mode = j.mode;
            q.batch = stored_batch(j);
            if (!q.batch)
                throw input_error("job '" + j.name + "': its batch was not stored");
            q.work_steps = std::max<int64_t>(1, j.steps);
            if (names.count(q.name))
                q.name += "#" + std::to_string(i);
        } else {
            q.command = j.command;
        }
        names.insert(q.name);
        requests.push_back(std::move(q));
    }
    return requests;
}

// Each layout term's instance in the placed (largest first) layout.
std::vector<size_t> instances_of_terms(const std::vector<mig::LayoutTerm>& terms,
                                       const mig::Layout& layout) {
    std::vector<size_t> instance_of(terms.size());
    std::vector<char> taken(layout.instances.size(), 0);
    for (size_t t = 0; t < terms.size(); ++t) {
        for (size_t k = 0; k < taken.size(); ++k) {
            const mig::Instance& in = layout.instances[k];
            if (!taken[k] && in.profile == terms[t].profile &&
                (!terms[t].start || *terms[t].start == in.start)) {
                taken[k] = 1;
                instance_of[t] = k;
                break;
            }
        }
    }
    return instance_of;
}

// Each job's layout term: as its label's --assign names them, else one job per term, each on the
// first free term of its partition's profile.
std::vector<size_t> terms_of_jobs(const store::RunRecord& r,
                                  const std::vector<mig::LayoutTerm>& terms) {
    if (const auto assign = assign_of(r.label)) {
        if (assign->size() != r.jobs.size())
            throw input_error("its label's --assign names " + std::to_string(assign->size()) +
                              " partitions for " + std::to_string(r.jobs.size()) + " jobs");
        return *assign;
    }
    std::vector<size_t> term_of(r.jobs.size());
    std::vector<char> used(terms.size(), 0);
    for (size_t i = 0; i < r.jobs.size(); ++i) {
        size_t t = 0;
        while (t < terms.size() && (used[t] || terms[t].profile != r.jobs[i].partition))
            ++t;
        if (t == terms.size())
            throw input_error("job '" + r.jobs[i].name + "' on " + r.jobs[i].partition +
                              ": no free partition of the layout (queues not stored)");
        used[t] = 1;
        term_of[i] = t;
    }
    return term_of;
}

// A stored run as a plan of one GPU: its jobs as requests (their measured steps as the work),
// its layout placed as the runner placed it, each job on its term (a queue where a label's
// --assign puts several on one), or the whole GPU one after another.
struct Rebuilt {
    Problem problem;
    GpuPlan gpu;
};

Rebuilt rebuild(const store::RunRecord& r, const ProfileSet& profiles, const mig::GpuModel& model) {
    const std::vector<JobRequest> requests = requests_of(r);
    Rebuilt out{make_problem(requests, profiles, model, {}, partition_kind(r.backend),
                             WholeGpuProfile::kOptional),
                {}};
    for (const JobModel& j : out.problem.jobs) {  // partitions of one kind: MPS caps, green fixes
        if (partition_backend(r.backend) && !j.profile->backend.empty() &&
            j.profile->backend != r.backend)
            throw input_error("job '" + j.request.name + "' was profiled on " +
                              j.profile->backend + " partitions, the run was " + r.backend);
    }
    if (!partition_backend(r.backend)) {  // sequential: the whole GPU, in the run's order
        out.gpu.queues.assign(1, {});
        for (size_t i = 0; i < r.jobs.size(); ++i)
            out.gpu.queues[0].push_back(i);
        return out;
    }
    if (!r.layout)
        throw input_error("no layout stored");
    const std::vector<mig::LayoutTerm> terms = mig::parse_layout(*r.layout, model);
    const mig::LayoutCheck check = mig::check_layout(terms, model);
    if (!check.layout)
        throw input_error("layout " + *r.layout + ": " + check.reason);
    const std::vector<size_t> instance_of = instances_of_terms(terms, *check.layout);
    const std::vector<size_t> term_of = terms_of_jobs(r, terms);
    out.gpu.layout = *check.layout;
    out.gpu.queues.assign(check.layout->instances.size(), {});
    for (size_t i = 0; i < r.jobs.size(); ++i) {
        if (term_of[i] >= terms.size())
            throw input_error("its label's --assign names a partition the layout lacks");
        out.gpu.queues[instance_of[term_of[i]]].push_back(i);
    }
    return out;
}

std::string subject_of(const store::JobRecord& j) {
    return (j.workload ? *j.workload + ":" + j.mode + ":" +
                             std::to_string(stored_batch(j).value_or(0))
                       : j.name) +
           " on " + j.partition;
}

void add(StoreResiduals& out, ResidualKind kind, const std::string& group, double ratio,
         const std::string& source, const std::string& subject, const std::string& backend) {
    if (ratio > 0 && std::isfinite(ratio))
        out.residuals.push_back({kind, group, ratio, source, subject, backend});
}

// A steady window of several jobs on partitions, each job in its rest: its speeds against
// predict_steady_window, and the board's dynamic power for that work.
void steady_mix(const store::RunRecord& r, const Rebuilt& b, const std::string& source,
                StoreResiduals& out) {
    for (const auto& q : b.gpu.queues) {
        if (q.size() > 1)
            throw input_error("a steady window with a queue");
    }
    const SteadyWindow w = predict_steady_window(b.problem, b.gpu);
    double weighted = 0, weights = 0;  // the jobs' speed ratios, weighted by dynamic power
    for (size_t i = 0; i < r.jobs.size(); ++i) {
        const double ratio = *r.jobs[i].items_per_s / w.items_per_s[i];
        add(out, ResidualKind::kSpeed, speed_group(w.situation[i]), ratio, source,
            subject_of(r.jobs[i]), r.backend);
        size_t k = 0;  // the job's partition, for its dynamic power alone
        while (std::find(b.gpu.queues[k].begin(), b.gpu.queues[k].end(), i) ==
               b.gpu.queues[k].end())
            ++k;
        const size_t size = b.problem.size_index(b.gpu.layout->instances[k].profile);
        const double d = std::max(0.0, b.problem.jobs[i].on[size].power_w - b.problem.idle_power_w);
        weighted += d * ratio;
        weights += d;
    }
    const double measured_w = *r.average_power_w - b.problem.idle_power_w;
    if (weights > 0 && weighted > 0 && w.dynamic_w > 0 && measured_w > 0) {
        add(out, ResidualKind::kDynamicEnergy, energy_group(w.mix, w.clock < 1),
            measured_w / w.dynamic_w / (weighted / weights), source, *r.layout, r.backend);
    }
}

// Every job alone on the whole GPU for a window of its own.
void sequential_windows(const store::RunRecord& r, const Rebuilt& b, const std::string& source,
                        StoreResiduals& out) {
    const size_t whole = b.problem.whole();
    double predicted_j = 0;
    for (size_t i = 0; i < r.jobs.size(); ++i) {
        const JobOnSize& on = b.problem.jobs[i].on[whole];
        if (!on.usable)
            throw input_error("job '" + r.jobs[i].name + "': no whole-GPU profile");
        const double speed = b.problem.jobs[i].items / on.time_s;
        add(out, ResidualKind::kSpeed, "alone", *r.jobs[i].items_per_s / speed, source,
            subject_of(r.jobs[i]), r.backend);
        predicted_j += std::max(0.0, on.power_w - b.problem.idle_power_w) * r.jobs[i].items / speed;
    }
    if (r.counter_energy_j && predicted_j > 0)
        add(out, ResidualKind::kDynamicEnergy, "alone",
            (*r.counter_energy_j - b.problem.idle_power_w * r.window_s) / predicted_j, source,
            "whole GPU", r.backend);
}

// A fixed-work run's scores per objective (objectives() order), measured as `plan --verify`
// measures them and predicted, to pair with a sequential baseline of the same jobs and work.
struct FixedWorkScores {
    std::string jobs;  // its jobs and their steps, sorted: what a baseline must match
    bool sequential = false;
    int64_t id = 0;
    std::string layout, backend;
    std::vector<std::optional<double>> measured;
    std::vector<double> predicted;
    size_t partitions_busy = 0;  // partitions with jobs (gain_group)
};

std::string jobs_signature(const store::RunRecord& r) {
    std::vector<std::string> jobs;
    for (const store::JobRecord& j : r.jobs) {
        const std::string subject = subject_of(j);  // "resnet18:train:32 on 3g.71gb"
        jobs.push_back(subject.substr(0, subject.rfind(" on ")) + " x" + std::to_string(j.steps));
    }
    std::sort(jobs.begin(), jobs.end());
    std::string out;
    for (const std::string& j : jobs)
        out += j + ";";
    return out;
}

FixedWorkScores fixed_work_scores(const store::RunRecord& r, const Rebuilt& b,
                                  const Prediction& predicted) {
    FixedWorkScores out{jobs_signature(r), !b.gpu.layout, r.id, r.layout.value_or("whole GPU"),
                        r.backend, {}, {}};
    out.partitions_busy = partitions_busy(b.gpu);
    const CandidateRun plan = candidate_run(b.problem, b.gpu);
    MeasuredRun run;  // the stored run as verify measures one (the problem's jobs are its jobs)
    run.makespan_s = r.window_s;
    run.energy_j = r.counter_energy_j;
    for (size_t job : plan.order)
        run.jobs.push_back({r.jobs[job].status, "", r.jobs[job].items_per_s, r.jobs[job].finish_s});
    for (const ObjectiveInfo& o : objectives()) {
        out.measured.push_back(measured_score(o.objective, b.problem, plan, run));
        out.predicted.push_back(score(o.objective, predicted));
    }
    return out;
}

// Each partitioned fixed-work run against the sequential baseline of the same jobs and work in
// the same store (the nearest by run id): per objective, (measured / measured) / (predicted /
// predicted) of its figure.
void gain_residuals(const std::vector<FixedWorkScores>& runs, const std::string& source,
                    StoreResiduals& out) {
    for (const FixedWorkScores& part : runs) {
        if (part.sequential)
            continue;
        const FixedWorkScores* base = nullptr;
        for (const FixedWorkScores& s : runs) {
            if (s.sequential && s.jobs == part.jobs &&
                (!base || std::llabs(s.id - part.id) < std::llabs(base->id - part.id)))
                base = &s;
        }
        if (!base)
            continue;
        for (size_t i = 0; i < objectives().size(); ++i) {
            if (!part.measured[i] || !base->measured[i])
                continue;
            const double measured = *part.measured[i] / *base->measured[i];
            const double predicted = part.predicted[i] / base->predicted[i];
            add(out, ResidualKind::kGain,
                gain_group(objectives()[i].objective, part.partitions_busy), measured / predicted,
                source + " run " + std::to_string(part.id) + " vs run " + std::to_string(base->id),
                part.layout, part.backend);
        }
    }
}

// Fixed work: each job's items/s and the run's dynamic energy against predict(); its scores for
// gain_residuals.
FixedWorkScores fixed_work(const store::RunRecord& r, const Rebuilt& b, const std::string& source,
                           StoreResiduals& out) {
    const Prediction p = predict(b.problem, {b.gpu});
    bool capped = false;
    for (size_t i = 0; i < r.jobs.size(); ++i) {
        const JobPrediction& jp = p.jobs[i];
        capped = capped || (jp.situation.mix && jp.situation.capped);
        if (r.jobs[i].workload && r.jobs[i].items_per_s && jp.items_per_s > 0)
            add(out, ResidualKind::kSpeed, speed_group(jp.situation),
                *r.jobs[i].items_per_s / jp.items_per_s, source, subject_of(r.jobs[i]),
                r.backend);
    }
    const double predicted_j = p.energy_j - b.problem.idle_power_w * p.makespan_s;
    if (r.counter_energy_j && predicted_j > 0)
        add(out, ResidualKind::kDynamicEnergy, energy_group(p.mix, capped),
            (*r.counter_energy_j - b.problem.idle_power_w * r.window_s) / predicted_j, source,
            r.layout.value_or("whole GPU"), r.backend);
    return fixed_work_scores(r, b, p);
}

}  // namespace

StoreResiduals residuals_from_runs(const std::vector<store::RunRecord>& runs,
                                   const ProfileSet& profiles, const mig::GpuModel& model,
                                   const std::string& source) {
    StoreResiduals out;
    std::vector<FixedWorkScores> fixed;
    for (const store::RunRecord& r : runs) {
        const bool ok = std::all_of(r.jobs.begin(), r.jobs.end(), [](const store::JobRecord& j) {
            return j.status == "ok" && (!j.workload || j.items_per_s);
        });
        const bool partitioned = partition_backend(r.backend);
        const bool window = r.mode == "duration", work = r.mode == "work";
        const size_t builtin = std::count_if(r.jobs.begin(), r.jobs.end(),
                                             [](const store::JobRecord& j) { return j.workload; });
        const bool commands_only = builtin == 0;
        // What the profiles are made of (one job alone for a window, a command's one run) says
        // nothing of the model.
        const bool profile_run = r.jobs.size() == 1 && (window || commands_only);
        const bool usable =
            !r.interrupted && ok && !r.jobs.empty() && !profile_run &&
            (partitioned || baseline_backend(r.backend)) && (window || work) && r.window_s > 0 &&
            (!window ||
             (builtin == r.jobs.size() && (baseline_backend(r.backend) || r.average_power_w)));
        if (!usable)
            continue;
        if (r.provenance.gpu_name && mig::names_other_model(*r.provenance.gpu_name, model)) {
            out.skipped.push_back("run " + std::to_string(r.id) + " (" + r.label +
                                  "): measured on " + *r.provenance.gpu_name + ", not " +
                                  model.key);
            continue;
        }
        const std::string where = source + " run " + std::to_string(r.id);
        // A CUDA graph changes a small job's speed by up to 2.5x: steps like the profiles' only.
        // Profiles step as graphs unless every run behind them stepped eagerly (a store whose
        // runs stepped both ways has eager runs only from --no-cuda-graph comparisons).
        const std::string& steps = profiles.provenance.steps;
        const std::string mode = steps == "eager" ? "eager" : "cuda-graph";
        const auto other_steps = std::find_if(r.jobs.begin(), r.jobs.end(), [&](const auto& j) {
            return j.workload && !steps.empty() && store::step_mode_of(j) != mode;
        });
        if (other_steps != r.jobs.end()) {
            out.skipped.push_back("run " + std::to_string(r.id) + " (" + r.label + "): job '" +
                                  other_steps->name + "' stepped " +
                                  store::step_mode_of(*other_steps) + ", the profiles " + mode);
            continue;
        }
        try {
            const Rebuilt b = rebuild(r, profiles, model);
            if (work)
                fixed.push_back(fixed_work(r, b, where, out));
            else if (partitioned)
                steady_mix(r, b, where, out);
            else
                sequential_windows(r, b, where, out);
            ++out.runs_used;
        } catch (const Error& e) {
            out.skipped.push_back("run " + std::to_string(r.id) + " (" + r.label + "): " +
                                  e.what());
        }
    }
    gain_residuals(fixed, source, out);
    return out;
}

void add_store_residuals(ModelError& error, const ProfileSet& profiles,
                         const std::string& profiles_origin,
                         const std::vector<std::string>& db_paths, const mig::GpuModel& model) {
    if (!error.gpu_model.empty() && error.gpu_model != model.key)
        throw input_error("the residuals are of " + error.gpu_model + ", not " + model.key);
    error.gpu_model = model.key;
    for (const std::string& path : db_paths) {
        const auto from_here = [&](const std::string& source) {
            return source.rfind(path + " run ", 0) == 0 || source.rfind(path + ":", 0) == 0;
        };
        std::erase_if(error.residuals, [&](const Residual& r) { return from_here(r.source); });
        std::erase_if(error.sources, from_here);
        store::Store db = store::Store::open(path, store::OpenMode::kRead);
        const std::vector<store::RunRecord> runs = db.list_runs();
        StoreResiduals found = residuals_from_runs(runs, profiles, model, path);
        std::string line = path + ": " + std::to_string(found.runs_used) + " of " +
                           std::to_string(runs.size()) + " runs used with the profiles " +
                           profiles_origin + ", " + std::to_string(found.residuals.size()) +
                           " residuals";
        if (!found.skipped.empty()) {
            line += "; skipped";
            for (const std::string& why : found.skipped)
                line += " " + why + ";";
            line.pop_back();
        }
        error.sources.push_back(line);
        error.residuals.insert(error.residuals.end(), found.residuals.begin(),
                               found.residuals.end());
    }
}

}  // namespace migscope::plan
