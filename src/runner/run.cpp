// One run: idle and marginal-power probes, the job groups (runner/job_group.h) in turn, each
// window's energy summed and attributed to its jobs.
#include "runner/run.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"
#include "core/statistics.h"
#include "runner/job_group.h"
#include "telemetry/attribution.h"
#include "telemetry/sampler.h"

#include <fmt/format.h>

namespace migscope::runner {
namespace {

using partition::JobSpec;
using telemetry::Sample;
using telemetry::SampleScope;

// Each job's share of its partition's static power: its busy seconds over those of every job in
// its queue (`queue_of`: the first job of each job's queue), equal shares when none was busy.
std::vector<double> queue_shares(const std::vector<size_t>& queue_of,
                                 const std::vector<double>& busy_s) {
    std::vector<double> out(queue_of.size(), 1.0);
    for (size_t i = 0; i < queue_of.size(); ++i) {
        double total = 0;
        size_t count = 0;
        for (size_t k = 0; k < queue_of.size(); ++k) {
            if (queue_of[k] == queue_of[i]) {
                total += busy_s[k];
                ++count;
            }
        }
        out[i] = total > 0 ? busy_s[i] / total : 1.0 / static_cast<double>(count);
    }
    return out;
}

// Sums the energy summaries of consecutive windows (sequential runs).
telemetry::EnergySummary combine(const std::vector<telemetry::EnergySummary>& parts) {
    telemetry::EnergySummary total;
    if (parts.empty())
        return total;
    total.trace_is_one_second_average = parts.front().trace_is_one_second_average;
    bool counter = true, trace = true;
    double counter_j = 0, trace_j = 0;
    for (const auto& p : parts) {
        total.duration_s += p.duration_s;
        total.power_samples += p.power_samples;
        if (p.max_gap_s)
            total.max_gap_s = std::max(total.max_gap_s.value_or(0.0), *p.max_gap_s);
        counter = counter && p.counter_energy_j.has_value();
        trace = trace && p.trace_energy_j.has_value();
        counter_j += p.counter_energy_j.value_or(0);
        trace_j += p.trace_energy_j.value_or(0);
        if (p.peak_power_w)
            total.peak_power_w = std::max(total.peak_power_w.value_or(0.0), *p.peak_power_w);
        total.warnings.insert(total.warnings.end(), p.warnings.begin(), p.warnings.end());
    }
    if (counter)
        total.counter_energy_j = counter_j;
    if (trace)
        total.trace_energy_j = trace_j;
    if (counter && trace && counter_j > 0)
        total.disagreement_pct = 100.0 * (trace_j - counter_j) / counter_j;
    const auto e = total.counter_energy_j ? total.counter_energy_j : total.trace_energy_j;
    if (e && total.duration_s > 0)
        total.average_power_w = *e / total.duration_s;
    return total;
}

// The readings of one sample field (the SM clock, memory utilisation) inside [from, to].
std::vector<double> readings_in(const std::vector<Sample>& samples, SteadyTime from, SteadyTime to,
                                std::optional<unsigned> Sample::*field) {
    std::vector<double> readings;
    for (const Sample& s : samples) {
        if (s.*field && s.time >= from && s.time <= to)
            readings.push_back(*(s.*field));
    }
    return readings;
}

}  // namespace

std::string to_string(JobStatus status) {
    switch (status) {
        case JobStatus::kOk:
            return "ok";
        case JobStatus::kOutOfMemory:
            return "out of memory";
        case JobStatus::kCrashed:
            return "crashed";
        case JobStatus::kFailed:
            return "failed";
        case JobStatus::kTimedOut:
            return "timed out";
        case JobStatus::kInterrupted:
            return "interrupted";
        case JobStatus::kGpuFailed:
            return "gpu failed";
    }
    return "?";
}

namespace {

// Samples power for `seconds` (or until interrupted) with nothing running; the interval it covered.
std::pair<SteadyTime, SteadyTime> probe_idle(double seconds, const RunHooks& hooks,
                                             const std::string& when) {
    if (hooks.progress)
        hooks.progress("measuring idle power " + when + " for " + seconds_text(seconds));
    const SteadyTime from = SteadyClock::now();
    const auto until = from + std::chrono::duration_cast<SteadyClock::duration>(
                                  std::chrono::duration<double>(seconds));
    while (SteadyClock::now() < until && !(hooks.interrupt != nullptr && hooks.interrupt->load()))
        ::poll(nullptr, 0, 20);
    return {from, SteadyClock::now()};
}

// What a marginal probe measured: the board's average power over its window (none when it got no
// window or no energy), the window's median SM clock, and each job's items/s in it (by
// RunSpec::jobs index; none for the job left out).
struct ProbeReading {
    std::optional<double> power_w, sm_clock_mhz;
    std::vector<std::optional<double>> items_per_s;
};

// The mix without job `i` (for two jobs: the other alone) on the same partitions for
// spec.marginal_probe_s after its warm-up.
ProbeReading probe_without(const RunSpec& spec, size_t i, const partition::Backend& backend,
                           telemetry::Sampler& sampler, telemetry::PowerSource& power,
                           const RunHooks& hooks, std::vector<std::string>& warnings,
                           bool& interrupted) {
    RunSpec probe = spec;
    probe.jobs.clear();
    probe.partitions.clear();
    std::vector<size_t> indices, run_index;  // in probe.jobs; each one's index in spec.jobs
    for (size_t k = 0; k < spec.jobs.size(); ++k) {
        if (k == i)
            continue;
        indices.push_back(probe.jobs.size());
        run_index.push_back(k);
        probe.jobs.push_back(spec.jobs[k]);
        probe.partitions.push_back(spec.partitions[k]);
    }
    probe.mode = RunMode::kDuration;
    probe.duration_s = spec.marginal_probe_s;
    if (hooks.progress)
        hooks.progress("marginal probe: the mix without " + spec.jobs[i].name + " for " +
                       seconds_text(spec.marginal_probe_s));
    Group g(probe, indices, backend, &power, hooks, warnings);
    g.run();
    interrupted = g.interrupted;
    ProbeReading reading;
    reading.items_per_s.resize(spec.jobs.size());
    if (!g.open_sample || !g.close_sample || !g.open_time || !g.close_time) {
        warnings.push_back("marginal probe without " + spec.jobs[i].name +
                           ": no measurement window");
        return reading;
    }
    const std::vector<Sample> trace = sampler.all();
    reading.power_w =
        telemetry::summarize_window(trace, *g.open_sample, *g.close_sample).average_power_w;
    reading.sm_clock_mhz =
        percentile(readings_in(trace, *g.open_time, *g.close_time, &Sample::sm_clock_mhz), 0.5);
    for (const JobState& s : g.jobs)
        reading.items_per_s[run_index[s.index]] =
            job_result(probe, s, g, g.interrupted).items_per_s;
    return reading;
}

// A concurrent group's window, attributed once the idle baseline is known (after the run).
struct PendingAttribution {
    std::vector<size_t> jobs;  // RunSpec::jobs indices, in the order of the vectors below
    double energy_j = 0, window_s = 0;
    std::vector<double> sizes, busy_s, shares;
};

// Each job's marginal probe (the board's power without it), where the mix allows one: concurrent
// jobs, more than one, none queued on another's partition.
std::vector<ProbeReading> probe_marginals(const RunSpec& spec, const partition::Backend& backend,
                                          telemetry::Sampler& sampler,
                                          telemetry::PowerSource& power, const RunHooks& hooks,
                                          RunResult& result) {
    std::vector<ProbeReading> probes(spec.jobs.size());
    if (spec.marginal_probe_s <= 0 || spec.jobs.size() < 2)
        return probes;
    const bool queued = std::any_of(spec.partitions.begin(), spec.partitions.end(),
                                    [](const auto& p) { return p.after_job.has_value(); });
    const bool later = std::any_of(spec.partitions.begin(), spec.partitions.end(),
                                   [](const auto& p) { return p.start_after_s > 0; });
    if (queued || later) {
        result.warnings.push_back(
            std::string("no marginal probe: ") +
            (queued ? "jobs queue on a partition (the probe needs one job per partition)"
                    : "jobs start at different times (the probe needs them all running)") +
            "; energy is split by partition size × busy seconds");
        return probes;
    }
    for (size_t i = 0; i < spec.jobs.size() && !result.interrupted; ++i)
        probes[i] = probe_without(spec, i, backend, sampler, power, hooks, result.warnings,
                                  result.interrupted);
    return probes;
}

// The groups of jobs that run at once: every job together, or one at a time (sequential).
std::vector<std::vector<size_t>> job_groups(size_t jobs, bool sequential) {
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < jobs; ++i) {
        if (sequential || groups.empty())
            groups.emplace_back();
        groups.back().push_back(i);
    }
    return groups;
}

// A finished group's jobs into `jobs` (their results) and what their window's attribution needs.
PendingAttribution collect_group(const RunSpec& spec, const Group& g,
                                 const std::vector<ProbeReading>& probes,
                                 std::vector<JobResult>& jobs, RunResult& result) {
    PendingAttribution p;
    std::vector<size_t> queue_of;
    for (const JobState& s : g.jobs) {
        JobResult r = job_result(spec, s, g, g.interrupted);
        const partition::Partition& part = spec.partitions[s.index];
        p.jobs.push_back(s.index);
        p.sizes.push_back(part.sms
                              ? static_cast<double>(*part.sms)
                              : std::max<double>(1.0, static_cast<double>(part.cpu_cores.size())));
        p.busy_s.push_back(r.busy_s);
        size_t head = s.index;  // the first job of its queue
        while (spec.partitions[head].after_job)
            head = *spec.partitions[head].after_job;
        queue_of.push_back(head);
        r.without_power_w = probes[s.index].power_w;
        r.without_sm_clock_mhz = probes[s.index].sm_clock_mhz;
        r.without_items_per_s = probes[s.index].items_per_s;
        if (r.spec.external() && r.status == JobStatus::kOk && r.steps == 0)
            result.warnings.push_back(
                "job " + r.spec.name +
                " reported no progress in the window (lines on "
                "MIGSCOPE_PROGRESS_FD, e.g. python/migscope_progress): its throughput is "
                "unknown; its time and energy are measured");
        jobs[s.index] = std::move(r);
        if (!result.torch_version)
            result.torch_version = s.torch_version;
    }
    p.shares = queue_shares(queue_of, p.busy_s);
    return p;
}

// The idle baseline from the run's trace and idle probes; sets result.idle and idle_power_w and
// returns how the static power was found (named in the attribution method).
std::string settle_idle_power(const RunSpec& spec, bool sequential,
                              const std::vector<std::pair<SteadyTime, SteadyTime>>& idle_intervals,
                              RunResult& result) {
    result.idle = telemetry::idle_baseline(
        result.trace, idle_intervals, std::min(spec.idle_settle_s, spec.idle_probe_s / 2),
        telemetry::clocks_up_threshold_mhz(result.trace).value_or(0));
    const auto static_power = result.idle.static_power();
    if (!static_power)
        return "";
    result.idle_power_w = static_power->second.mean_w;
    if (static_power->first == telemetry::IdleState::kDeep && !sequential)
        result.warnings.push_back(
            "idle power seen only in deep idle (SM clock down): the static part undercounts "
            "what a partition pays while its neighbours work");
    return to_string(static_power->first) +
           fmt::format(", {:.0f}–{:.0f} W over {} samples", static_power->second.min_w,
                       static_power->second.max_w, static_power->second.samples);
}

// Each concurrent window's energy split among its jobs (telemetry::attribute_energy).
void attribute_windows(const RunSpec& spec, const std::vector<PendingAttribution>& pending,
                       const std::vector<ProbeReading>& probes, const std::string& idle_source,
                       std::vector<JobResult>& jobs, RunResult& result) {
    for (const PendingAttribution& p : pending) {
        telemetry::AttributionInput in;
        in.energy_j = p.energy_j;
        in.duration_s = p.window_s;
        in.idle_power_w = result.idle_power_w;
        in.partition_sms = p.sizes;
        in.busy_s = p.busy_s;
        in.partition_share = p.shares;
        in.idle_source = idle_source;
        in.without_source = "probe of " + seconds_text(spec.marginal_probe_s) + " each";
        const bool all_probed =
            std::all_of(p.jobs.begin(), p.jobs.end(), [&](size_t i) { return probes[i].power_w; });
        if (all_probed && result.idle_power_w) {
            for (size_t i : p.jobs)
                in.without_dynamic_w.push_back(*probes[i].power_w - *result.idle_power_w);
        }
        const telemetry::Attribution a = telemetry::attribute_energy(in);
        for (size_t k = 0; k < p.jobs.size(); ++k)
            jobs[p.jobs[k]].energy_j = a.energy_j[k];
        result.attribution_method = a.method;
    }
}

// Energy per item: a job's energy over the items it processed in its own run (sequential, fixed
// work) or at its measured rate over the whole window.
void set_energy_per_item(RunMode mode, bool sequential, double window_s,
                         std::vector<JobResult>& jobs) {
    for (JobResult& r : jobs) {
        if (!r.energy_j || !r.items_per_s || r.items <= 0)
            continue;
        const double window_items = mode == RunMode::kWork ? r.items : *r.items_per_s * window_s;
        r.energy_per_item_j = *r.energy_j / (sequential ? r.items : window_items);
    }
}

// Refuses a run without jobs, without one partition per job, without a positive duration or
// work, or with a job's later start that is not finite seconds >= 0 or not under fixed work.
void check_run_spec(const RunSpec& spec) {
    if (spec.jobs.empty())
        throw input_error("no jobs to run");
    if (spec.partitions.size() != spec.jobs.size())
        throw input_error("one partition per job is needed");
    if (spec.mode == RunMode::kDuration && !(spec.duration_s > 0))
        throw input_error("--duration must be positive");
    if (spec.mode == RunMode::kWork && spec.work_steps <= 0)
        throw input_error("--work must be positive");
    for (const partition::Partition& p : spec.partitions) {
        if (!(p.start_after_s >= 0) || !std::isfinite(p.start_after_s))
            throw input_error("a job's start_after_s must be finite seconds >= 0");
        if (p.start_after_s > 0 && spec.mode != RunMode::kWork)
            throw input_error("a job's later start (start_after_s) needs fixed work (--work)");
    }
}

// The jobs of a group that did not start because the run was interrupted before it.
void mark_not_started(const RunSpec& spec, const std::vector<size_t>& indices,
                      std::vector<JobResult>& jobs) {
    for (size_t i : indices) {
        jobs[i].spec = spec.jobs[i];
        jobs[i].partition = spec.partitions[i];
        jobs[i].status = JobStatus::kInterrupted;
        jobs[i].message = "not started: the run was interrupted";
    }
}

// A group's window in the trace: each of its jobs gets the window's median SM clock and memory
// use, and the window's clock readings join the run's.
void record_window_readings(const std::vector<Sample>& trace, const Group& g,
                            std::vector<JobResult>& jobs, std::vector<double>& window_clocks_mhz) {
    const std::vector<double> clocks =
        readings_in(trace, *g.open_time, *g.close_time, &Sample::sm_clock_mhz);
    const std::vector<double> memory_busy =
        readings_in(trace, *g.open_time, *g.close_time, &Sample::memory_utilization_pct);
    window_clocks_mhz.insert(window_clocks_mhz.end(), clocks.begin(), clocks.end());
    for (const JobState& s : g.jobs) {
        jobs[s.index].sm_clock_mhz = percentile(clocks, 0.5);
        jobs[s.index].memory_utilization_pct = percentile(memory_busy, 0.5);
    }
}

}  // namespace

