// The stream simulator: events are arrivals, a GPU's phase ending (a job's start-up or its work)
// and the end of a layout change; between two of its events a GPU runs in one phase of the
// planner's model. Each GPU keeps its own clock and its next event sits in a heap, so an event
// touches only its GPU, and an arrival only the GPU it is placed on.
#include "stream/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <queue>

#include "core/error.h"
#include "core/statistics.h"
#include "plan/start_delay.h"

namespace migscope::stream {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Running {
    size_t job = 0;  // stream job
    // Its wait for the jobs starting with it (plan/start_delay.h), then its start-up: the wait
    // draws no dynamic power and moves no memory, the partition counted busy.
    double delay_left_s = 0;
    double startup_left_s = 0;
    size_t segment = 0;  // its stretch here: StreamResult::segments
};

struct Partition {
    size_t size = 0;    // index into Problem::sizes
    std::string label;  // "2g.35gb@4" or "whole GPU"
    std::deque<size_t> queue;
    std::optional<Running> running;
};

struct Gpu {
    GpuLayout layout;
    std::vector<Partition> parts;
    double blocked_until_s = 0;  // a layout change in progress: nothing runs
    double updated_s = 0;        // its jobs' progress is counted up to here
    plan::PhaseRate rate;        // its phase since updated_s
    double busy_s = 0;
    uint64_t version = 0;  // bumped at each change: heap entries of older versions are stale
    size_t layout_event = 0;  // StreamResult::layouts' entry of its layout
    // The jobs that started at `started_at_s` on its partitions (their indices): jobs that start
    // at one moment wait for each other (plan/start_delay.h), however many dispatches that takes.
    double started_at_s = -1;
    std::vector<size_t> started_now;
};

struct Event {
    double at_s;
    size_t gpu;
    uint64_t version;
    bool operator>(const Event& o) const { return at_s > o.at_s || (at_s == o.at_s && gpu > o.gpu); }
};

class Simulation {
  public:
    Simulation(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
               const SimulationOptions& options)
        : problem_(problem), jobs_(jobs), options_(options), bin_s_(options.series_bin_s) {
        result_.jobs.resize(jobs.size());
        started_.assign(jobs.size(), false);
        for (const StreamJob& j : jobs) {
            rest_left_.push_back(j.work_left);
            startup_done_.push_back(j.startup_done);
        }
    }

    StreamResult run(Policy& policy) {
        result_.policy = policy.name();
        const std::vector<GpuLayout> initial = policy.initial_layouts(options_.gpus);
        if (initial.size() != options_.gpus)
            throw input_error("policy " + policy.name() + " gave " +
                              std::to_string(initial.size()) + " layouts for " +
                              std::to_string(options_.gpus) + " GPUs");
        gpus_.resize(options_.gpus);
        for (size_t g = 0; g < gpus_.size(); ++g) {
            set_layout(g, initial[g], 0, /*charge=*/false);
            gpus_[g].blocked_until_s = options_.initial_block_s;
            result_.layouts[gpus_[g].layout_event].ready_s = options_.initial_block_s;
            refresh(g, 0);
        }
        size_t next = 0;
        double t = 0;
        while (finished_ < jobs_.size()) {
            while (!events_.empty() && events_.top().version != gpus_[events_.top().gpu].version)
                events_.pop();
            const double arrival = next < jobs_.size() ? jobs_[next].arrival_s : kInfinity;
            const double event = events_.empty() ? kInfinity : events_.top().at_s;
            if (!(std::min(arrival, event) < kInfinity))
                throw input_error("stream: jobs wait with nothing running (a policy's layouts "
                                  "hold no partition for them)");
            // At one time, GPUs first: jobs that end free their partitions for the arrivals.
            if (event <= arrival) {
                const size_t g = events_.top().gpu;
                events_.pop();
                t = event;
                advance(g, t);
                refresh(g, t);
                continue;
            }
            t = arrival;
            if (policy.decides_on_arrival()) {
                for (size_t g = 0; g < gpus_.size(); ++g)
                    advance(g, t);
                StreamView now = view(t);
                now.arriving = next;
                for (const LayoutChange& c : policy.on_arrival(now))
                    change_layout(c.gpu, c.layout, t);
            }
            dispatch(next, t);
            ++next;
        }
        for (size_t g = 0; g < gpus_.size(); ++g)
            advance(g, t);
        summarise(t);
        return std::move(result_);
    }

