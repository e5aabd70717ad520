// The run loop: start the jobs' processes, follow their events, open and close the measurement
// window, collect results, attribute energy.
#include "runner/run.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <variant>

#include "core/child_process.h"
#include "core/error.h"
#include "core/statistics.h"
#include "protocol/commands.h"
#include "protocol/events.h"
#include "telemetry/attribution.h"
#include "telemetry/sampler.h"

#include <fmt/format.h>

namespace migscope::runner {
namespace {

using partition::JobSpec;
using telemetry::Sample;
using telemetry::SampleScope;

constexpr double kTerminateGraceS = 5;

struct Step {
    SteadyTime end;
    double time_s = 0;
    double items = 0;
    bool warmup = false;
};

// What the runner knows about one job while the run goes on.
struct JobState {
    size_t index = 0;    // in RunSpec::jobs
    bool warm = false;   // kWork: waiting for "start"
    bool ended = false;  // result, error or process exit
    std::optional<SteadyTime> end_time;
    std::optional<std::string> item_unit;
    std::optional<double> items_per_step;
    std::optional<double> flops_per_item;
    std::optional<double> peak_flops_per_s;  // the whole device's dense bf16 peak
    std::optional<unsigned> sms;
    std::optional<std::string> torch_version;  // as the worker reported it
    std::vector<Step> steps;
    std::vector<double> measured_step_times_s;  // post-warm-up, for the steady-state check
    std::optional<protocol::ResultEvent> result_event;
    std::optional<std::string> error_message;
    std::optional<ExitStatus> exit;
    bool stopped_by_runner = false;  // external command terminated at the window's end
    bool timed_out = false;
    std::string stderr_path;
    std::optional<SteadyTime> launched_at;  // its process started (queued commands start late)
};

// CUDA's and the partition's words, LibTorch's CPU allocator ("DefaultCPUAllocator: can't
// allocate memory: ... Error code 12 (Cannot allocate memory)") and C++'s std::bad_alloc.
bool mentions_out_of_memory(std::string message) {
    std::transform(message.begin(), message.end(), message.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* words : {"out of memory", "exceeded its memory limit", "can't allocate memory",
                              "cannot allocate memory", "bad_alloc"}) {
        if (message.find(words) != std::string::npos)
            return true;
    }
    return false;
}

std::string fmt_s(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, s < 10 ? "%.2f s" : "%.1f s", s);
    return buf;
}

// One group of jobs running at once (all jobs of a run; one job at a time for sequential).
class Group {
  public:
    Group(const RunSpec& spec, std::vector<size_t> job_indices, const partition::Backend& backend,
          telemetry::PowerSource* power, const RunHooks& hooks, std::vector<std::string>& warnings)
        : spec_(spec),
          indices_(std::move(job_indices)),
          backend_(backend),
          power_(power),
          hooks_(hooks),
          warnings_(warnings) {}

    void run();

    std::vector<JobState> jobs;
    std::optional<SteadyTime> open_time, close_time;
    std::optional<Sample> open_sample, close_sample;
    bool interrupted = false;

  private:
    enum class Phase { kWarming, kOpen, kDraining, kDone };
    void say(const std::string& line) const {
        if (hooks_.progress)
            hooks_.progress(line);
    }
    const JobSpec& job_spec(const JobState& j) const { return spec_.jobs[j.index]; }
    void start_processes();
    void pump(int timeout_ms);
    void handle_event(JobState& job, const protocol::EventBody& event, SteadyTime now);
    void handle_progress_line(JobState& job, const std::string& line, SteadyTime now);
    void reap();
    bool all_alive_ready_to_open(SteadyTime now);
    void open_window(SteadyTime now);
    void close_window(const std::string& why);
    void tell_all(protocol::Command command);
    bool queued(size_t launch) const;
    void spawn(size_t launch);
    void start_queued();
    bool interrupt_requested() const {
        return hooks_.interrupt != nullptr && hooks_.interrupt->load();
    }

