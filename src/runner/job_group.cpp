// The group of jobs that run at once: processes, events, the steady-state window, results.
#include "runner/job_group.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <variant>

#include "core/error.h"
#include "core/statistics.h"

#include <fmt/format.h>

namespace migscope::runner {
namespace {

using partition::JobSpec;
using telemetry::Sample;
using telemetry::SampleScope;

constexpr double kTerminateGraceS = 5;
// A training step this large takes minutes on a few CPU cores (mlp's default batch: 13 TFLOP made
// no step in 5 min on two cores), and the run is silent meanwhile: said at `ready`.
constexpr double kCpuHeavyStepFlops = 1e12;

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

}  // namespace

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, s < 10 ? "%.2f s" : "%.1f s", s);
    return buf;
}

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
    if (partition::traits(backend_.kind()).queues_in_worker || launches_[l].jobs.size() != 1)
        return false;
    const partition::Partition& p = spec_.partitions[jobs[launches_[l].jobs.front()].index];
    return p.after_job.has_value() || (spec_.mode == RunMode::kWork && p.start_after_s > 0);
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

// Fixed work on a partition that queues processes: each job starts once the one before it ended
// and its start_after_s have passed since the work started.
void Group::start_queued() {
    const SteadyTime now = SteadyClock::now();
    for (size_t l = 0; l < launches_.size(); ++l) {
        if (!queued(l) || released_[l])
            continue;
        JobState& job = jobs[launch_jobs_[l].front()];
        const partition::Partition& p = spec_.partitions[job.index];
        if (p.after_job) {
            const size_t before = *p.after_job;
            const auto it = std::find_if(jobs.begin(), jobs.end(),
                                         [&](const JobState& j) { return j.index == before; });
            if (it == jobs.end() || !it->ended)
                continue;
        }
        if (p.start_after_s > 0 &&
            !(open_time && seconds_between(*open_time, now) >= p.start_after_s))
            continue;
        released_[l] = true;
        if (job.ended)
            continue;  // failed while it waited
        say("job " + job_spec(job).name + ": starts " +
            (p.after_job ? "after " + spec_.jobs[*p.after_job].name : std::string()) +
            (p.after_job && p.start_after_s > 0 ? ", " : "") +
            (p.start_after_s > 0 ? seconds_text(p.start_after_s) + " after the work started"
                                 : std::string()));
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
        if (ready->device == "cpu" && ready->train_flops_per_step &&
            *ready->train_flops_per_step >= kCpuHeavyStepFlops)
            say("job " + job_spec(job).name + ": a training step is " +
                fmt::format("{:.1f}", *ready->train_flops_per_step / 1e12) +
                " TFLOP, which can take minutes on a CPU; a smaller batch (" + ready->model +
                ":B) or a GPU ends sooner");
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
                lagging += " (step-time CV over " + seconds_text(spec_.steady.min_chunk_s) +
                           " spans " + std::to_string(std::lround(*c.cv * 100)) + " %)";
        }
    }
    warnings_.push_back("window opened after the warm-up timeout (" +
                        seconds_text(spec_.warmup_timeout_s) + ") with jobs not " +
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
        say("all jobs warm after " + seconds_text(seconds_between(started_, now)) +
            ": started the fixed work");
    } else {
        say("all jobs steady after " + seconds_text(seconds_between(started_, now)) +
            ": measuring for " + seconds_text(spec_.duration_s));
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

void Group::drain(SteadyTime now) {
    tell_all(protocol::Command::kStop);
    phase_ = Phase::kDraining;
    drain_started_ = now;
}

void Group::step_open(SteadyTime now, bool all_ended) {
    const double open_s = seconds_between(*open_time, now);
    if (spec_.mode == RunMode::kWork) {
        start_queued();
        if (all_ended) {
            close_window("all jobs finished their work after " + seconds_text(open_s));
            phase_ = Phase::kDone;
        } else if (open_s > spec_.job_timeout_s) {
            for (JobState& j : jobs)
                j.timed_out = !j.ended;
            close_window("job timeout (" + seconds_text(spec_.job_timeout_s) + ")");
            drain(now);
        }
        return;
    }
    const bool one_ended = std::any_of(jobs.begin(), jobs.end(), [&](const JobState& j) {
        return j.ended && j.end_time && *j.end_time > *open_time;
    });
    if (open_s >= spec_.duration_s || one_ended) {
        if (one_ended)
            warnings_.push_back(
                "a job ended during the window: it was closed early, "
                "after " +
                seconds_text(open_s));
        close_window(one_ended ? "a job ended" : "");
        drain(now);
    } else if (open_s - last_report_s_ >= 10) {
        last_report_s_ = open_s;
        say("window " + seconds_text(open_s) + " of " + seconds_text(spec_.duration_s));
    }
}

void Group::step_draining(SteadyTime now) {
    if (std::all_of(children_.begin(), children_.end(),
                    [](const auto& c) { return !c || c->finished(); })) {
        phase_ = Phase::kDone;
    } else if (seconds_between(drain_started_, now) > spec_.drain_timeout_s) {
        warnings_.push_back("jobs did not stop within " + seconds_text(spec_.drain_timeout_s) +
                            " of the window's end: terminated");
        terminate_children();
    }
}

void Group::terminate_children() {
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

void Group::run() {
    start_processes();
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
            drain(now);
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
            case Phase::kOpen:
                step_open(now, all_ended);
                break;
            case Phase::kDraining:
                step_draining(now);
                break;
            case Phase::kDone:
                break;
        }
    }
    reap();
}

