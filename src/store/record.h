// Plain records of the results store: a run with its jobs, power trace and provenance.
// Optional fields are empty when nothing was measured; the store keeps them NULL, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace migscope::store {

// A partitioned run, or the sequential baseline that belongs to one (its parent).
enum class RunRole { kRun, kBaseline };
std::string to_string(RunRole role);
RunRole parse_run_role(const std::string& text);  // input error naming the text

// Where a result came from: the migscope build and the machine it ran on.
struct Provenance {
    std::string migscope_version;
    std::string migscope_commit;
    std::optional<std::string> gpu_name;  // empty: CPU run or unreadable
    std::optional<std::string> gpu_uuid;
    std::optional<std::string> driver_version;       // e.g. "580.82.07"
    std::optional<std::string> cuda_driver_version;  // e.g. "13.0"
    std::optional<std::string> torch_version;        // empty: not known to the CLI
    std::optional<std::string> mig_mode;             // enabled | disabled | unsupported
    // NVML's enforced board power limit when the run started: the cap that pulls the SM clock
    // down on a busy board (700 W on an H200 SXM, 600 W on an NVL). Empty: CPU run, unreadable,
    // or stored before schema 7.
    std::optional<double> power_limit_w;
    // The CUDA injection library the run's workers loaded (activity/injection.h):
    // "migscope-activity kernels" or "... graphs" for the activity probe, which slows a job and
    // lowers its power; another library's file name; "none"; empty: stored before schema 8.
    std::optional<std::string> cuda_injection;
};

// What was measured of a job: the runner fills these on its results (runner::JobResult) and the
// store keeps them as they are.
struct JobMeasures {
    std::optional<std::string> item_unit;  // images | tokens | (external: items)
    int64_t steps = 0;                     // measured steps counted (in the window)
    double items = 0;                      // items those steps processed
    double busy_s = 0;                     // time in those steps
    // From the first counted step's start to the last one's end: busy_s plus the time between
    // steps (the worker's own, outside its timed steps: 0.9-2.2 % of busy_s on the H200).
    // None without counted steps, and in runs stored before schema 8.
    std::optional<double> span_s;
    std::optional<double> items_per_s;     // items / busy_s
    // How much items_per_s moved within the window: (max - min) / median of the rates of the
    // counted steps in three consecutive parts, in %. None under 6 steps, and in runs stored
    // before schema 9.
    std::optional<double> items_per_s_spread_pct;
    std::optional<double> step_time_p50_s;
    std::optional<double> step_time_p95_s;
    std::optional<double> mfu;  // achieved bf16 FLOP/s over the partition's share of the peak
    std::optional<int64_t> peak_memory_bytes;
    std::optional<double> finish_s;  // fixed work: when it finished, from the window's start
    std::optional<double> energy_j;  // attributed (or measured alone: sequential)
    std::optional<double> energy_per_item_j;
    std::optional<double> normalised_throughput;  // items_per_s / whole-GPU items_per_s
    std::optional<double> sm_clock_mhz;           // median SM clock in the job's window
    // Median of NVML's memory-controller busy % in the job's window: the board's, so the job's
    // own only when it ran alone.
    std::optional<double> memory_utilization_pct;
    // Built-in workloads: "cuda-graph" (the step captured once and replayed) or "eager", as the
    // worker reported; none for external commands and for stores from before it was recorded.
    std::optional<std::string> step_mode;
};

// A stored job: what it was and where it ran, how it ended, and what was measured.
struct JobRecord : JobMeasures {
    std::string name;
    std::optional<std::string> workload;  // empty: an external command
    std::vector<std::string> command;     // external command's argv
    std::string mode;                     // train | finetune
    std::optional<int64_t> batch;
    std::string partition;  // partition label ("3g.71gb", "whole GPU", "cores 0-1")
    std::optional<int64_t> sms_requested;
    std::optional<int64_t> sms;  // as the worker reported
    std::optional<double> memory_limit_gib;
    std::string status;  // ok | out of memory | crashed | failed | timed out | interrupted
    std::string message;
};

// How a stored job stepped: its step_mode, or "eager" where none was recorded (runs stored before
// schema 3 stepped eagerly; external commands are not built-in steps at all).
inline std::string step_mode_of(const JobRecord& job) {
    return job.step_mode.value_or("eager");
}

// One point of the power trace, its time from the run's start.
struct TraceSample {
    double t_s = 0;
    std::optional<double> power_instant_w;
    std::optional<double> power_average_w;
    std::optional<double> energy_j;  // board counter, absolute
    std::optional<double> sm_clock_mhz;
    std::optional<double> memory_used_mib;
    std::optional<double> gpu_utilization_pct;     // NVML: time a kernel ran, last period
    std::optional<double> memory_utilization_pct;  // NVML: time memory was read or written
};

struct RunRecord {
    int64_t id = 0;          // assigned by the store
    std::string started_at;  // UTC, ISO 8601: 2026-11-30T03:34:15Z
    RunRole role = RunRole::kRun;
    std::optional<int64_t> parent_id;  // a baseline's run
    std::string label;                 // free-form, from the user
    // Runs of an experiment sweep (`migscope run SPEC`): the spec's name and the cell's key
    // (experiment/expand.h); empty for a run made from the command line.
    std::optional<std::string> experiment;
    std::optional<std::string> cell_key;
    // A run over several GPUs of one host (runner/host_run.h) is a row per GPU: its NVML index
    // and the id of the host run's first GPU row, which all its rows share (the first's own id).
    // Both empty for a one-GPU run.
    std::optional<int64_t> gpu_index;
    std::optional<int64_t> host_run_id;
    std::string backend;
    std::string mode;  // duration | work
    std::optional<std::string> layout;
    double window_s = 0;
    std::optional<double> counter_energy_j;
    std::optional<double> trace_energy_j;
    std::optional<double> disagreement_pct;
    std::optional<double> average_power_w;
    std::optional<double> peak_power_w;
    int64_t power_samples = 0;
    std::optional<double> max_gap_s;
    std::optional<double> idle_power_w;
    // The idle state idle_power_w was measured in (telemetry/idle_baseline.h): "clocks-up" (idle
    // with the SM clock still up), "deep" (clock dropped) or "no-clock" (no clock reading: CPU);
    // none in runs stored before states were recorded (schema 3 and older).
    std::optional<std::string> idle_state;
    std::optional<double> deep_idle_power_w;  // deep idle, when the idle probes saw it
    std::optional<double> sm_clock_mhz;
    std::string attribution_method;
    std::optional<double> aggregate_normalised_throughput;
    bool interrupted = false;
    std::vector<std::string> warnings;
    Provenance provenance;
    std::vector<JobRecord> jobs;
    std::vector<TraceSample> trace;  // empty when read without the trace
};

}  // namespace migscope::store