  private:
    const plan::JobOnSize& on(size_t stream_job, size_t size) const {
        return problem_.jobs[jobs_[stream_job].job].on[size];
    }
    double rest_s(size_t stream_job, size_t size) const {
        return on(stream_job, size).time_s - on(stream_job, size).startup_s;
    }
    bool partitioned(size_t g) const { return gpus_[g].layout.has_value(); }
    double speed_ratio(size_t g) const {
        return partitioned(g) ? options_.speed_ratio_partitioned : options_.speed_ratio_whole;
    }
    // A waiting job's time alone on a size: its start-up unless paid, and its work left.
    double time_left_s(size_t stream_job, size_t size) const {
        return (startup_done_[stream_job] ? 0.0 : on(stream_job, size).startup_s) +
               rest_left_[stream_job] * rest_s(stream_job, size);
    }

    void set_layout(size_t g, const GpuLayout& layout, double t, bool charge) {
        Gpu& gpu = gpus_[g];
        gpu.layout = layout;
        gpu.parts.clear();
        if (layout) {
            for (const mig::Instance& i : layout->instances) {
                gpu.parts.push_back({problem_.size_index(i.profile),
                                     i.profile + "@" + std::to_string(i.start), {}, {}});
            }
        } else {
            gpu.parts.push_back({problem_.whole(), "whole GPU", {}, {}});
        }
        if (charge)
            ++result_.reconfigurations;
        gpu.started_at_s = -1;
        gpu.started_now.clear();
        gpu.layout_event = result_.layouts.size();
        result_.layouts.push_back({t, g, plan::describe(plan::GpuPlan{layout, {}}), layout, t});
    }

    // A layout change: the GPU's jobs stop (keeping their progress), it is blocked for the
    // change's cost, and its jobs are placed again, the stopped ones first.
    void change_layout(size_t g, const GpuLayout& layout, double t) {
        if (g >= gpus_.size() || gpus_[g].layout == layout)
            return;
        advance(g, t);
        std::vector<size_t> displaced;
        size_t instances = gpus_[g].layout ? gpus_[g].layout->instances.size() : 0;
        for (Partition& p : gpus_[g].parts) {
            if (p.running) {
                displaced.push_back(p.running->job);
                RunSegment& s = result_.segments[p.running->segment];
                s.end_s = t;
                s.work_left_to = rest_left_[p.running->job];
                s.stopped = true;
                ++result_.jobs[p.running->job].restarts;
                startup_done_[p.running->job] = false;  // it starts again where it resumes
            }
        }
        for (Partition& p : gpus_[g].parts)
            displaced.insert(displaced.end(), p.queue.begin(), p.queue.end());
        instances += layout ? layout->instances.size() : 0;
        set_layout(g, layout, t, /*charge=*/true);
        gpus_[g].blocked_until_s =
            t + options_.reconfiguration.orchestrator_s +
            options_.reconfiguration.per_instance_s * static_cast<double>(instances);
        result_.layouts[gpus_[g].layout_event].ready_s = gpus_[g].blocked_until_s;
        refresh(g, t);
        for (size_t job : displaced)
            dispatch(job, t);
    }

