// The planner's model: jobs on partition sizes from profiles, and the figures of a plan.
#include "plan/model.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/text.h"
#include "telemetry/attribution.h"

namespace migscope::plan {
namespace {

std::string format(const char* pattern, double a, double b = 0) {
    char text[128];
    std::snprintf(text, sizeof text, pattern, a, b);
    return text;
}

}  // namespace

Objective parse_objective(std::string_view text) {
    const std::string t = text::lower(text);
    if (t == "energy")
        return Objective::kEnergy;
    if (t == "throughput")
        return Objective::kThroughput;
    if (t == "aggregate-throughput")
        return Objective::kAggregateThroughput;
    if (t == "makespan")
        return Objective::kMakespan;
    if (t == "edp")
        return Objective::kEdp;
    throw input_error("unknown objective '" + std::string(text) +
                      "' (energy, throughput, aggregate-throughput, makespan or edp)");
}

std::string to_string(Objective objective) {
    switch (objective) {
        case Objective::kEnergy:
            return "energy";
        case Objective::kThroughput:
            return "throughput";
        case Objective::kAggregateThroughput:
            return "aggregate-throughput";
        case Objective::kMakespan:
            return "makespan";
        case Objective::kEdp:
            return "edp";
    }
    return "?";
}

unsigned green_context_sms(const mig::GpuModel& model, unsigned sms) {
    if (!model.green_granularity)
        throw input_error("GPU model " + model.key +
                          ": how green contexts group its SMs is unknown");
    const auto rounded =
        static_cast<unsigned>(rounded_sm_count(static_cast<int>(sms), *model.green_granularity));
    return model.sm_count ? std::min(rounded, *model.sm_count) : rounded;
}

ProfileSet on_green_contexts(ProfileSet profiles, const mig::GpuModel& model) {
    for (JobProfile& job : profiles.jobs) {
        for (PartitionProfile& p : job.partitions)
            p.sms = green_context_sms(model, p.sms);
    }
    return profiles;
}

size_t Problem::size_index(std::string_view label) const {
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i].label == label)
            return i;
    }
    throw input_error("partition '" + std::string(label) + "' is not a size the planner uses");
}

std::vector<mig::Layout> Problem::layouts() const {
    std::vector<mig::Layout> out;
    for (mig::Layout& l : mig::enumerate_layouts(model, {})) {
        bool known = true;
        for (const mig::Instance& i : l.instances) {
            known = known && std::any_of(sizes.begin(), sizes.end() - 1,
                                         [&](const Size& s) { return s.label == i.profile; });
        }
        if (known)
            out.push_back(std::move(l));
    }
    return out;
}

