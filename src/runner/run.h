// One run: jobs on partitions under a backend, measured over a steady-state window (--duration)
// or as the makespan of fixed work (--work); per-job results and board energy with attribution.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "partition/backend.h"
#include "runner/steady_state.h"
#include "store/record.h"
#include "telemetry/energy.h"
#include "telemetry/idle_baseline.h"
#include "telemetry/power_source.h"
#include "telemetry/sample.h"

namespace migscope::runner {

enum class RunMode { kDuration, kWork };

struct RunSpec {
    std::vector<partition::JobSpec> jobs;
    std::vector<partition::Partition> partitions;  // partitions[i] runs jobs[i]
    std::string layout;                            // as given, for outputs ("" when none)
    RunMode mode = RunMode::kDuration;
    double duration_s = 60;     // kDuration: window length
    int64_t work_steps = 0;     // kWork: measured steps per built-in job
    unsigned warmup_steps = 3;  // steps every built-in job runs before it counts
    bool cuda_graph = true;     // built-in jobs on a GPU replay their step as a CUDA graph
    SteadyStateCriterion steady;
    double warmup_timeout_s = 300;       // open the window anyway after this long (with a warning)
    double job_timeout_s = 3600;         // kWork: a job still running after this long is timed out
    double drain_timeout_s = 60;  // after "stop": how long jobs get to end before SIGTERM, SIGKILL
    std::optional<unsigned> device_sms;  // SMs of the whole GPU: MFU's peak is scaled by SMs / this
    double sample_hz = 10;
    // Board power sampled this long with no job running, before the jobs and after them (when
    // the SM clock is still up): the idle baseline (telemetry/idle_baseline.h).
    double idle_probe_s = 2;
    // The start of each idle probe that is not counted (power still falling), at most half of it.
    double idle_settle_s = 0.5;
    // > 0 (concurrent backends, more than one job, one job per partition): before the run, the
    // mix without each job in turn (for two jobs: each alone) runs this long after its warm-up,
    // and the dynamic energy is attributed by each job's marginal power (telemetry/attribution.h).
    double marginal_probe_s = 0;
    std::string run_dir;      // created by the caller; job stderr logs go here
};

// kGpuFailed: its GPU failed under it in a multi-GPU run (host_run.h): the GPU's run threw, or
// NVML lost the GPU during the run.
enum class JobStatus { kOk, kOutOfMemory, kCrashed, kFailed, kTimedOut, kInterrupted, kGpuFailed };
std::string to_string(JobStatus status);

// A job's result: the stored measures (store/record.h: throughput, step times, MFU, memory,
// energy, ...) and what only the runner knows.
struct JobResult : store::JobMeasures {
    partition::JobSpec spec;
    partition::Partition partition;
    JobStatus status = JobStatus::kOk;
    std::string message;          // why it failed; empty when ok
    std::optional<unsigned> sms;  // SMs the job really got (reported by the worker)
    std::string stderr_path;
    // Board power of the mix without this job (RunSpec::marginal_probe_s).
    std::optional<double> without_power_w;
    // The same probe's median SM clock and each other job's items/s in it (by RunSpec::jobs index;
    // none for this job and for a job without measured steps): what tells two runs' probes apart
    // when their powers differ.
    std::optional<double> without_sm_clock_mhz;
    std::vector<std::optional<double>> without_items_per_s;
    // kWork: when its first measured step began, in seconds from the window's opening.
    std::optional<double> start_s;
};

struct RunResult {
    partition::BackendKind backend = partition::BackendKind::kSequential;
    RunMode mode = RunMode::kDuration;
    std::string layout;
    double window_s = 0;  // kDuration: the window; kWork: the makespan (summed for sequential)
    telemetry::EnergySummary energy;  // over the window(s); sequential: sums over the jobs' own
    telemetry::IdleBaseline idle;        // idle power by state, before and after the jobs
    std::optional<double> idle_power_w;  // the static power attribution used (idle.static_power)
    // Median SM clock over the window(s): a power-capped GPU clocks down under full load, which
    // makes small partitions look faster than their SM share.
    std::optional<double> sm_clock_mhz;
    std::string attribution_method;
    std::vector<JobResult> jobs;
    std::optional<double> aggregate_normalised_throughput;
    std::vector<std::string> warnings;
    bool interrupted = false;
    std::optional<std::string> torch_version;  // LibTorch of the workers, as they reported it
    std::vector<telemetry::Sample> trace;      // the whole power trace of the run
    SteadyTime trace_origin;                   // time 0 of the trace and the windows
    double trace_origin_unix_s = 0;            // the same moment on the wall clock (Unix s)
    std::vector<std::pair<double, double>> windows_s;  // [open, close] from trace_origin
};

struct RunHooks {
    std::function<void(const std::string&)> progress;  // one line of progress (stderr)
    const std::atomic<bool>* interrupt = nullptr;      // set (e.g. on Ctrl-C) to stop early
};

// Runs the spec. `power` may be null (no energy measured: energy fields stay empty, with a
// warning). Failed jobs are results, not exceptions; errors in the spec or setup throw.
RunResult execute_run(const RunSpec& spec, const partition::Backend& backend,
                      telemetry::PowerSource* power, const RunHooks& hooks);

// Fills each job's normalised throughput from whole-GPU throughputs (by job name) and the
// aggregate: the whole-device seconds of the jobs' work (their items at their whole-GPU speed)
// a second of the run's window. Side by side for a duration it is the sum of the jobs'
// normalised throughputs; one job at a time, their mean (the sequential baseline: 1.00); for
// fixed work, the same work over the makespan (compare_with_baseline's speedup), a job that
// ended early counting only while it ran. Jobs without a throughput add nothing.
void normalise_throughput(RunResult& run, const std::vector<JobResult>& whole_gpu);

}  // namespace migscope::runner