    // Counts GPU g's progress from its last update to t, in its phase.
    void advance(size_t g, double t) {
        Gpu& gpu = gpus_[g];
        const double dt = t - gpu.updated_s;
        gpu.updated_s = t;
        if (!(dt > 0))
            return;
        bool any = false;
        for (Partition& p : gpu.parts) {
            if (!p.running)
                continue;
            any = true;
            Running& r = *p.running;
            if (r.delay_left_s > 0) {
                // A phase ends at its event: a wait and a start-up are never in one interval.
                r.delay_left_s = r.delay_left_s <= dt * (1 + 1e-12) ? 0 : r.delay_left_s - dt;
            } else if (r.startup_left_s > 0) {
                // A phase ends at its event, so a start-up and a rest are never in one interval.
                r.startup_left_s = r.startup_left_s <= dt * (1 + 1e-12) ? 0 : r.startup_left_s - dt;
            } else {
                const double rest = rest_s(r.job, p.size);
                const double done = rest > 0 ? dt * gpu.rate.speed * speed_ratio(g) / rest : 1;
                double& left = rest_left_[r.job];
                left = left <= done * (1 + 1e-12) ? 0 : left - done;
            }
        }
        if (any) {
            gpu.busy_s += dt;
            dynamic_j_ += gpu.rate.dynamic_w * dt * options_.dynamic_energy_ratio;
            if (options_.series_bin_s > 0)
                spread(t - dt, t, gpu.rate.dynamic_w * options_.dynamic_energy_ratio);
        }
    }

    // Twice as long bins, until `time_s` falls in one of at most kMaxSeriesBins.
    void coarsen_to(double time_s) {
        while (time_s / bin_s_ >= double(kMaxSeriesBins)) {
            for (size_t b = 0; b < dynamic_by_bin_j_.size(); ++b)
                dynamic_by_bin_j_[b / 2] =
                    (b % 2 ? dynamic_by_bin_j_[b / 2] : 0.0) + dynamic_by_bin_j_[b];
            dynamic_by_bin_j_.resize((dynamic_by_bin_j_.size() + 1) / 2);
            bin_s_ *= 2;
        }
    }

    // Dynamic power `power_w` from `from_s` to `to_s`, into the series' bins.
    void spread(double from_s, double to_s, double power_w) {
        coarsen_to(to_s);
        const double bin = bin_s_;
        for (size_t b = static_cast<size_t>(from_s / bin); double(b) * bin < to_s; ++b) {
            if (b >= dynamic_by_bin_j_.size())
                dynamic_by_bin_j_.resize(b + 1, 0.0);
            const double overlap =
                std::min(to_s, double(b + 1) * bin) - std::max(from_s, double(b) * bin);
            if (overlap > 0)
                dynamic_by_bin_j_[b] += power_w * overlap;
        }
    }

    // The figures at the end of each bin, from the jobs' ends and the dynamic energy per bin.
    void summarise_series(double horizon_s) {
        coarsen_to(horizon_s);
        const double bin = bin_s_;
        result_.series_bin_s = bin;
        const size_t bins = std::max<size_t>(1, static_cast<size_t>(std::ceil(horizon_s / bin)));
        std::vector<double> ends;
        ends.reserve(jobs_.size());
        for (const JobOutcome& j : result_.jobs)
            ends.push_back(j.end_s);
        std::sort(ends.begin(), ends.end());
        const double idle_w = problem_.idle_power_w * static_cast<double>(gpus_.size());
        double dynamic_j = 0;
        for (size_t b = 0; b < bins; ++b) {
            SeriesPoint p;
            p.end_s = b + 1 == bins ? horizon_s : double(b + 1) * bin;
            if (b < dynamic_by_bin_j_.size())
                dynamic_j += dynamic_by_bin_j_[b];
            p.energy_j = idle_w * p.end_s + dynamic_j;
            for (size_t j = 0; j < jobs_.size(); ++j) {
                if (jobs_[j].deadline_s)
                    p.tardiness_s += std::max(
                        0.0, std::min(result_.jobs[j].end_s, p.end_s) - *jobs_[j].deadline_s);
            }
            p.jobs_done = static_cast<size_t>(
                std::upper_bound(ends.begin(), ends.end(), p.end_s) - ends.begin());
            result_.series.push_back(p);
        }
    }

