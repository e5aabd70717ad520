// Job profiles for the planner: each job's measured throughput and board power alone on each
// partition size, the idle board power, and the correction calibrated from measured mixes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mig/catalog.h"
#include "plan/start_delay.h"
#include "store/record.h"

namespace migscope::plan {

// A measured value: the median over repetitions, how many there were and their range.
struct Measured {
    double value = 0;
    int reps = 0;
    double min = 0;
    double max = 0;
};
Measured measured_of(std::vector<double> values);  // input error for no values

// One job alone on one partition size.
struct PartitionProfile {
    std::string partition;  // MIG profile name ("2g.35gb") or "whole GPU"
    // The SMs it ran on: the profile's in the GPU model's catalog (whole GPU: all), or what a
    // green context was granted where that differed (H200: 3g.71gb alone ran on 64).
    unsigned sms = 0;
    Measured items_per_s;
    Measured average_power_w;  // board power while the job ran alone on this partition
    double window_s = 0;       // median measurement window of one repetition
    // A built-in job: the time between its counted steps over their summed time (span_s / busy_s
    // - 1, store::JobMeasures), which items_per_s leaves out: 0.9-2.2 % on the H200. estimate()
    // divides items_per_s by 1 + it. None in files from before it was recorded.
    std::optional<Measured> between_steps_share;
    // A command that reported its steps: the seconds of its run outside them (start-up, imports,
    // building the model, its first step, exit), which do not slow down beside other jobs.
    std::optional<Measured> startup_s;
    // NVML's memory utilisation (% of time the memory was read or written) while the job ran
    // alone here: the memory traffic its neighbours would share. From runs stored since store
    // schema 6 (the runs that recorded it; reps says how many). The model shares the bandwidth
    // among jobs that want more than 100 % together (plan::simulate_gpu).
    std::optional<Measured> memory_utilization_pct;
};

// Every partition size one job was measured on: a built-in job (workload, mode, batch) or an
// external command, known by its name. A command's work is one run of it to its end: its unit is
// "runs", one per step, so that items/s is 1 / its run time, start-up included.
struct JobProfile {
    std::string workload;  // empty: an external command
    std::string mode;
    int64_t batch = 0;
    std::string name;                  // external command: its job name, how plans refer to it
    std::vector<std::string> command;  // external command: the argv it was profiled with
    // What its partition sizes were: green, mps or mig; empty in files from before it was
    // written (those were green).
    std::string backend;
    std::string item_unit;                     // images | tokens | runs (a command)
    double items_per_step = 0;                 // batch × sequence length for token workloads
    std::optional<double> peak_memory_gib;     // largest peak over its runs
    std::vector<PartitionProfile> partitions;  // by increasing SMs
    bool external() const { return workload.empty(); }
    std::string label() const;  // "resnet18:train:32" or the command's name
};

// Calibrated from mixes (several jobs side by side): how far measured throughput and dynamic
// power are from the alone-on-partition profiles. 1 and 1 with no mixes.
struct Correction {
    double throughput = 1;     // median over jobs of measured / predicted items/s
    double dynamic_power = 1;  // median over mixes of measured / predicted (board − idle) power
    int mixes = 0;             // runs it was calibrated from
    // Each job starting at one moment with others on a GPU's partitions starts this much later
    // per other job starting with it (plan/start_delay.h); 0: none. Not in the profiles' file:
    // make_problem sets it from ProfileSet::start_delay for green partitions.
    double start_delay_per_partner_s = 0;
};

struct ProfileProvenance {
    std::string created_at;                  // when the file was written (UTC)
    std::string measured_from, measured_to;  // first and last run's start (UTC)
    std::string gpu;                         // NVML device name(s) of the runs
    std::string driver;                      // driver version(s)
    std::string migscope;                    // version (commit) of the runs
    std::string command;                     // what wrote the file
    std::string source;                      // results store and run ids
    // How the runs' jobs stepped: "cuda-graph" or "eager" (runs stored before step modes were
    // recorded stepped eagerly); empty in files from before it was written.
    std::string steps;
    // The CUDA injection the runs' workers loaded (store::Provenance::cuda_injection):
    // "migscope-activity kernels" (the activity probe, which lowers a job's power), "none",
    // "unknown" for runs stored before it was recorded; empty in files from before it was written.
    std::string cuda_injection;
};

struct ProfileSet {
    std::string gpu_model;  // catalog key: "h200"
    ProfileProvenance provenance;
    // The board's static power, in one idle state: "clocks-up" (idle with the SM clock still up,
    // what a partition pays while its neighbours work) from runs that recorded it, else the state
    // the runs had ("no-clock", "deep"); empty in files from before states were recorded.
    Measured idle_power_w;
    std::string idle_state;
    // The board's enforced power limit (NVML) the runs had, their median; empty when the runs
    // did not record it (stores before schema 7) and no one wrote it in the file. Empty: the
    // planner does not model the cap (a busy board's lower clock).
    std::optional<double> power_limit_w;
    Correction correction;
    // Fitted on fixed-work mixes, from its own file (runner::load_start_delay), not the profiles'.
    StartDelay start_delay;
    std::vector<JobProfile> jobs;

