// The planner's model: jobs on partition sizes from profiles, and the figures of a plan.
#include "plan/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "partition/backend_traits.h"
#include "telemetry/attribution.h"

namespace migscope::plan {
namespace {

// The whole text, however long (a fixed buffer cut the start delay's note and its file's name).
std::string format(const char* pattern, double a, double b = 0) {
    const int length = std::snprintf(nullptr, 0, pattern, a, b);
    std::string text(static_cast<size_t>(std::max(0, length)), '\0');
    std::snprintf(text.data(), text.size() + 1, pattern, a, b);
    return text;
}

}  // namespace

size_t Problem::size_index(std::string_view label) const {
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i].label == label)
            return i;
    }
    throw input_error("partition '" + user_text::shown(label) + "' is not a size the planner uses");
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

namespace {

// Refuses a min speed outside 0..1, no jobs, and a GPU model without an SM count.
void check_request(const std::vector<JobRequest>& requests, const mig::GpuModel& model,
                   const Constraints& constraints) {
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
}

// The start delay of jobs starting together: applied on green partitions, where it was fitted;
// either way a note says what happened to it.
void apply_start_delay(Problem& p, const StartDelay& delay, PartitionKind kind) {
    p.correction.start_delay_per_partner_s = 0;
    if (delay.per_partner_s > 0 && kind == PartitionKind::kGreen) {
        p.correction.start_delay_per_partner_s = delay.per_partner_s;
        p.notes.push_back(format("jobs that start together on partitions wait %.2f s per other "
                                 "job starting with them before they run (fitted on green "
                                 "partitions: ",
                                 delay.per_partner_s) +
                          delay.origin + ")");
    } else if (delay.per_partner_s > 0) {
        p.notes.push_back("the start delay of jobs starting together (" + delay.origin +
                          ") was measured on " + delay.backend +
                          " partitions only: not applied to these");
    }
}

// The sizes the planner uses: the model's partition profiles with SMs and memory and no media
// extensions, smallest first, then the whole GPU (the memory of its largest whole-GPU profile).
std::vector<Size> partition_sizes(const mig::GpuModel& model) {
    std::vector<Size> sizes;
    double whole_memory_gib = 0;
    for (const mig::Profile& prof : model.profiles) {
        if (prof.compute_slices == model.compute_slices)
            whole_memory_gib = std::max(whole_memory_gib, prof.memory_gib.value_or(0.0));
        if (prof.media_extensions || prof.compute_slices >= model.compute_slices || !prof.sms ||
            !prof.memory_gib)
            continue;
        sizes.push_back({prof.name, *prof.sms, *prof.memory_gib});
    }
    std::sort(sizes.begin(), sizes.end(), [](const Size& a, const Size& b) {
        return std::tie(a.sms, a.memory_gib, a.label) < std::tie(b.sms, b.memory_gib, b.label);
    });
    sizes.push_back({std::string(kWholeGpu), *model.sm_count, whole_memory_gib});
    return sizes;
}

// A job on one size: its time, start-up, power and speed there, or why it cannot use it (too
// little memory, not profiled, or slower than the min speed). `alone` is its whole-GPU estimate.
JobOnSize job_on_size(const JobModel& job, const Size& size, bool partitioned,
                      const std::optional<Estimate>& alone, double throughput_correction,
                      double min_speed) {
    JobOnSize on;
    const auto e = estimate(*job.profile, size.label, size.sms);
    const auto& peak = job.profile->peak_memory_gib;
    if (peak && *peak > size.memory_gib) {
        on.refusal = format("needs %.1f GiB, has %.2f GiB", *peak, size.memory_gib);
        return on;
    }
    if (!e) {
        on.refusal = "not profiled in this SM range";
        return on;
    }
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
    on.memory_pct = e->memory_utilization_pct.value_or(0);
    on.interpolated = e->interpolated;
    on.speed_fraction = !alone
                            ? 0.0
                            : job.items / alone->items_per_s /
                                  (partitioned ? mix_time_s(on, throughput_correction) : on.time_s);
    if (on.speed_fraction + 1e-12 < min_speed) {
        on.refusal = format(
            "keeps %.2f of its whole-GPU speed, below the min speed "
            "%.2f",
            on.speed_fraction, min_speed);
    } else {
        on.usable = true;
    }
    return on;
}

// One job of the request: its profile, its work in items, and how it does on each of the
// problem's sizes. Refuses a job without the whole-GPU profile it needs, with no work, or that
// fits not even the whole GPU.
JobModel model_job(const JobRequest& r, const ProfileSet& profiles, const Problem& p,
                   WholeGpuProfile whole_profile) {
    JobModel job;
    job.request = r;
    job.profile = r.command.empty() ? &profiles.require(r.name, r.workload, r.mode, r.batch)
                                    : &profiles.require_command(r.name, r.command);
    const Size& whole = p.sizes.back();
    const auto alone = estimate(*job.profile, kWholeGpu, whole.sms);
    if (!alone && (whole_profile == WholeGpuProfile::kRequired || !r.work_steps)) {
        throw input_error("job '" + r.name +
                          "': no whole-GPU profile (needed to normalise its speed; "
                          "measure it with `migscope profile`)");
    }
    if (job.profile->external())
        job.items = 1;  // one run of its command, whatever the work options say
    else if (r.work_steps)
        job.items = double(*r.work_steps) * job.profile->items_per_step;
    else if (r.work_whole_gpu_s && alone)
        job.items = *r.work_whole_gpu_s * alone->items_per_s;
    if ((r.work_steps && *r.work_steps > kMaxWorkSteps) ||
        (r.work_whole_gpu_s && !(*r.work_whole_gpu_s <= kMaxWorkSeconds)))
        throw input_error("job '" + r.name + "': its work is beyond 1e15 steps or 1e9 s");
    if (!(job.items > 0) || !std::isfinite(job.items))
        throw input_error("job '" + r.name + "': its work must be positive");
    for (size_t s = 0; s < p.sizes.size(); ++s) {
        job.on.push_back(job_on_size(job, p.sizes[s], s != p.whole(), alone,
                                     p.correction.throughput, p.constraints.min_speed_fraction));
    }
    job.whole_gpu_s = job.on.back().usable ? job.on.back().time_s : 0.0;
    if (!job.on.back().usable && alone) {
        throw input_error("job '" + r.name + "' fits no partition: on the whole GPU it " +
                          job.on.back().refusal);
    }
    return job;
}

// Notes on a job's partitions: those it cannot use (and why), those it was not measured on.
void note_job_sizes(Problem& p, const JobModel& job) {
    std::string refused, interpolated;
    for (size_t s = 0; s + 1 < p.sizes.size(); ++s) {
        if (!job.on[s].usable)
            refused += "; " + p.sizes[s].label + ": " + job.on[s].refusal;
        else if (job.on[s].interpolated)
            interpolated += (interpolated.empty() ? "" : ", ") + p.sizes[s].label;
    }
    const std::string& name = job.request.name;
    if (!interpolated.empty()) {
        p.notes.push_back("job '" + name + "' on " + interpolated +
                          ": not measured there, interpolated by SMs");
    }
    if (!refused.empty())
        p.notes.push_back("job '" + name + "' cannot use" + refused.substr(1));
}

// The note that says on which backend each job's profiled partition sizes were measured.
std::string backends_note(const std::vector<JobModel>& jobs) {
    std::map<std::string, std::vector<std::string>> by_backend;
    for (const JobModel& job : jobs)
        by_backend[job.profile->backend.empty() ? "not recorded" : job.profile->backend].push_back(
            job.request.name);
    std::string backends;
    for (const auto& [backend, names] : by_backend)
        backends += (backends.empty() ? "" : "; ") + backend + ": " + text::join(names, ", ");
    return "profiles' partition sizes were measured on " + backends;
}

}  // namespace