    // After GPU g changed at t: its ended jobs leave, waiting ones start where a partition is
    // free (unless it is blocked), and its phase and next event are set again.
    void refresh(size_t g, double t) {
        Gpu& gpu = gpus_[g];
        // A phase whose rest no longer moves the clock (t + rest == t, late in a long stream)
        // has ended: rounding must not hold it open.
        for (Partition& p : gpu.parts) {
            if (!p.running)
                continue;
            if (p.running->delay_left_s > 0 && t + p.running->delay_left_s <= t)
                p.running->delay_left_s = 0;
            if (p.running->delay_left_s <= 0 && p.running->startup_left_s > 0 &&
                t + p.running->startup_left_s <= t)
                p.running->startup_left_s = 0;
            if (p.running->delay_left_s <= 0 && p.running->startup_left_s <= 0 &&
                gpu.rate.speed > 0 && t + time_to_phase_end(g, p) <= t)
                rest_left_[p.running->job] = 0;
        }
        for (Partition& p : gpu.parts) {
            if (p.running && p.running->delay_left_s <= 0 && p.running->startup_left_s <= 0 &&
                rest_left_[p.running->job] <= 0) {
                result_.jobs[p.running->job].end_s = t;
                RunSegment& s = result_.segments[p.running->segment];
                s.end_s = t;
                s.work_left_to = 0;
                p.running.reset();
                ++finished_;
            }
        }
        const bool blocked = gpu.blocked_until_s > t;
        if (!blocked) {
            for (size_t k = 0; k < gpu.parts.size(); ++k) {
                Partition& p = gpu.parts[k];
                if (p.running || p.queue.empty())
                    continue;
                const size_t job = p.queue.front();
                p.queue.pop_front();
                p.running = Running{job, 0, startup_done_[job] ? 0.0 : on(job, p.size).startup_s,
                                    result_.segments.size()};
                if (gpu.started_at_s != t)
                    gpu.started_now.clear();
                gpu.started_at_s = t;
                gpu.started_now.push_back(k);
                result_.segments.push_back(
                    {job, g, k, p.label, gpu.layout_event, t, t, rest_left_[job], 0, false});
                startup_done_[job] = true;
                JobOutcome& o = result_.jobs[job];
                if (!started_[job])
                    o.start_s = t;
                started_[job] = true;
                o.gpu = g;
                o.partition = p.label;
            }
        }
        delay_starts(g, t);
        gpu.rate = rate_of(g);
        double next = blocked ? gpu.blocked_until_s : kInfinity;
        for (const Partition& p : gpu.parts) {
            if (p.running)
                next = std::min(next, t + time_to_phase_end(g, p));
        }
        ++gpu.version;
        if (next < kInfinity)
            events_.push({next, g, gpu.version});
    }

    // Jobs that start at one moment on a partitioned GPU's partitions each wait
    // start_delay_s(per partner, how many) before their start-up, as plan's model has them.
    void delay_starts(size_t g, double t) {
        Gpu& gpu = gpus_[g];
        if (gpu.started_at_s != t || !partitioned(g))
            return;
        const double delay_s = plan::start_delay_s(problem_.correction.start_delay_per_partner_s,
                                                   gpu.started_now.size());
        for (size_t k : gpu.started_now) {
            if (gpu.parts[k].running)
                gpu.parts[k].running->delay_left_s = delay_s;
        }
    }

    // Seconds until partition p's running job ends its wait, its start-up or its rest.
    double time_to_phase_end(size_t g, const Partition& p) const {
        if (p.running->delay_left_s > 0)
            return p.running->delay_left_s;
        if (p.running->startup_left_s > 0)
            return p.running->startup_left_s;
        const double speed = gpus_[g].rate.speed * speed_ratio(g);
        return rest_left_[p.running->job] * rest_s(p.running->job, p.size) / speed;
    }

    plan::PhaseRate rate_of(size_t g) const {
        size_t busy = 0;
        double wanted_w = 0, memory_pct = 0;
        for (const Partition& p : gpus_[g].parts) {
            if (!p.running)
                continue;
            ++busy;
            if (p.running->delay_left_s > 0)
                continue;  // waiting: busy, no power, no memory traffic
            const plan::JobOnSize& o = on(p.running->job, p.size);
            wanted_w += std::max(0.0, o.power_w - problem_.idle_power_w);
            if (p.running->startup_left_s <= 0)
                memory_pct += o.memory_pct;
        }
        return plan::phase_rate(busy, partitioned(g), wanted_w, memory_pct, problem_.correction,
                                problem_.idle_power_w, problem_.power_limit_w);
    }