Problem make_problem(const std::vector<JobRequest>& requests, const ProfileSet& profiles,
                     const mig::GpuModel& model, const Constraints& constraints,
                     PartitionKind kind) {
    if (constraints.min_speed_fraction < 0 || constraints.min_speed_fraction > 1) {
        throw input_error(
            format("impossible constraint: min speed %.2f of the whole-GPU speed "
                   "(give a fraction from 0 to 1)",
                   constraints.min_speed_fraction));
    }
    if (requests.empty())
        throw input_error("no jobs to plan");
    if (!model.sm_count)
        throw input_error("GPU model " + model.key + ": SM count unknown");
    Problem p;
    p.model = model;
    p.idle_power_w = profiles.idle_power_w.value;
    p.correction = profiles.correction;
    p.constraints = constraints;
    double whole_memory_gib = 0;
    for (const mig::Profile& prof : model.profiles) {
        if (prof.compute_slices == model.compute_slices)
            whole_memory_gib = std::max(whole_memory_gib, prof.memory_gib.value_or(0.0));
        if (prof.media_extensions || prof.compute_slices >= model.compute_slices || !prof.sms ||
            !prof.memory_gib)
            continue;
        const unsigned sms =
            kind == PartitionKind::kGreen ? green_context_sms(model, *prof.sms) : *prof.sms;
        p.sizes.push_back({prof.name, sms, *prof.memory_gib});
    }
    if (kind == PartitionKind::kGreen) {
        p.notes.push_back(
            "green contexts: each partition gets its SMs rounded up to the GPU's granularity "
            "(e.g. 1g.35gb runs on as many SMs as 2g.35gb, 3g.71gb as 4g.71gb on Hopper); "
            "layouts that give the jobs the same SMs are one candidate");
    }
    std::sort(p.sizes.begin(), p.sizes.end(), [](const Size& a, const Size& b) {
        return std::tie(a.sms, a.memory_gib, a.label) < std::tie(b.sms, b.memory_gib, b.label);
    });
    p.sizes.push_back({std::string(kWholeGpu), *model.sm_count, whole_memory_gib});

    std::set<std::string> names;
    for (const JobRequest& r : requests) {
        if (!names.insert(r.name).second)
            throw input_error("job name '" + r.name + "' given twice");
        JobModel job;
        job.request = r;
        job.profile = r.command.empty() ? &profiles.require(r.name, r.workload, r.mode, r.batch)
                                        : &profiles.require_command(r.name, r.command);
        const Size& whole = p.sizes.back();
        const auto alone = estimate(*job.profile, kWholeGpu, whole.sms);
        if (!alone) {
            throw input_error("job '" + r.name +
                              "': no whole-GPU profile (needed to normalise its speed; "
                              "measure it with `migscope profile`)");
        }
        if (job.profile->external())
            job.items = 1;  // one run of its command, whatever the work options say
        else if (r.work_steps)
            job.items = double(*r.work_steps) * job.profile->items_per_step;
        else if (r.work_whole_gpu_s)
            job.items = *r.work_whole_gpu_s * alone->items_per_s;
        if (!(job.items > 0))
            throw input_error("job '" + r.name + "': its work must be positive");
        const double min_speed = constraints.min_speed_fraction;
        for (size_t s = 0; s < p.sizes.size(); ++s) {
            const Size& size = p.sizes[s];
            JobOnSize on;
            const auto e = estimate(*job.profile, size.label, size.sms);
            const auto& peak = job.profile->peak_memory_gib;
            const bool partitioned = s != p.whole();
            if (peak && *peak > size.memory_gib) {
                on.refusal = format("needs %.1f GiB, has %.2f GiB", *peak, size.memory_gib);
            } else if (!e) {
                on.refusal = "not profiled in this SM range";
            } else {
                on.time_s = job.items / e->items_per_s;
                on.startup_s = job.profile->external() ? std::min(e->startup_s, on.time_s) : 0;
                const auto end_of = [&](Spread spread, double& time_s, double& startup_s) {
                    const Estimate x = *estimate(*job.profile, size.label, size.sms, spread);
                    time_s = job.items / x.items_per_s;
                    startup_s = job.profile->external() ? std::min(x.startup_s, time_s) : 0;
                };
                end_of(Spread::kFastest, on.fastest_time_s, on.fastest_startup_s);
                end_of(Spread::kSlowest, on.slowest_time_s, on.slowest_startup_s);
                on.power_w = e->average_power_w;
                on.interpolated = e->interpolated;
                on.speed_fraction =
                    job.items / alone->items_per_s /
                    (partitioned ? mix_time_s(on, p.correction.throughput) : on.time_s);
                if (on.speed_fraction + 1e-12 < min_speed) {
                    on.refusal = format(
                        "keeps %.2f of its whole-GPU speed, below the min speed "
                        "%.2f",
                        on.speed_fraction, min_speed);
                } else {
                    on.usable = true;
                }
            }
            job.on.push_back(on);
        }
        if (!job.on.back().usable) {
            throw input_error("job '" + r.name + "' fits no partition: on the whole GPU it " +
                              job.on.back().refusal);
        }
        std::string refused, interpolated;
        for (size_t s = 0; s + 1 < p.sizes.size(); ++s) {
            if (!job.on[s].usable)
                refused += "; " + p.sizes[s].label + ": " + job.on[s].refusal;
            else if (job.on[s].interpolated)
                interpolated += (interpolated.empty() ? "" : ", ") + p.sizes[s].label;
        }
        if (!interpolated.empty()) {
            p.notes.push_back("job '" + r.name + "' on " + interpolated +
                              ": not measured there, interpolated by SMs");
        }
        if (!refused.empty())
            p.notes.push_back("job '" + r.name + "' cannot use" + refused.substr(1));
        p.jobs.push_back(std::move(job));
    }
    std::map<std::string, std::vector<std::string>> by_backend;  // what the profiles' sizes were
    for (const JobModel& job : p.jobs)
        by_backend[job.profile->backend.empty() ? "not recorded" : job.profile->backend].push_back(
            job.request.name);
    std::string backends;
    for (const auto& [backend, names] : by_backend)
        backends += (backends.empty() ? "" : "; ") + backend + ": " + text::join(names, ", ");
    p.notes.push_back("profiles' partition sizes were measured on " + backends);
    if (p.correction.mixes == 0) {
        p.notes.push_back(
            "no measured mixes: the interference and power corrections are 1 (jobs side by side "
            "are predicted as if alone on their partitions)");
    }
    return p;
}