PartitionKind partition_kind(const std::string& backend) {
    const partition::BackendTraits* b = partition::find_backend(backend);
    return b && b->rounds_sms ? PartitionKind::kGreen : PartitionKind::kMig;
}

Problem make_problem(const std::vector<JobRequest>& requests, const ProfileSet& profiles,
                     const mig::GpuModel& model, const Constraints& constraints, PartitionKind kind,
                     WholeGpuProfile whole_profile) {
    check_request(requests, model, constraints);
    Problem p;
    p.model = model;
    p.idle_power_w = profiles.idle_power_w.value;
    p.idle_state = profiles.idle_state;
    p.power_limit_w = profiles.power_limit_w;
    if (p.power_limit_w && !(*p.power_limit_w > p.idle_power_w)) {
        throw input_error(format("profiles: power limit %.0f W is not above the idle power %.0f W",
                                 *p.power_limit_w, p.idle_power_w));
    }
    p.correction = profiles.correction;
    apply_start_delay(p, profiles.start_delay, kind);
    p.constraints = constraints;
    p.sizes = partition_sizes(model);
    if (kind == PartitionKind::kGreen) {
        p.notes.push_back(
            "green contexts: each partition gets its MIG profile's SMs, except that the driver "
            "rounds the first split of a layout (its largest partition) up to the GPU's "
            "granularity (H200: a 3g.71gb or 1g.35gb that is the largest runs on 64 or 32 SMs), "
            "which the model does not count: such a plan runs up to 1.07x (3g) faster than "
            "predicted");
    }
    std::set<std::string> names;
    for (const JobRequest& r : requests) {
        if (!names.insert(r.name).second)
            throw input_error("job name '" + r.name + "' given twice");
        p.jobs.push_back(model_job(r, profiles, p, whole_profile));
        note_job_sizes(p, p.jobs.back());
    }
    p.notes.push_back(backends_note(p.jobs));
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

size_t partitions_busy(const GpuPlan& gpu) {
    return std::count_if(gpu.queues.begin(), gpu.queues.end(),
                         [](const auto& q) { return !q.empty(); });
}

double cap_clock_ratio(double idle_w, double dynamic_w, std::optional<double> limit_w) {
    if (!limit_w || dynamic_w <= 0 || idle_w + dynamic_w <= *limit_w)
        return 1.0;
    // make_problem refuses a limit at or below the idle power.
    return std::pow(std::max(0.0, *limit_w - idle_w) / dynamic_w, 1.0 / kCapClockExponent);
}

PhaseRate phase_rate(size_t busy, bool partitioned, double wanted_w, double memory_pct,
                     const Correction& correction, double idle_w, std::optional<double> limit_w) {
    PhaseRate r;
    r.mix = partitioned && busy >= 2;
    const double dynamic_w = wanted_w * (r.mix ? correction.dynamic_power : 1.0);
    r.clock = cap_clock_ratio(idle_w, dynamic_w, limit_w);
    // Jobs that want more than the whole memory bandwidth share it: none runs faster than
    // 100 % / their summed demand of its speed alone, whatever the clock.
    r.speed = (r.mix ? correction.throughput : 1.0) * r.clock;
    if (memory_pct > 100)
        r.speed = std::min(r.speed, 100 / memory_pct);
    r.dynamic_w = dynamic_w * (r.clock < 1 ? std::pow(r.clock, kCapClockExponent) : 1.0);
    return r;
}

namespace {

// `out` emptied for `queues`: a zero per queued job in each per-job figure, no makespan, no energy.
void reset_timeline(const std::vector<std::vector<QueuedJob>>& queues, GpuTimeline& out) {
    const size_t partitions = queues.size();
    out.end_s.resize(partitions);
    out.mix_s.resize(partitions);
    out.capped_s.resize(partitions);
    out.wait_s.resize(partitions);
    out.makespan_s = out.dynamic_j = 0;
    for (size_t k = 0; k < partitions; ++k) {
        out.end_s[k].assign(queues[k].size(), 0);
        out.mix_s[k].assign(queues[k].size(), 0);
        out.capped_s[k].assign(queues[k].size(), 0);
        out.wait_s[k].assign(queues[k].size(), 0);
    }
}

}  // namespace

void simulate_gpu(const std::vector<std::vector<QueuedJob>>& queues, bool partitioned,
                  const Correction& correction, double idle_w, std::optional<double> limit_w,
                  GpuTimeline& out) {
    // Long as one event loop that reads top to bottom: each turn starts the jobs whose turn came,
    // sums what the running ones want, and advances every partition to the first phase's end.
    const size_t partitions = queues.size();
    reset_timeline(queues, out);
    // Per partition: its running job, and what is left of that job's start-up and rest (rest in
    // seconds as alone).
    std::vector<size_t> at(partitions, 0);
    std::vector<double> startup_left(partitions, 0), rest_left(partitions, 0);
    // What is left of a started job's wait (below), before its start-up: its partition is busy
    // but draws no dynamic power and moves no memory.
    std::vector<double> delay_left(partitions, 0);
    for (size_t k = 0; k < partitions; ++k) {
        if (!queues[k].empty()) {
            startup_left[k] = queues[k][0].startup_s;
            rest_left[k] = queues[k][0].rest_s;
        }
    }
    // Jobs that start at one moment with others wait (plan/start_delay.h): at 0 every
    // partition's first job, later those whose predecessors end together.
    std::vector<char> starting(partitions, 0);
    for (size_t k = 0; k < partitions; ++k)
        starting[k] = !queues[k].empty();
    double t = 0;
    while (true) {
        size_t busy = 0;
        double wanted_w = 0, memory_pct = 0;  // what the running jobs want (memory: in their rest)
        for (size_t k = 0; k < partitions; ++k) {
            while (at[k] < queues[k].size() && delay_left[k] <= 0 && startup_left[k] <= 0 &&
                   rest_left[k] <= 0) {
                out.end_s[k][at[k]++] = t;  // done: the next job of the queue starts
                if (at[k] < queues[k].size()) {
                    startup_left[k] = queues[k][at[k]].startup_s;
                    rest_left[k] = queues[k][at[k]].rest_s;
                    starting[k] = 1;
                }
            }
        }
        const size_t together = std::count(starting.begin(), starting.end(), 1);
        const double delay_s =
            partitioned ? start_delay_s(correction.start_delay_per_partner_s, together) : 0.0;
        for (size_t k = 0; k < partitions; ++k) {
            if (starting[k] && at[k] < queues[k].size())
                delay_left[k] = out.wait_s[k][at[k]] = delay_s;
            starting[k] = 0;
            if (at[k] < queues[k].size()) {
                ++busy;
                if (delay_left[k] <= 0)
                    wanted_w += queues[k][at[k]].dynamic_w;
                if (delay_left[k] <= 0 && startup_left[k] <= 0)
                    memory_pct += queues[k][at[k]].memory_pct;
            }
        }
        if (busy == 0)
            break;
        const PhaseRate rate =
            phase_rate(busy, partitioned, wanted_w, memory_pct, correction, idle_w, limit_w);
        double dt = std::numeric_limits<double>::infinity();
        for (size_t k = 0; k < partitions; ++k) {
            if (at[k] < queues[k].size())
                dt = std::min(dt, delay_left[k] > 0     ? delay_left[k]
                                  : startup_left[k] > 0 ? startup_left[k]
                                                        : rest_left[k] / rate.speed);
        }
        // The phase that ends first ends exactly; others within rounding of it end too.
        const auto advance = [](double& left, double step) {
            left = left <= step * (1 + 1e-12) ? 0.0 : left - step;
        };
        for (size_t k = 0; k < partitions; ++k) {
            if (at[k] >= queues[k].size())
                continue;
            if (rate.mix)
                out.mix_s[k][at[k]] += dt;
            if (rate.clock < 1)
                out.capped_s[k][at[k]] += dt;
            if (delay_left[k] > 0)
                advance(delay_left[k], dt);
            else if (startup_left[k] > 0)
                advance(startup_left[k], dt);
            else
                advance(rest_left[k], dt * rate.speed);
        }
        out.dynamic_j += rate.dynamic_w * dt;
        t += dt;
    }
    out.makespan_s = t;
}

namespace {

// A job's situation from its share of mix and capped seconds in its run (most of it counts).
JobSituation situation_of(double time_s, double mix_s, double capped_s, unsigned sms,
                          bool queued) {
    JobSituation s;
    s.mix = time_s > 0 && mix_s >= 0.5 * time_s;
    s.capped = time_s > 0 && capped_s >= 0.5 * time_s;
    s.sms = sms;
    s.queued = queued;
    return s;
}

// The jobs of one GPU's plan as simulate_gpu's queues, and each partition's size index.
std::vector<std::vector<QueuedJob>> queues_of(const Problem& problem, const GpuPlan& gpu, size_t g,
                                              std::vector<size_t>& size_of,
                                              std::vector<int>& seen) {
    const size_t partitions = gpu.layout ? gpu.layout->instances.size() : 1;
    if (gpu.queues.size() != partitions)
        throw input_error("plan: GPU " + std::to_string(g) + " has " +
                          std::to_string(gpu.queues.size()) + " queues for " +
                          std::to_string(partitions) + " partitions");
    std::vector<std::vector<QueuedJob>> queues(partitions);
    size_of.assign(partitions, 0);
    for (size_t k = 0; k < partitions; ++k) {
        size_of[k] =
            gpu.layout ? problem.size_index(gpu.layout->instances[k].profile) : problem.whole();
        const Size& size = problem.sizes[size_of[k]];
        for (size_t j : gpu.queues[k]) {
            if (j >= problem.jobs.size() || seen[j]++)
                throw input_error("plan: job " + std::to_string(j) + " placed twice or unknown");
            const JobModel& job = problem.jobs[j];
            const JobOnSize& on = job.on[size_of[k]];
            if (!on.usable) {
                throw input_error("plan: job '" + job.request.name + "' cannot run on " +
                                  size.label + ": " + on.refusal);
            }
            queues[k].push_back({on.startup_s, on.time_s - on.startup_s,
                                 std::max(0.0, on.power_w - problem.idle_power_w), on.memory_pct});
        }
    }
    return queues;
}

}  // namespace

SteadyWindow predict_steady_window(const Problem& problem, const GpuPlan& gpu) {
    std::vector<size_t> size_of;
    std::vector<int> seen(problem.jobs.size(), 0);
    const std::vector<std::vector<QueuedJob>> queues = queues_of(problem, gpu, 0, size_of, seen);
    SteadyWindow w;
    w.items_per_s.assign(problem.jobs.size(), 0);
    w.situation.assign(problem.jobs.size(), {});
    size_t busy = 0;
    double wanted_w = 0, memory_pct = 0;
    for (const auto& q : queues) {
        if (q.empty())
            continue;
        ++busy;
        wanted_w += q.front().dynamic_w;
        memory_pct += q.front().memory_pct;
    }
    const PhaseRate rate = phase_rate(busy, gpu.layout.has_value(), wanted_w, memory_pct,
                                      problem.correction, problem.idle_power_w,
                                      problem.power_limit_w);
    for (size_t k = 0; k < queues.size(); ++k) {
        if (gpu.queues[k].empty())
            continue;
        const size_t j = gpu.queues[k].front();
        const JobOnSize& on = problem.jobs[j].on[size_of[k]];
        w.items_per_s[j] = problem.jobs[j].items / (on.time_s - on.startup_s) * rate.speed;
        w.situation[j] = situation_of(1, rate.mix ? 1 : 0, rate.clock < 1 ? 1 : 0,
                                      problem.sizes[size_of[k]].sms, gpu.queues[k].size() > 1);
    }
    w.mix = rate.mix;
    w.clock = rate.clock;
    w.dynamic_w = rate.dynamic_w;
    w.board_power_w = problem.idle_power_w + rate.dynamic_w;
    return w;
}

namespace {

// One GPU's jobs in a prediction, in the order they were placed, with the input to attribute
// their energy as `migscope run` does (telemetry/attribution.h).
struct GpuJobs {
    std::vector<size_t> jobs;
    std::vector<std::pair<size_t, size_t>> place;  // partition, place in its queue
    telemetry::AttributionInput split;
};

// Where and when each of GPU `g`'s jobs runs on `timeline`, its speed and situation (into
// `out.jobs`), its share of the attribution input, and the GPU's whole-GPU work: by partition
// into `out.aggregate_throughput`, in all into `work_s`.
GpuJobs place_gpu_jobs(const Problem& problem, const GpuPlan& gpu, size_t g,
                       const std::vector<size_t>& size_of, const GpuTimeline& timeline,
                       Prediction& out, double& work_s) {
    GpuJobs placed;
    telemetry::AttributionInput& split = placed.split;
    split.idle_power_w = problem.idle_power_w;
    for (size_t k = 0; k < size_of.size(); ++k) {
        const Size& size = problem.sizes[size_of[k]];
        const double partition_end_s = timeline.end_s[k].empty() ? 0 : timeline.end_s[k].back();
        double start_s = 0, whole_work_s = 0;
        for (size_t q = 0; q < gpu.queues[k].size(); ++q) {
            const size_t j = gpu.queues[k][q];
            const JobModel& job = problem.jobs[j];
            const double end_s = timeline.end_s[k][q], time_s = end_s - start_s;
            JobPrediction& jp = out.jobs[j];
            jp.gpu = g;
            jp.partition = k;
            jp.partition_label = size.label;
            jp.start_s = start_s;
            jp.end_s = end_s;
            const double running_s = time_s - timeline.wait_s[k][q];
            jp.items_per_s = running_s > 0 ? job.items / running_s : 0.0;
            jp.speed_fraction = running_s > 0 ? job.whole_gpu_s / running_s : 0.0;
            jp.interpolated = job.on[size_of[k]].interpolated;
            jp.situation = situation_of(time_s, timeline.mix_s[k][q], timeline.capped_s[k][q],
                                        size.sms, gpu.queues[k].size() > 1);
            placed.jobs.push_back(j);
            placed.place.emplace_back(k, q);
            split.partition_sms.push_back(size.sms);
            split.busy_s.push_back(time_s);
            // Jobs queued on one partition share its idle power by time.
            split.partition_share.push_back(partition_end_s > 0 ? time_s / partition_end_s : 1.0);
            whole_work_s += job.whole_gpu_s;
            start_s = end_s;
        }
        if (partition_end_s > 0)
            out.aggregate_throughput += whole_work_s / partition_end_s;
        work_s += whole_work_s;
    }
    return placed;
}

// A job's marginal dynamic energy: this GPU's minus that of the GPU without it, simulated
// alike; attribute_energy takes the mix-without power such that the job's marginal power
// × its time is that. Partitions with a queue get none, as `migscope run` probes no mix
// then (the mix changes as queues advance): the dynamic energy is split by partition size
// × busy seconds. The whole GPU keeps them: there each job's margin is its own energy, as
// a sequential run measures it.
void add_powers_without(const Problem& problem, const GpuPlan& gpu,
                        const std::vector<std::vector<QueuedJob>>& queues,
                        const GpuTimeline& timeline, GpuJobs& placed) {
    const bool queued = gpu.layout && std::any_of(gpu.queues.begin(), gpu.queues.end(),
                                                  [](const auto& q) { return q.size() > 1; });
    GpuTimeline without;
    for (size_t q = 0; q < placed.jobs.size() && !queued; ++q) {
        std::vector<std::vector<QueuedJob>> others = queues;
        auto& queue = others[placed.place[q].first];
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(placed.place[q].second));
        simulate_gpu(others, gpu.layout.has_value(), problem.correction, problem.idle_power_w,
                     problem.power_limit_w, without);
        const double marginal_j = std::max(0.0, timeline.dynamic_j - without.dynamic_j);
        placed.split.without_dynamic_w.push_back(
            timeline.dynamic_j / timeline.makespan_s -
            (placed.split.busy_s[q] > 0 ? marginal_j / placed.split.busy_s[q] : 0.0));
    }
}

}  // namespace