std::optional<double> rate_spread_pct(const std::vector<Step>& counted) {
    constexpr size_t kParts = 3;
    if (counted.size() < 2 * kParts)
        return std::nullopt;
    std::vector<double> rates;
    size_t next = 0;
    for (size_t part = 0; part < kParts; ++part) {
        const size_t count = counted.size() / kParts + (part < counted.size() % kParts ? 1 : 0);
        double items = 0, time_s = 0;
        for (size_t k = next; k < next + count; ++k) {
            items += counted[k].items;
            time_s += counted[k].time_s;
        }
        next += count;
        if (items <= 0 || time_s <= 0)
            return std::nullopt;
        rates.push_back(items / time_s);
    }
    std::sort(rates.begin(), rates.end());
    return 100.0 * (rates.back() - rates.front()) / rates[kParts / 2];
}

JobResult job_result(const RunSpec& spec, const JobState& s, const Group& g, bool interrupted) {
    JobResult r;
    r.spec = spec.jobs[s.index];
    r.partition = spec.partitions[s.index];
    r.sms = s.sms;
    r.item_unit = s.item_unit;
    r.stderr_path = s.stderr_path;
    std::vector<double> times;
    std::vector<Step> counted;
    const Step* first = nullptr;
    const Step* last = nullptr;
    for (const Step& step : s.steps) {
        if (step.warmup || !g.open_time || !g.close_time)
            continue;
        if (step.end <= *g.open_time || step.end > *g.close_time + std::chrono::milliseconds(1))
            continue;
        ++r.steps;
        r.items += step.items;
        r.busy_s += step.time_s;
        times.push_back(step.time_s);
        counted.push_back(step);
        first = first ? first : &step;
        last = &step;
    }
    if (first)  // the steps arrive in order: the first one's start to the last one's end
        r.span_s = std::max(r.busy_s, seconds_between(first->end, last->end) + first->time_s);
    if (r.busy_s > 0 && r.items > 0)
        r.items_per_s = r.items / r.busy_s;
    r.step_time_p50_s = percentile(times, 0.5);
    r.step_time_p95_s = percentile(times, 0.95);
    r.items_per_s_spread_pct = rate_spread_pct(counted);
    if (r.items_per_s && s.flops_per_item && s.peak_flops_per_s && s.sms && spec.device_sms &&
        *spec.device_sms > 0) {
        const double partition_peak = *s.peak_flops_per_s * *s.sms / *spec.device_sms;
        r.mfu = *r.items_per_s * *s.flops_per_item / partition_peak;
    }
    if (spec.mode == RunMode::kWork && s.end_time && g.open_time)
        r.finish_s = seconds_between(*g.open_time, *s.end_time);
    if (spec.mode == RunMode::kWork && g.open_time) {
        for (const Step& step : s.steps) {
            if (step.warmup)
                continue;
            const double began_s = seconds_between(*g.open_time, step.end) - step.time_s;
            r.start_s = std::max(0.0, std::min(r.start_s.value_or(began_s), began_s));
        }
    }
    if (s.result_event) {
        r.peak_memory_bytes = s.result_event->peak_memory_bytes;
        r.step_mode = protocol::to_string(s.result_event->step_mode);
    }

    // Status: a result event is success; otherwise the error event or how the process ended.
    if (s.timed_out) {
        r.status = JobStatus::kTimedOut;
        r.message = "still running after " + seconds_text(spec.job_timeout_s);
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

}  // namespace migscope::runner