RunResult execute_run(const RunSpec& spec, const partition::Backend& backend,
                      telemetry::PowerSource* power, const RunHooks& hooks) {
    // Long as the run's phases in the order they happen: sampler and idle probe, marginal
    // probes, each group's run and window, the idle probe after, then attribution.
    check_run_spec(spec);

    RunResult result;
    result.backend = backend.kind();
    result.mode = spec.mode;
    result.layout = spec.layout;
    if (!power)
        result.warnings.push_back("no power source: energy is not measured in this run");

    std::optional<telemetry::Sampler> sampler;
    if (power) {
        sampler.emplace(*power, spec.sample_hz);
        sampler->start();
    }
    result.trace_origin = SteadyClock::now();
    result.trace_origin_unix_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::vector<std::pair<SteadyTime, SteadyTime>> idle_intervals;
    if (power && spec.idle_probe_s > 0)
        idle_intervals.push_back(probe_idle(spec.idle_probe_s, hooks, "before the run"));

    const bool sequential = partition::traits(backend.kind()).one_job_at_a_time;
    const std::vector<ProbeReading> probes =
        power && !sequential ? probe_marginals(spec, backend, *sampler, *power, hooks, result)
                             : std::vector<ProbeReading>(spec.jobs.size());

    std::vector<telemetry::EnergySummary> summaries;
    std::vector<double> window_clocks_mhz;  // every window's SM clock readings
    std::vector<PendingAttribution> pending;
    std::vector<JobResult> jobs(spec.jobs.size());
    for (const auto& indices : job_groups(spec.jobs.size(), sequential)) {
        if (result.interrupted) {
            mark_not_started(spec, indices, jobs);
            continue;
        }
        if (hooks.progress) {
            std::string names;
            for (size_t i : indices)
                names += (names.empty() ? "" : ", ") + spec.jobs[i].name;
            hooks.progress("starting " + names + " (" + to_string(backend.kind()) + ")");
        }
        Group g(spec, indices, backend, power, hooks, result.warnings);
        g.run();
        result.interrupted = result.interrupted || g.interrupted;
        PendingAttribution p = collect_group(spec, g, probes, jobs, result);
        if (!g.open_time || !g.close_time) {
            result.warnings.push_back(g.interrupted ? "no measurement window: the run was "
                                                      "interrupted before it opened"
                                                    : "no measurement window: no job reached "
                                                      "steady state");
            continue;
        }
        const double window_s = seconds_between(*g.open_time, *g.close_time);
        result.window_s += window_s;
        result.windows_s.emplace_back(seconds_between(result.trace_origin, *g.open_time),
                                      seconds_between(result.trace_origin, *g.close_time));
        if (!power)
            continue;
        const std::vector<Sample> trace = sampler->all();
        record_window_readings(trace, g, jobs, window_clocks_mhz);
        const telemetry::EnergySummary e =
            telemetry::summarize_window(trace, *g.open_sample, *g.close_sample);
        summaries.push_back(e);
        if (!e.counter_energy_j)
            continue;
        if (sequential) {
            jobs[indices.front()].energy_j = *e.counter_energy_j;
            result.attribution_method =
                "each job measured alone on the whole GPU, in its own window (board energy "
                "counter)";
        } else {
            p.energy_j = *e.counter_energy_j;
            p.window_s = window_s;
            pending.push_back(std::move(p));
        }
    }
    if (power && spec.idle_probe_s > 0 && !result.interrupted)
        idle_intervals.push_back(probe_idle(spec.idle_probe_s, hooks, "after the jobs"));
    if (sampler) {
        sampler->stop();
        result.trace = sampler->all();
    }
    const std::string idle_source = settle_idle_power(spec, sequential, idle_intervals, result);
    attribute_windows(spec, pending, probes, idle_source, jobs, result);
    result.sm_clock_mhz = percentile(window_clocks_mhz, 0.5);
    result.energy = combine(summaries);
    set_energy_per_item(spec.mode, sequential, result.window_s, jobs);
    result.jobs = std::move(jobs);
    return result;
}

void normalise_throughput(RunResult& run, const std::vector<JobResult>& whole_gpu) {
    // The aggregate prices each job's items at its own speed alone on the whole device, as
    // compare_with_baseline does, over the run's window: whole-device seconds of work a second.
    const bool one_at_a_time = partition::traits(run.backend).one_job_at_a_time;
    double whole_device_s = 0;
    bool any = false;
    for (JobResult& r : run.jobs) {
        for (const JobResult& w : whole_gpu) {
            if (w.spec.name != r.spec.name || !w.items_per_s || !r.items_per_s ||
                *w.items_per_s <= 0)
                continue;
            r.normalised_throughput = *r.items_per_s / *w.items_per_s;
            // Fixed work: the items it did, however early it ended. A duration: its rate over
            // its window, the run's own or, one job at a time, its 1/n of the run's.
            const double items =
                run.mode == RunMode::kWork
                    ? r.items
                    : *r.items_per_s * run.window_s /
                          (one_at_a_time ? static_cast<double>(run.jobs.size()) : 1.0);
            whole_device_s += items / *w.items_per_s;
            any = true;
        }
    }
    if (any && run.window_s > 0)
        run.aggregate_normalised_throughput = whole_device_s / run.window_s;
}

}  // namespace migscope::runner