    // When partition p is predicted free, at alone speeds: its running job's time left as of t
    // (its progress since the GPU's last update counted in its phase), then its queue.
    double free_at(size_t g, const Partition& p, double t) const {
        const Gpu& gpu = gpus_[g];
        double at = std::max(t, gpu.blocked_until_s);
        if (p.running) {
            const size_t job = p.running->job;
            double delay = p.running->delay_left_s, startup = p.running->startup_left_s,
                   left = rest_left_[job];
            double elapsed = t - gpu.updated_s;
            if (elapsed > 0) {
                const double waited = std::min(delay, elapsed);
                delay -= waited;
                elapsed -= waited;
                const double in_rest = std::max(0.0, elapsed - startup);
                startup = std::max(0.0, startup - elapsed);
                const double rest = rest_s(job, p.size);
                if (rest > 0)
                    left = std::max(0.0, left - in_rest * gpu.rate.speed * speed_ratio(g) / rest);
            }
            at += delay + startup + left * rest_s(job, p.size);
        }
        for (size_t job : p.queue)
            at += time_left_s(job, p.size);
        return at;
    }

    // The job waits for its pinned partition (SimulationOptions::pinned_partition), else for the
    // partition where it is predicted to end first (ties: the first GPU, then the first
    // partition in layout order).
    void dispatch(size_t job, double t) {
        double best = kInfinity;
        size_t best_gpu = 0;
        Partition* target = nullptr;
        if (!options_.pinned_partition.empty()) {
            const size_t k = options_.pinned_partition[job];
            if (k < gpus_[0].parts.size() && on(job, gpus_[0].parts[k].size).usable)
                target = &gpus_[0].parts[k];
        }
        for (size_t g = 0; g < gpus_.size() && options_.pinned_partition.empty(); ++g) {
            for (Partition& p : gpus_[g].parts) {
                if (!on(job, p.size).usable)
                    continue;
                const double end = free_at(g, p, t) + time_left_s(job, p.size);
                if (end < best) {
                    best = end;
                    best_gpu = g;
                    target = &p;
                }
            }
        }
        if (!target) {
            std::string layouts;
            for (const Gpu& gpu : gpus_)
                layouts += (layouts.empty() ? "" : ", ") + plan::describe(plan::GpuPlan{gpu.layout, {}});
            const std::string where = options_.pinned_partition.empty()
                                          ? "fits no partition of " + layouts
                                          : "does not fit its pinned partition " +
                                                std::to_string(options_.pinned_partition[job]) +
                                                " of " + layouts;
            throw input_error("stream job " + std::to_string(job) + " (" +
                              problem_.jobs[jobs_[job].job].request.name + ") " + where);
        }
        target->queue.push_back(job);
        if (!target->running && !(gpus_[best_gpu].blocked_until_s > t)) {
            advance(best_gpu, t);
            refresh(best_gpu, t);
        }
    }

    StreamView view(double t) const {
        StreamView v;
        v.now_s = t;
        for (const Gpu& gpu : gpus_) {
            v.layouts.push_back(gpu.layout);
            std::vector<size_t> jobs;
            for (const Partition& p : gpu.parts) {
                if (p.running)
                    jobs.push_back(p.running->job);
            }
            for (const Partition& p : gpu.parts)
                jobs.insert(jobs.end(), p.queue.begin(), p.queue.end());
            std::vector<double> left;
            for (size_t j : jobs)
                left.push_back(rest_left_[j]);
            v.waiting.push_back(jobs.size());
            v.jobs.push_back(std::move(jobs));
            v.work_left.push_back(std::move(left));
        }
        return v;
    }