Prediction predict(const Problem& problem, const Plan& plan) {
    Prediction out;
    out.jobs.resize(problem.jobs.size());
    std::vector<int> seen(problem.jobs.size(), 0);
    const Correction& c = problem.correction;
    double dynamic_j = 0, charged_j = 0, work_s = 0;
    GpuTimeline timeline;
    for (size_t g = 0; g < plan.size(); ++g) {
        const GpuPlan& gpu = plan[g];
        std::vector<size_t> size_of;
        const std::vector<std::vector<QueuedJob>> queues =
            queues_of(problem, gpu, g, size_of, seen);
        const size_t busy = partitions_busy(gpu);
        const bool mix = gpu.layout && busy >= 2;
        out.mix = out.mix || mix;
        out.corrected = out.corrected || (mix && (c.throughput != 1 || c.dynamic_power != 1));
        simulate_gpu(queues, gpu.layout.has_value(), c, problem.idle_power_w, problem.power_limit_w,
                     timeline);
        // This GPU's jobs as `migscope run` attributes them (telemetry/attribution.h), with the
        // GPU without each job simulated like the GPU itself.
        GpuJobs placed = place_gpu_jobs(problem, gpu, g, size_of, timeline, out, work_s);
        if (placed.jobs.empty())
            continue;
        const double gpu_makespan_s = timeline.makespan_s;
        placed.split.duration_s = gpu_makespan_s;
        placed.split.energy_j = problem.idle_power_w * gpu_makespan_s + timeline.dynamic_j;
        add_powers_without(problem, gpu, queues, timeline, placed);
        const telemetry::Attribution a = telemetry::attribute_energy(placed.split);
        for (size_t q = 0; q < placed.jobs.size(); ++q) {
            out.jobs[placed.jobs[q]].energy_j = a.energy_j[q];
            charged_j += a.energy_j[q];
        }
        dynamic_j += timeline.dynamic_j;
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

}  // namespace migscope::plan
