// One group of jobs running at once: their processes started, their events followed, the
// measurement window opened at steady state and closed; each job's state turned into its result.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/child_process.h"
#include "protocol/commands.h"
#include "protocol/events.h"
#include "runner/run.h"
#include "telemetry/sample.h"

namespace migscope::runner {

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
    std::optional<telemetry::Sample> open_sample, close_sample;
    bool interrupted = false;

  private:
    enum class Phase { kWarming, kOpen, kDraining, kDone };
    void say(const std::string& line) const {
        if (hooks_.progress)
            hooks_.progress(line);
    }
    const partition::JobSpec& job_spec(const JobState& j) const { return spec_.jobs[j.index]; }
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
    // The phases of run()'s loop: the open window's checks (work done, timeout, duration, a job
    // that ended, progress every 10 s) and the drain's (all stopped, or the stragglers ended).
    void step_open(SteadyTime now, bool all_ended);
    void step_draining(SteadyTime now);
    // Tells every job to stop and waits for them: the drain starts now.
    void drain(SteadyTime now);
    // Ends every child still running, each of its jobs ended with how the child ended.
    void terminate_children();
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
    SteadyTime drain_started_;  // when the drain began (Phase::kDraining)
    double last_report_s_ = 0;  // the window's length at its last progress line
    bool warned_bad_line_ = false;
};

// The job's result from its state: steps inside the group's window, its status and message.
JobResult job_result(const RunSpec& spec, const JobState& s, const Group& g, bool interrupted);

// How much a job's rate moved over its counted steps (in order): the steps in three consecutive
// parts of equal count (the first parts take the remainder), (max - min) / median of the parts'
// items over their time, in %. None under 6 steps or without items.
std::optional<double> rate_spread_pct(const std::vector<Step>& counted);

// Seconds as progress and messages print them: "3.25 s", "12.5 s".
std::string seconds_text(double s);

}  // namespace migscope::runner