std::string describe(const GpuPlan& gpu) {
    return gpu.layout ? mig::to_string(*gpu.layout) : "whole GPU (not partitioned)";
}

Prediction predict(const Problem& problem, const Plan& plan) {
    Prediction out;
    out.jobs.resize(problem.jobs.size());
    std::vector<int> seen(problem.jobs.size(), 0);
    const Correction& c = problem.correction;
    double dynamic_j = 0, charged_j = 0, work_s = 0;
    for (size_t g = 0; g < plan.size(); ++g) {
        const GpuPlan& gpu = plan[g];
        const size_t partitions = gpu.layout ? gpu.layout->instances.size() : 1;
        if (gpu.queues.size() != partitions)
            throw input_error("plan: GPU " + std::to_string(g) + " has " +
                              std::to_string(gpu.queues.size()) + " queues for " +
                              std::to_string(partitions) + " partitions");
        const size_t busy = std::count_if(gpu.queues.begin(), gpu.queues.end(),
                                          [](const auto& q) { return !q.empty(); });
        const bool mix = gpu.layout && busy >= 2;
        out.corrected = out.corrected || (mix && (c.throughput != 1 || c.dynamic_power != 1));
        // This GPU's jobs as `migscope run` attributes them (telemetry/attribution.h), with the
        // mix without each job predicted from the profiles like the mix itself.
        std::vector<size_t> gpu_jobs;
        telemetry::AttributionInput split;
        split.idle_power_w = problem.idle_power_w;
        double gpu_makespan_s = 0;
        std::vector<double> gpu_alone_j;   // each job's dynamic energy as if alone on its partition
        std::vector<bool> alone_in_queue;  // the only job of its partition
        for (size_t k = 0; k < partitions; ++k) {
            const size_t s =
                gpu.layout ? problem.size_index(gpu.layout->instances[k].profile) : problem.whole();
            const Size& size = problem.sizes[s];
            double t = 0, whole_work_s = 0;
            const size_t queue_start = gpu_jobs.size();
            for (size_t j : gpu.queues[k]) {
                if (j >= problem.jobs.size() || seen[j]++)
                    throw input_error("plan: job " + std::to_string(j) +
                                      " placed twice or unknown");
                const JobModel& job = problem.jobs[j];
                const JobOnSize& on = job.on[s];
                if (!on.usable) {
                    throw input_error("plan: job '" + job.request.name + "' cannot run on " +
                                      size.label + ": " + on.refusal);
                }
                const double time_s = mix ? mix_time_s(on, c.throughput) : on.time_s;
                const double alone_dynamic_w = std::max(0.0, on.power_w - problem.idle_power_w);
                JobPrediction& jp = out.jobs[j];
                jp.gpu = g;
                jp.partition = k;
                jp.partition_label = size.label;
                jp.start_s = t;
                jp.end_s = t + time_s;
                jp.items_per_s = job.items / time_s;
                jp.speed_fraction = job.on[problem.whole()].time_s / time_s;
                jp.interpolated = on.interpolated;
                gpu_alone_j.push_back(alone_dynamic_w * time_s);
                gpu_jobs.push_back(j);
                split.partition_sms.push_back(size.sms);
                split.busy_s.push_back(time_s);
                whole_work_s += job.on[problem.whole()].time_s;
                t += time_s;
            }
            for (size_t q = queue_start; q < gpu_jobs.size(); ++q) {  // jobs queued here share it
                split.partition_share.push_back(t > 0 ? split.busy_s[q] / t : 1.0);
                alone_in_queue.push_back(gpu.queues[k].size() == 1);
            }
            if (t > 0)
                out.aggregate_throughput += whole_work_s / t;
            work_s += whole_work_s;
            gpu_makespan_s = std::max(gpu_makespan_s, t);
        }
        if (gpu_jobs.empty())
            continue;
        const auto mix_dynamic_j = [&](double alone_j, size_t busy_partitions) {
            return alone_j * (gpu.layout && busy_partitions >= 2 ? c.dynamic_power : 1.0);
        };
        const double alone_j = std::accumulate(gpu_alone_j.begin(), gpu_alone_j.end(), 0.0);
        const double gpu_dynamic_j = mix_dynamic_j(alone_j, busy);
        split.duration_s = gpu_makespan_s;
        split.energy_j = problem.idle_power_w * gpu_makespan_s + gpu_dynamic_j;
        // The mix without a job: one busy partition fewer when it was alone on its partition.
        // attribute_energy takes its power such that the job's marginal power × its time is
        // this GPU's dynamic energy minus that mix's. Partitions with a queue get none, as
        // `migscope run` probes no mix then (the mix changes as queues advance): the dynamic
        // energy is split by partition size × busy seconds. The whole GPU keeps them: there each
        // job's margin is its own energy, as a sequential run measures it.
        const bool queued = gpu.layout && std::any_of(gpu.queues.begin(), gpu.queues.end(),
                                                      [](const auto& q) { return q.size() > 1; });
        for (size_t q = 0; q < gpu_jobs.size() && !queued; ++q) {
            const double without_j =
                mix_dynamic_j(alone_j - gpu_alone_j[q], busy - (alone_in_queue[q] ? 1 : 0));
            const double marginal_j = std::max(0.0, gpu_dynamic_j - without_j);
            split.without_dynamic_w.push_back(
                gpu_dynamic_j / gpu_makespan_s -
                (split.busy_s[q] > 0 ? marginal_j / split.busy_s[q] : 0.0));
        }
        const telemetry::Attribution a = telemetry::attribute_energy(split);
        for (size_t q = 0; q < gpu_jobs.size(); ++q) {
            out.jobs[gpu_jobs[q]].energy_j = a.energy_j[q];
            charged_j += a.energy_j[q];
        }
        dynamic_j += gpu_dynamic_j;
        out.makespan_s = std::max(out.makespan_s, gpu_makespan_s);
    }
    for (size_t j = 0; j < seen.size(); ++j) {
        if (!seen[j])
            throw input_error("plan: job '" + problem.jobs[j].request.name + "' is not placed");
    }
    out.energy_j = double(plan.size()) * problem.idle_power_w * out.makespan_s + dynamic_j;
    out.idle_energy_j = out.energy_j - charged_j;
    out.edp_js = out.energy_j * out.makespan_s;
    out.throughput = out.makespan_s > 0 ? work_s / out.makespan_s : 0.0;
    return out;
}

MakespanRange predict_makespan_range(const Problem& problem, const Plan& plan) {
    Problem end = problem;
    const auto makespan_at = [&](bool fastest) {
        for (size_t j = 0; j < end.jobs.size(); ++j) {
            for (size_t s = 0; s < end.sizes.size(); ++s) {
                const JobOnSize& from = problem.jobs[j].on[s];
                JobOnSize& on = end.jobs[j].on[s];
                on.time_s = fastest ? from.fastest_time_s : from.slowest_time_s;
                on.startup_s = fastest ? from.fastest_startup_s : from.slowest_startup_s;
            }
        }
        return predict(end, plan).makespan_s;
    };
    return {makespan_at(true), makespan_at(false)};
}

double score(Objective objective, const Prediction& p) {
    switch (objective) {
        case Objective::kEnergy:
            return p.energy_j;
        case Objective::kThroughput:
            return -p.throughput;
        case Objective::kAggregateThroughput:
            return -p.aggregate_throughput;
        case Objective::kMakespan:
            return p.makespan_s;
        case Objective::kEdp:
            return p.edp_js;
    }
    return p.energy_j;
}

}  // namespace migscope::plan