    void summarise(double horizon_s) {
        result_.horizon_s = horizon_s;
        result_.energy_j =
            problem_.idle_power_w * horizon_s * static_cast<double>(gpus_.size()) + dynamic_j_;
        std::vector<std::optional<double>> ends;
        ends.reserve(jobs_.size());
        for (const JobOutcome& j : result_.jobs)
            ends.emplace_back(j.end_s);
        const CompletionFigures c = completion_figures(jobs_, ends);
        result_.mean_completion_s = c.mean_completion_s;
        result_.p95_completion_s = c.p95_completion_s;
        result_.tardiness_s = c.tardiness_s;
        result_.late_jobs = c.late_jobs;
        double busy_s = 0;
        for (const Gpu& gpu : gpus_)
            busy_s += gpu.busy_s;
        result_.busy_fraction =
            horizon_s > 0 ? busy_s / (horizon_s * static_cast<double>(gpus_.size())) : 0;
        if (options_.series_bin_s > 0)
            summarise_series(horizon_s);
    }

    const plan::Problem& problem_;
    const std::vector<StreamJob>& jobs_;
    SimulationOptions options_;
    std::vector<Gpu> gpus_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    std::vector<double> rest_left_;   // per stream job: fraction of its rest still to run
    std::vector<bool> started_;
    std::vector<bool> startup_done_;  // per stream job: paid, and not stopped since
    size_t finished_ = 0;
    double dynamic_j_ = 0;
    std::vector<double> dynamic_by_bin_j_;  // the series' bins: dynamic energy drawn in each
    double bin_s_ = 0;                      // their length: series_bin_s, doubled as needed
    StreamResult result_;
};

}  // namespace

CompletionFigures completion_figures(const std::vector<StreamJob>& jobs,
                                     const std::vector<std::optional<double>>& end_s) {
    CompletionFigures out;
    std::vector<double> completions;
    double sum = 0;
    for (size_t j = 0; j < jobs.size() && j < end_s.size(); ++j) {
        if (!end_s[j])
            continue;
        completions.push_back(*end_s[j] - jobs[j].arrival_s);
        sum += completions.back();
        if (jobs[j].deadline_s && *end_s[j] > *jobs[j].deadline_s) {
            out.tardiness_s += *end_s[j] - *jobs[j].deadline_s;
            ++out.late_jobs;
        }
    }
    if (!completions.empty()) {
        out.mean_completion_s = sum / static_cast<double>(completions.size());
        out.p95_completion_s = percentile(std::move(completions), 0.95).value_or(0);
    }
    return out;
}

StreamResult simulate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                      Policy& policy, const SimulationOptions& options) {
    if (options.gpus == 0)
        throw input_error("stream: --gpus must be at least 1");
    if (!(options.series_bin_s >= 0) || !std::isfinite(options.series_bin_s))
        throw input_error("--series-bin-s: must be finite seconds >= 0");
    for (size_t j = 0; j < jobs.size(); ++j) {
        if (jobs[j].job >= problem.jobs.size())
            throw input_error("stream job " + std::to_string(j) + ": no such job in the problem");
        if (!std::isfinite(jobs[j].arrival_s) || jobs[j].arrival_s < 0)
            throw input_error("stream job " + std::to_string(j) + ": arrival_s must be finite and >= 0");
        if (!(jobs[j].work_left > 0 && jobs[j].work_left <= 1))
            throw input_error("stream job " + std::to_string(j) + ": work_left must be in (0, 1]");
        if (j > 0 && jobs[j].arrival_s < jobs[j - 1].arrival_s)
            throw input_error("stream job " + std::to_string(j) +
                              ": arrives before the job before it (sort jobs by arrival)");
    }
    if (!options.pinned_partition.empty() &&
        (options.gpus != 1 || options.pinned_partition.size() != jobs.size()))
        throw input_error("stream: pinned partitions are one GPU's, one for every job");
    if (!(options.initial_block_s >= 0) || !std::isfinite(options.initial_block_s))
        throw input_error("stream: initial_block_s must be finite and >= 0");
    for (double ratio : {options.speed_ratio_partitioned, options.speed_ratio_whole,
                         options.dynamic_energy_ratio}) {
        if (!(ratio > 0) || !std::isfinite(ratio))
            throw input_error("stream: a model-error ratio must be positive and finite");
    }
    Simulation simulation(problem, jobs, options);
    return simulation.run(policy);
}

}  // namespace migscope::stream