    const RunSpec& spec_;
    std::vector<size_t> indices_;
    const partition::Backend& backend_;
    telemetry::PowerSource* power_;
    const RunHooks& hooks_;
    std::vector<std::string>& warnings_;
    std::vector<partition::Launch> launches_;
    std::vector<std::optional<ChildProcess>> children_;
    std::vector<std::vector<size_t>> launch_jobs_;  // launch -> positions in `jobs`
    // Queues of processes (a job per launch, `after_job` set; the green worker queues its own):
    // whether the launch was told to start its work (or, an external command, started at all).
    std::vector<bool> released_;
    Phase phase_ = Phase::kWarming;
    SteadyTime started_;
    bool warned_bad_line_ = false;
};

void Group::start_processes() {
    std::vector<JobSpec> specs;
    std::vector<partition::Partition> partitions;
    for (size_t i : indices_) {
        specs.push_back(spec_.jobs[i]);
        partitions.push_back(spec_.partitions.at(i));
    }
    partition::JobControl control;
    control.warmup_steps = spec_.warmup_steps;
    control.cuda_graph = spec_.cuda_graph;
    if (spec_.mode == RunMode::kWork) {
        control.steps = spec_.work_steps;
        control.hold_after_warmup = true;
    }
    launches_ = backend_.launches(specs, partitions, control);
    for (size_t p = 0; p < indices_.size(); ++p) {
        JobState s;
        s.index = indices_[p];
        jobs.push_back(s);
    }
    started_ = SteadyClock::now();
    children_.resize(launches_.size());
    released_.assign(launches_.size(), false);
    for (size_t l = 0; l < launches_.size(); ++l) {
        launch_jobs_.push_back(launches_[l].jobs);
        for (size_t p : launches_[l].jobs)
            jobs[p].stderr_path = launches_[l].child.stderr_path;
        // A built-in job builds and warms up now. An external command has no warm-up to wait
        // for: with fixed work it starts when the work does (open_window), so that its whole run,
        // start-up included, lies in the measured makespan as it did when it was profiled alone;
        // queued, when the job before it ends (start_queued).
        const bool external = job_spec(jobs[launch_jobs_[l].front()]).external();
        if (!(external && (queued(l) || spec_.mode == RunMode::kWork)))
            spawn(l);
    }
}

bool Group::queued(size_t l) const {
    return !partition::traits(backend_.kind()).queues_in_worker && launches_[l].jobs.size() == 1 &&
           spec_.partitions[jobs[launches_[l].jobs.front()].index].after_job.has_value();
}

void Group::spawn(size_t l) {
    const SteadyTime now = SteadyClock::now();
    for (size_t p : launches_[l].jobs)
        jobs[p].launched_at = now;
    try {
        children_[l].emplace(ChildProcess::start(launches_[l].child));
    } catch (const Error& e) {
        for (size_t p : launches_[l].jobs) {
            jobs[p].ended = true;
            jobs[p].end_time = now;
            jobs[p].error_message = e.what();
        }
    }
}

// Fixed work on a partition that queues processes: each job starts once the one before it ended.
void Group::start_queued() {
    for (size_t l = 0; l < launches_.size(); ++l) {
        if (!queued(l) || released_[l])
            continue;
        JobState& job = jobs[launch_jobs_[l].front()];
        const size_t before = *spec_.partitions[job.index].after_job;
        const auto it = std::find_if(jobs.begin(), jobs.end(),
                                     [&](const JobState& j) { return j.index == before; });
        if (it == jobs.end() || !it->ended)
            continue;
        released_[l] = true;
        if (job.ended)
            continue;  // failed while it waited
        say("job " + job_spec(job).name + ": starts after " + spec_.jobs[before].name);
        if (job_spec(job).external())
            spawn(l);
        else if (children_[l] && !children_[l]->finished())
            children_[l]->write_line(protocol::to_line(protocol::Command::kStart));
    }
}

void Group::handle_event(JobState& job, const protocol::EventBody& event, SteadyTime now) {
    if (const auto* ready = std::get_if<protocol::ReadyEvent>(&event)) {
        job.item_unit = ready->item_unit;
        job.items_per_step = static_cast<double>(ready->items_per_step);
        if (ready->train_flops_per_step && *job.items_per_step > 0)
            job.flops_per_item = *ready->train_flops_per_step / *job.items_per_step;
        if (ready->sms)
            job.sms = static_cast<unsigned>(*ready->sms);
        job.torch_version = ready->torch_version;
        // The worker scales its device's peak by sms / device_sms; under MPS the device it sees
        // is already the client's share, so undo its scaling and redo it against the whole GPU.
        if (ready->peak_flops_per_s && ready->device_sms && job.sms && *job.sms > 0)
            job.peak_flops_per_s = *ready->peak_flops_per_s * *ready->device_sms / *job.sms;
        say("job " + job_spec(job).name + ": ready" +
            (job.sms ? " on " + std::to_string(*job.sms) + " SMs" : std::string()));
    } else if (const auto* step = std::get_if<protocol::StepEvent>(&event)) {
        Step s;
        s.end = now;
        s.time_s = step->step_time_s;
        s.items = job.items_per_step.value_or(0.0);
        s.warmup = step->warmup;
        job.steps.push_back(s);
        if (!s.warmup)
            job.measured_step_times_s.push_back(s.time_s);
    } else if (std::holds_alternative<protocol::WarmEvent>(event)) {
        job.warm = true;
    } else {
        if (const auto* result = std::get_if<protocol::ResultEvent>(&event)) {
            job.result_event = *result;
            // A built-in workload asked for a CUDA graph and stepped eagerly (capture failed).
            if (result->eager_reason)
                warnings_.push_back(
                    "job " + job_spec(job).name +
                    " stepped eagerly, without a CUDA graph: " + *result->eager_reason);
        } else if (const auto* error = std::get_if<protocol::ErrorEvent>(&event)) {
            job.error_message = error->message;
        }
        job.ended = true;
        job.end_time = now;
    }
}

// External commands may write {"event": "step", "items": N, "step_time_s": S} lines on fd 3.
void Group::handle_progress_line(JobState& job, const std::string& line, SteadyTime now) {
    const protocol::ParsedProgress parsed = protocol::parse_progress_line(line);
    if (!parsed.step) {
        if (!warned_bad_line_) {
            warnings_.push_back("job " + job_spec(job).name + ": ignored a progress line (" +
                                parsed.error + "): " + line.substr(0, 200));
            warned_bad_line_ = true;
        }
        return;
    }
    Step s;
    s.end = now;
    const SteadyTime previous =
        job.steps.empty() ? job.launched_at.value_or(started_) : job.steps.back().end;
    s.time_s = parsed.step->step_time_s.value_or(seconds_between(previous, now));
    s.items = parsed.step->items.value_or(0.0);
    job.steps.push_back(s);
    job.measured_step_times_s.push_back(s.time_s);
    if (!job.item_unit)
        job.item_unit = parsed.step->item_unit.value_or(job_spec(job).item_unit.value_or("items"));
}

void Group::pump(int timeout_ms) {
    std::vector<pollfd> fds;
    for (auto& child : children_) {
        if (!child)
            continue;
        for (int fd : {child->stdout_fd(), child->progress_fd()}) {
            if (fd >= 0)
                fds.push_back({fd, POLLIN, 0});
        }
    }
    if (!fds.empty())
        ::poll(fds.data(), fds.size(), timeout_ms);
    else
        ::poll(nullptr, 0, timeout_ms);
    const SteadyTime now = SteadyClock::now();
    for (size_t l = 0; l < children_.size(); ++l) {
        if (!children_[l])
            continue;
        std::vector<std::string> lines;
        children_[l]->read_stdout_lines(lines);
        for (const std::string& line : lines) {
            const protocol::ParsedEvent parsed = protocol::parse_event_line(line);
            if (!parsed.event) {
                if (!warned_bad_line_) {
                    warnings_.push_back("a job process printed a line that is not an event (" +
                                        parsed.error + "): " + line.substr(0, 200));
                    warned_bad_line_ = true;
                }
                continue;
            }
            // An error of the group as a whole (no job) ends its first job; the others end
            // with the process.
            const size_t tag = static_cast<size_t>(parsed.event->job.value_or(0));
            if (tag < launch_jobs_[l].size())
                handle_event(jobs[launch_jobs_[l][tag]], parsed.event->body, now);
        }
        if (children_[l]->progress_fd() >= 0) {
            std::vector<std::string> progress;
            children_[l]->read_progress_lines(progress);
            for (const std::string& line : progress)
                handle_progress_line(jobs[launch_jobs_[l].front()], line, now);
        }
    }
}

// Notices processes that ended and ends their jobs that have not reported an end.
void Group::reap() {
    for (size_t l = 0; l < children_.size(); ++l) {
        if (!children_[l] || children_[l]->finished() || !children_[l]->try_wait())
            continue;
        // Collect what it wrote before it ended.
        pump(0);
        const ExitStatus status = *children_[l]->try_wait();
        for (size_t p : launch_jobs_[l]) {
            jobs[p].exit = status;
            if (!jobs[p].ended) {
                jobs[p].ended = true;
                jobs[p].end_time = SteadyClock::now();
            }
        }
    }
}

bool Group::all_alive_ready_to_open(SteadyTime now) {
    bool any_alive = false;
    bool all_ready = true;
    for (JobState& j : jobs) {
        if (j.ended)
            continue;
        any_alive = true;
        if (job_spec(j).external())
            continue;  // no warm-up to wait for
        if (spec_.mode == RunMode::kWork)
            all_ready = all_ready && j.warm;
        else
            all_ready = all_ready && check_steady(j.measured_step_times_s, spec_.steady).steady;
    }
    if (!any_alive)
        return false;
    if (all_ready)
        return true;
    if (seconds_between(started_, now) < spec_.warmup_timeout_s)
        return false;
    std::string lagging;
    for (JobState& j : jobs) {
        if (j.ended || job_spec(j).external())
            continue;
        const SteadyCheck c = check_steady(j.measured_step_times_s, spec_.steady);
        if (spec_.mode == RunMode::kWork ? !j.warm : !c.steady) {
            lagging += (lagging.empty() ? "" : ", ") + job_spec(j).name;
            if (c.cv)
                lagging += " (step-time CV over " + fmt_s(spec_.steady.min_chunk_s) + " spans " +
                           std::to_string(std::lround(*c.cv * 100)) + " %)";
        }
    }
    warnings_.push_back("window opened after the warm-up timeout (" +
                        fmt_s(spec_.warmup_timeout_s) + ") with jobs not " +
                        (spec_.mode == RunMode::kWork ? "warm" : "steady") + ": " + lagging);
    return true;
}

void Group::open_window(SteadyTime now) {
    if (power_)
        open_sample = power_->read(SampleScope::kAll);
    open_time = power_ ? open_sample->time : now;
    phase_ = Phase::kOpen;
    if (spec_.mode == RunMode::kWork) {
        tell_all(protocol::Command::kStart);
        for (size_t l = 0; l < launches_.size(); ++l) {
            if (!children_[l] && !queued(l) && !jobs[launch_jobs_[l].front()].ended)
                spawn(l);  // an external command: its work starts now
        }
        say("all jobs warm after " + fmt_s(seconds_between(started_, now)) +
            ": started the fixed work");
    } else {
        say("all jobs steady after " + fmt_s(seconds_between(started_, now)) + ": measuring for " +
            fmt_s(spec_.duration_s));
    }
}

void Group::close_window(const std::string& why) {
    if (power_)
        close_sample = power_->read(SampleScope::kAll);
    close_time = power_ ? close_sample->time : SteadyClock::now();
    if (!why.empty())
        say("window closed: " + why);
}

void Group::tell_all(protocol::Command command) {
    for (size_t l = 0; l < children_.size(); ++l) {
        if (!children_[l] || children_[l]->finished())
            continue;
        const bool external = job_spec(jobs[launch_jobs_[l].front()]).external();
        if (command == protocol::Command::kStart && queued(l))
            continue;  // started when the job before it ends (start_queued)
        if (command == protocol::Command::kStop && external) {
            for (size_t p : launch_jobs_[l])
                jobs[p].stopped_by_runner = !jobs[p].ended;
            children_[l]->signal_group(SIGTERM);
        } else if (!external) {
            children_[l]->write_line(protocol::to_line(command));
        }
    }
}

void Group::run() {
    start_processes();
    SteadyTime drain_started;
    double last_report_s = 0;
    while (phase_ != Phase::kDone) {
        pump(50);
        reap();
        const SteadyTime now = SteadyClock::now();
        const bool all_ended =
            std::all_of(jobs.begin(), jobs.end(), [](const JobState& j) { return j.ended; });
        if (interrupt_requested() && phase_ != Phase::kDraining) {
            interrupted = true;
            if (phase_ == Phase::kOpen)
                close_window("interrupted");
            tell_all(protocol::Command::kStop);
            phase_ = Phase::kDraining;
            drain_started = now;
            continue;
        }
        switch (phase_) {
            case Phase::kWarming:
                if (all_ended) {
                    phase_ = Phase::kDone;
                } else if (all_alive_ready_to_open(now)) {
                    open_window(now);
                }
                break;
            case Phase::kOpen: {
                const double open_s = seconds_between(*open_time, now);
                if (spec_.mode == RunMode::kWork) {
                    start_queued();
                    if (all_ended) {
                        close_window("all jobs finished their work after " + fmt_s(open_s));
                        phase_ = Phase::kDone;
                    } else if (open_s > spec_.job_timeout_s) {
                        for (JobState& j : jobs)
                            j.timed_out = !j.ended;
                        close_window("job timeout (" + fmt_s(spec_.job_timeout_s) + ")");
                        tell_all(protocol::Command::kStop);
                        phase_ = Phase::kDraining;
                        drain_started = now;
                    }
                    break;
                }
                const bool one_ended =
                    std::any_of(jobs.begin(), jobs.end(), [&](const JobState& j) {
                        return j.ended && j.end_time && *j.end_time > *open_time;
                    });
                if (open_s >= spec_.duration_s || one_ended) {
                    if (one_ended)
                        warnings_.push_back(
                            "a job ended during the window: it was closed early, "
                            "after " +
                            fmt_s(open_s));
                    close_window(one_ended ? "a job ended" : "");
                    tell_all(protocol::Command::kStop);
                    phase_ = Phase::kDraining;
                    drain_started = now;
                } else if (open_s - last_report_s >= 10) {
                    last_report_s = open_s;
                    say("window " + fmt_s(open_s) + " of " + fmt_s(spec_.duration_s));
                }
                break;
            }
            case Phase::kDraining:
                if (std::all_of(children_.begin(), children_.end(),
                                [](const auto& c) { return !c || c->finished(); })) {
                    phase_ = Phase::kDone;
                } else if (seconds_between(drain_started, now) > spec_.drain_timeout_s) {
                    warnings_.push_back("jobs did not stop within " + fmt_s(spec_.drain_timeout_s) +
                                        " of the window's end: terminated");
                    for (size_t l = 0; l < children_.size(); ++l) {
                        if (!children_[l] || children_[l]->finished())
                            continue;
                        // reap() skips finished children: how this one ended is kept here
                        const ExitStatus status = children_[l]->terminate(kTerminateGraceS);
                        for (size_t p : launch_jobs_[l]) {
                            jobs[p].exit = status;
                            jobs[p].ended = true;
                            jobs[p].end_time = jobs[p].end_time.value_or(SteadyClock::now());
                        }
                    }
                }
                break;
            case Phase::kDone:
                break;
        }
    }
    reap();
}

JobResult job_result(const RunSpec& spec, const JobState& s, const Group& g, bool interrupted) {
    JobResult r;
    r.spec = spec.jobs[s.index];
    r.partition = spec.partitions[s.index];
    r.sms = s.sms;
    r.item_unit = s.item_unit;
    r.stderr_path = s.stderr_path;
    std::vector<double> times;
    for (const Step& step : s.steps) {
        if (step.warmup || !g.open_time || !g.close_time)
            continue;
        if (step.end <= *g.open_time || step.end > *g.close_time + std::chrono::milliseconds(1))
            continue;
        ++r.steps;
        r.items += step.items;
        r.busy_s += step.time_s;
        times.push_back(step.time_s);
    }
    if (r.busy_s > 0 && r.items > 0)
        r.items_per_s = r.items / r.busy_s;
    r.step_time_p50_s = percentile(times, 0.5);
    r.step_time_p95_s = percentile(times, 0.95);
    if (r.items_per_s && s.flops_per_item && s.peak_flops_per_s && s.sms && spec.device_sms &&
        *spec.device_sms > 0) {
        const double partition_peak = *s.peak_flops_per_s * *s.sms / *spec.device_sms;
        r.mfu = *r.items_per_s * *s.flops_per_item / partition_peak;
    }
    if (spec.mode == RunMode::kWork && s.end_time && g.open_time)
        r.finish_s = seconds_between(*g.open_time, *s.end_time);
    if (s.result_event) {
        r.peak_memory_bytes = s.result_event->peak_memory_bytes;
        r.step_mode = protocol::to_string(s.result_event->step_mode);
    }

    // Status: a result event is success; otherwise the error event or how the process ended.
    if (s.timed_out) {
        r.status = JobStatus::kTimedOut;
        r.message = "still running after " + fmt_s(spec.job_timeout_s);
    } else if (s.stopped_by_runner && s.exit && s.exit->signal == SIGKILL) {
        // SIGTERM at the window's end is how an external command is stopped; one that ignored
        // it and had to be killed did not end well (it was once reported ok).
        r.status = JobStatus::kFailed;
        r.message = "did not stop on SIGTERM at the window's end: killed";
    } else if (s.result_event || (s.stopped_by_runner && !s.error_message)) {
        r.status = JobStatus::kOk;
    } else if (s.error_message) {
        r.status =
            mentions_out_of_memory(*s.error_message) ? JobStatus::kOutOfMemory : JobStatus::kFailed;
        r.message = *s.error_message;
    } else if (interrupted) {
        r.status = JobStatus::kInterrupted;
        r.message = "stopped by the user";
    } else if (s.exit && s.exit->code == 0 && r.spec.external()) {
        r.status = JobStatus::kOk;  // an external command that finished on its own
    } else {
        r.status = JobStatus::kCrashed;
        r.message = "process ended without a result (" +
                    (s.exit ? s.exit->describe() : std::string("no exit status")) + ")";
    }
    return r;
}

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
        hooks.progress("measuring idle power " + when + " for " + fmt_s(seconds));
    const SteadyTime from = SteadyClock::now();
    const auto until = from + std::chrono::duration_cast<SteadyClock::duration>(
                                  std::chrono::duration<double>(seconds));
    while (SteadyClock::now() < until && !(hooks.interrupt != nullptr && hooks.interrupt->load()))
        ::poll(nullptr, 0, 20);
    return {from, SteadyClock::now()};
}