    // The profile of a workload in a mode at a batch; with no batch, the only batch profiled.
    // Throws an input error naming the job (`who`) and what is known instead.
    const JobProfile& require(const std::string& who, const std::string& workload,
                              const std::string& mode, std::optional<int64_t> batch) const;
    // The profile of the external command named `name`; input error when there is none, or when
    // it was profiled with another argv than `command` (its work may have changed).
    const JobProfile& require_command(const std::string& name,
                                      const std::vector<std::string>& command) const;
};

// The versioned JSON file (format "migscope-profiles", version 1; docs/planner.md). Reading is
// strict: unexpected fields and wrong types are input errors naming their path ("jobs[2].bach").
ProfileSet parse_profiles_json(std::string_view text, const std::string& origin);
ProfileSet read_profiles_file(const std::string& path);
std::string write_profiles_json(const ProfileSet& profiles);

// Profiles from stored runs: single-job runs (green, mps, mig, sequential; every job ok) give the
// profiles, medians over repetitions (a command's runs: fixed work, its run time); runs of
// several built-in jobs (green, mps, mig, over a steady window) calibrate the correction. A job
// whose sizes ran on more than one backend, or a command profiled with different argv, is an
// input error (export stores of one kind). Idle power comes from the runs of one idle state: clocks
// up when any run recorded it, else idle without a clock, else deep idle, else (runs stored before
// states) every run. Throws an input error when there are no usable runs or no idle power.
ProfileSet profiles_from_runs(const std::vector<store::RunRecord>& runs,
                              const mig::GpuModel& model);

// profiles_from_runs over every run of the stores at `db_paths` together (profiles from one,
// calibration mixes from another), with the provenance's command and source naming each store
// and the runs used from it. `unused`, when given, gets a line for each single-job run it could
// not profile from: "STORE: run ID (JOB): why" (why_single_job_unused), and for each run that
// an earlier store held already (the same store twice, a merged copy), counted once.
ProfileSet profiles_from_stores(const std::vector<std::string>& db_paths,
                                const mig::GpuModel& model,
                                std::vector<std::string>* unused = nullptr);

// The batch a stored job ran at: as given, or for image and sample workloads run at their default
// batch, the items per step (token workloads at their default batch stay unknown).
std::optional<int64_t> stored_batch(const store::JobRecord& job);

// Why profiles_from_runs cannot profile from a single-job run (interrupted, failed, no power, no
// batch, ...); empty when it can, or when the run is not a single job's.
std::string why_single_job_unused(const store::RunRecord& run);

// Whether profiles_from_runs uses a run: a single-job run it profiles from or a mix it calibrates
// from (its provenance lists these).
bool used_for_profiles(const store::RunRecord& run);

// The label of the unpartitioned GPU, as `migscope run` writes it.
inline constexpr std::string_view kWholeGpu = "whole GPU";

// A job's throughput and power alone on a partition of `sms` SMs named `partition`: measured
// when profiled there on those SMs or on another partition of the same SMs, else interpolated
// linearly in SMs between the nearest measured sizes (never extrapolated: empty outside the
// measured range).
// A command's start-up is CPU and disk work (imports, loading a model), not the partition's: it
// is taken over every size it was measured on (the median of their medians; the spread's ends:
// the least minimum, the largest maximum), and its time on a size is that size's run time less
// the size's own start-up, plus this one.
struct Estimate {
    double items_per_s = 0;
    double average_power_w = 0;
    double startup_s = 0;  // a command's start-up over every size; 0 where not measured
    bool interpolated = false;
    // PartitionProfile::memory_utilization_pct (interpolated only between two sizes that have
    // it); empty where not measured.
    std::optional<double> memory_utilization_pct;
};
// Which values of a profile's repetitions: the medians, or the ends of their run-to-run range
// (fastest: the most items/s and the least start-up; slowest: the least and the most).
enum class Spread { kMedian, kFastest, kSlowest };
std::optional<Estimate> estimate(const JobProfile& job, std::string_view partition, unsigned sms,
                                 Spread spread = Spread::kMedian);

}  // namespace migscope::plan