// The mix without job `i` (for two jobs: the other alone) on the same partitions for
// spec.marginal_probe_s after its warm-up: the board's average power over that window (none when
// it got no window or no energy).
std::optional<double> probe_without(const RunSpec& spec, size_t i,
                                    const partition::Backend& backend, telemetry::Sampler& sampler,
                                    telemetry::PowerSource& power, const RunHooks& hooks,
                                    std::vector<std::string>& warnings, bool& interrupted) {
    RunSpec probe = spec;
    probe.jobs.clear();
    probe.partitions.clear();
    std::vector<size_t> indices;
    for (size_t k = 0; k < spec.jobs.size(); ++k) {
        if (k == i)
            continue;
        indices.push_back(probe.jobs.size());
        probe.jobs.push_back(spec.jobs[k]);
        probe.partitions.push_back(spec.partitions[k]);
    }
    probe.mode = RunMode::kDuration;
    probe.duration_s = spec.marginal_probe_s;
    if (hooks.progress)
        hooks.progress("marginal probe: the mix without " + spec.jobs[i].name + " for " +
                       fmt_s(spec.marginal_probe_s));
    Group g(probe, indices, backend, &power, hooks, warnings);
    g.run();
    interrupted = g.interrupted;
    if (!g.open_sample || !g.close_sample) {
        warnings.push_back("marginal probe without " + spec.jobs[i].name +
                           ": no measurement window");
        return std::nullopt;
    }
    return telemetry::summarize_window(sampler.all(), *g.open_sample, *g.close_sample)
        .average_power_w;
}

// A concurrent group's window, attributed once the idle baseline is known (after the run).
struct PendingAttribution {
    std::vector<size_t> jobs;  // RunSpec::jobs indices, in the order of the vectors below
    double energy_j = 0, window_s = 0;
    std::vector<double> sizes, busy_s, shares;
};

}  // namespace

RunResult execute_run(const RunSpec& spec, const partition::Backend& backend,
                      telemetry::PowerSource* power, const RunHooks& hooks) {
    if (spec.jobs.empty())
        throw input_error("no jobs to run");
    if (spec.partitions.size() != spec.jobs.size())
        throw input_error("one partition per job is needed");
    if (spec.mode == RunMode::kDuration && !(spec.duration_s > 0))
        throw input_error("--duration must be positive");
    if (spec.mode == RunMode::kWork && spec.work_steps <= 0)
        throw input_error("--work must be positive");

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
    std::vector<std::optional<double>> without_power_w(spec.jobs.size());
    if (power && spec.marginal_probe_s > 0 && !sequential && spec.jobs.size() > 1) {
        const bool queued = std::any_of(spec.partitions.begin(), spec.partitions.end(),
                                        [](const auto& p) { return p.after_job.has_value(); });
        if (queued) {
            result.warnings.push_back(
                "no marginal probe: jobs queue on a partition (the probe needs one job per "
                "partition); energy is split by partition size × busy seconds");
        }
        for (size_t i = 0; i < spec.jobs.size() && !queued && !result.interrupted; ++i)
            without_power_w[i] = probe_without(spec, i, backend, *sampler, *power, hooks,
                                               result.warnings, result.interrupted);
    }

    std::vector<std::vector<size_t>> groups;
    if (sequential) {
        for (size_t i = 0; i < spec.jobs.size(); ++i)
            groups.push_back({i});
    } else {
        groups.push_back({});
        for (size_t i = 0; i < spec.jobs.size(); ++i)
            groups.back().push_back(i);
    }

    std::vector<telemetry::EnergySummary> summaries;
    std::vector<double> window_clocks_mhz;  // every window's SM clock readings
    std::vector<PendingAttribution> pending;
    std::vector<JobResult> jobs(spec.jobs.size());
    for (const auto& indices : groups) {
        if (result.interrupted) {
            for (size_t i : indices) {
                jobs[i].spec = spec.jobs[i];
                jobs[i].partition = spec.partitions[i];
                jobs[i].status = JobStatus::kInterrupted;
                jobs[i].message = "not started: the run was interrupted";
            }
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
        PendingAttribution p;
        std::vector<size_t> queue_of;
        for (const JobState& s : g.jobs) {
            JobResult r = job_result(spec, s, g, g.interrupted);
            const partition::Partition& part = spec.partitions[s.index];
            p.jobs.push_back(s.index);
            p.sizes.push_back(part.sms ? static_cast<double>(*part.sms)
                                       : std::max<double>(1.0, static_cast<double>(
                                                                   part.cpu_cores.size())));
            p.busy_s.push_back(r.busy_s);
            size_t head = s.index;  // the first job of its queue
            while (spec.partitions[head].after_job)
                head = *spec.partitions[head].after_job;
            queue_of.push_back(head);
            r.without_power_w = without_power_w[s.index];
            if (r.spec.external() && r.status == JobStatus::kOk && r.steps == 0)
                result.warnings.push_back(
                    "job " + r.spec.name + " reported no progress in the window (lines on "
                    "MIGSCOPE_PROGRESS_FD, e.g. python/migscope_progress): its throughput is "
                    "unknown; its time and energy are measured");
            jobs[s.index] = std::move(r);
            if (!result.torch_version)
                result.torch_version = s.torch_version;
        }
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
        const std::vector<double> clocks =
            readings_in(trace, *g.open_time, *g.close_time, &Sample::sm_clock_mhz);
        const std::vector<double> memory_busy =
            readings_in(trace, *g.open_time, *g.close_time, &Sample::memory_utilization_pct);
        window_clocks_mhz.insert(window_clocks_mhz.end(), clocks.begin(), clocks.end());
        for (const JobState& s : g.jobs) {
            jobs[s.index].sm_clock_mhz = percentile(clocks, 0.5);
            jobs[s.index].memory_utilization_pct = percentile(memory_busy, 0.5);
        }
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
            p.shares = queue_shares(queue_of, p.busy_s);
            pending.push_back(std::move(p));
        }
    }
    if (power && spec.idle_probe_s > 0 && !result.interrupted)
        idle_intervals.push_back(probe_idle(spec.idle_probe_s, hooks, "after the jobs"));
    if (sampler) {
        sampler->stop();
        result.trace = sampler->all();
    }
    result.idle = telemetry::idle_baseline(
        result.trace, idle_intervals, std::min(spec.idle_settle_s, spec.idle_probe_s / 2),
        telemetry::clocks_up_threshold_mhz(result.trace).value_or(0));
    const auto static_power = result.idle.static_power();
    std::string idle_source;
    if (static_power) {
        result.idle_power_w = static_power->second.mean_w;
        idle_source = to_string(static_power->first) + fmt::format(
                                                           ", {:.0f}–{:.0f} W over {} samples",
                                                           static_power->second.min_w,
                                                           static_power->second.max_w,
                                                           static_power->second.samples);
        if (static_power->first == telemetry::IdleState::kDeep && !sequential)
            result.warnings.push_back(
                "idle power seen only in deep idle (SM clock down): the static part undercounts "
                "what a partition pays while its neighbours work");
    }
    for (const PendingAttribution& p : pending) {
        telemetry::AttributionInput in;
        in.energy_j = p.energy_j;
        in.duration_s = p.window_s;
        in.idle_power_w = result.idle_power_w;
        in.partition_sms = p.sizes;
        in.busy_s = p.busy_s;
        in.partition_share = p.shares;
        in.idle_source = idle_source;
        in.without_source = "probe of " + fmt_s(spec.marginal_probe_s) + " each";
        const bool all_probed = std::all_of(p.jobs.begin(), p.jobs.end(),
                                            [&](size_t i) { return without_power_w[i]; });
        if (all_probed && result.idle_power_w) {
            for (size_t i : p.jobs)
                in.without_dynamic_w.push_back(*without_power_w[i] - *result.idle_power_w);
        }
        const telemetry::Attribution a = telemetry::attribute_energy(in);
        for (size_t k = 0; k < p.jobs.size(); ++k)
            jobs[p.jobs[k]].energy_j = a.energy_j[k];
        result.attribution_method = a.method;
    }
    result.sm_clock_mhz = percentile(window_clocks_mhz, 0.5);
    result.energy = combine(summaries);
    for (JobResult& r : jobs) {
        if (r.energy_j && r.items_per_s && r.items > 0) {
            // Energy per item over the window: the job's share of the energy over the items it
            // processed at its measured rate during the whole window (or its own run time).
            const double window_items =
                spec.mode == RunMode::kWork ? r.items : *r.items_per_s * result.window_s;
            if (sequential)
                r.energy_per_item_j = *r.energy_j / r.items;
            else
                r.energy_per_item_j = *r.energy_j / window_items;
        }
    }
    result.jobs = std::move(jobs);
    return result;
}

void normalise_throughput(RunResult& run, const std::vector<JobResult>& whole_gpu) {
    double sum = 0;
    bool any = false;
    for (JobResult& r : run.jobs) {
        for (const JobResult& w : whole_gpu) {
            if (w.spec.name == r.spec.name && w.items_per_s && r.items_per_s &&
                *w.items_per_s > 0) {
                r.normalised_throughput = *r.items_per_s / *w.items_per_s;
                sum += *r.normalised_throughput;
                any = true;
            }
        }
    }
    if (any)
        run.aggregate_normalised_throughput = sum;
}

}  // namespace migscope::runner
