// The planner's performance and energy model: a job set on partition sizes, and the predicted
// makespan, energy and throughput of a plan (layouts with a queue of jobs per partition).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"
#include "plan/profile.h"

namespace migscope::plan {

// energy: least board energy for all the work; throughput: most work done per second (the jobs'
// whole-GPU seconds over the makespan: with fixed work, the same order as makespan);
// aggregate-throughput: the most aggregate normalised throughput, the rate a layout sustains for
// a continuous stream of jobs like these; makespan: all work done soonest; edp: least energy ×
// makespan.
// Each described in plan/objective.h.
enum class Objective { kEnergy, kThroughput, kAggregateThroughput, kMakespan, kEdp };

// A job to plan. Its work is a number of training steps (× the profile's items per step), or a
// weight: seconds of its run alone on the whole GPU; an external command's work is one run of it.
// The most work one job may have: training steps, or seconds of its run alone on the whole GPU
// (about 31.7 years). No run is that long, and beyond them a double no longer holds a step's time.
inline constexpr int64_t kMaxWorkSteps = 1'000'000'000'000'000;
inline constexpr double kMaxWorkSeconds = 1e9;

struct JobRequest {
    std::string name;  // unique within the job set
    std::string workload;
    std::string mode = "train";
    std::optional<int64_t> batch;  // empty: the only batch profiled
    std::optional<int64_t> work_steps;       // 1 to kMaxWorkSteps
    std::optional<double> work_whole_gpu_s;  // used when work_steps is empty; to kMaxWorkSeconds
    std::vector<std::string> command;        // an external command (workload empty), by name
};

struct Constraints {
    // Each job keeps at least this fraction of its whole-GPU speed (0: no constraint).
    double min_speed_fraction = 0;
};

// A partition size the planner may use: a MIG profile of the model, or the whole GPU.
struct Size {
    std::string label;  // "2g.35gb" or "whole GPU"
    unsigned sms = 0;
    double memory_gib = 0;
};

// One job on one size, alone, before the interference correction.
struct JobOnSize {
    bool usable = false;
    std::string refusal;    // why not usable: memory, no profile there, too slow
    double time_s = 0;      // its work alone on a partition of this size
    double startup_s = 0;   // of time_s, what does not slow down in a mix (a command's start-up)
    double power_w = 0;     // board power while it runs alone there
    double memory_pct = 0;  // the board's NVML memory utilisation then (0: not measured)
    double speed_fraction = 0;  // items/s over its whole-GPU items/s
    bool interpolated = false;  // not measured on this size: interpolated by SMs
    // time_s and startup_s at the ends of the profile's run-to-run range (Spread).
    double fastest_time_s = 0, fastest_startup_s = 0;
    double slowest_time_s = 0, slowest_startup_s = 0;
};

// A job's time on its partition with neighbours busy for all of it: its start-up as alone, the
// rest ÷ the throughput correction (the min-speed constraint's measure).
inline double mix_time_s(const JobOnSize& on, double throughput_correction) {
    return on.startup_s + (on.time_s - on.startup_s) / throughput_correction;
}

// The board's power above the limit slows the SM clock: at clock ratio r the jobs' dynamic power
// is × r^kCapClockExponent and their work (beyond start-ups) takes 1/r longer. Fitted on the H200
// (docs/planner.md, "What the correction stands for": seven `mlp` on 7 × 1g.18gb wanted 1,250 W
// of dynamic power × the power correction and ran at 1410 of 1980 MHz under 700 W).
inline constexpr double kCapClockExponent = 2.09;

// The clock ratio a board settles at when its jobs want `dynamic_w` above `idle_w`: 1 at or under
// the limit (or with none), else r with idle + dynamic × r^kCapClockExponent = limit.
double cap_clock_ratio(double idle_w, double dynamic_w, std::optional<double> limit_w);

// One job of a partition's queue, as alone on that partition: its start-up (which runs at the
// same speed beside other jobs), the rest of its time, and its dynamic power (board − idle).
struct QueuedJob {
    double startup_s = 0;
    double rest_s = 0;
    double dynamic_w = 0;
    double memory_pct = 0;  // of the memory bandwidth, while its rest runs alone (0: unknown)
};

// When each queued job ends and what the GPU draws, over time: each partition runs its queue in
// order; while two or more partitions of a layout are busy, the jobs' rest runs at the throughput
// correction and their dynamic power is × the power correction (the correction was calibrated on
// windows where every partition was busy, so a job that outlives its neighbours runs as alone);
// when idle + that power exceeds the power limit, every job runs at cap_clock_ratio; while the
// jobs in their rest want more than 100 % of the memory bandwidth together (their memory_pct),
// none runs faster than 100 % / that sum. Jobs that start at one moment on two or more
// partitions each wait start_delay_s(correction.start_delay_per_partner_s, how many) before their
// start-up (plan/start_delay.h): every partition's first job, and queued jobs whose predecessors
// end together; while it waits a job's partition counts as busy but draws no dynamic power.
struct GpuTimeline {
    std::vector<std::vector<double>> end_s;  // per partition, per queued job
    // Per partition, per queued job: the seconds of its run with two or more partitions busy (a
    // mix), and with the clock below 1 (the power cap).
    std::vector<std::vector<double>> mix_s, capped_s;
    // Per partition, per queued job: its wait for the jobs starting with it (none: 0).
    std::vector<std::vector<double>> wait_s;
    double makespan_s = 0;
    double dynamic_j = 0;  // the board's energy above idle until the makespan
};

// One phase of simulate_gpu: while `busy` partitions run jobs that want `wanted_w` of dynamic
// power alone, and those in their rest `memory_pct` of the memory bandwidth: their speed (× each
// one's rest alone), the SM clock ratio and the board's dynamic power.
struct PhaseRate {
    bool mix = false;  // partitioned and two or more busy: the correction applies
    double speed = 1;
    double clock = 1;
    double dynamic_w = 0;
};
PhaseRate phase_rate(size_t busy, bool partitioned, double wanted_w, double memory_pct,
                     const Correction& correction, double idle_w, std::optional<double> limit_w);

void simulate_gpu(const std::vector<std::vector<QueuedJob>>& queues, bool partitioned,
                  const Correction& correction, double idle_w, std::optional<double> limit_w,
                  GpuTimeline& out);

struct JobModel {
    JobRequest request;
    const JobProfile* profile = nullptr;  // into the ProfileSet, which outlives the Problem
    double items = 0;                     // the work, in the workload's unit
    // The work as seconds of the job alone on the whole GPU (its whole-GPU time; 0 without a
    // whole-GPU profile): what throughputs and speed fractions are counted in.
    double whole_gpu_s = 0;
    std::vector<JobOnSize> on;            // per Problem::sizes
};

// Everything the search needs, computed once from the job set and the profiles.
struct Problem {
    mig::GpuModel model;
    std::vector<Size> sizes;  // the model's profiles (no media variants, not the full-GPU one)
                              // by increasing SMs, then the whole GPU (last)
    std::vector<JobModel> jobs;
    double idle_power_w = 0;
    // idle_power_w's state (ProfileSet::idle_state): "clocks-up", ...; "" unknown.
    std::string idle_state;
    std::optional<double> power_limit_w;  // the board's (ProfileSet::power_limit_w)
    Correction correction;
    Constraints constraints;
    std::vector<std::string> notes;  // interpolated sizes, jobs confined to the whole GPU

    size_t whole() const { return sizes.size() - 1; }
    size_t size_index(std::string_view label) const;  // input error when unknown
    // The layouts the search considers: every valid layout of the model except the single
    // full-GPU instance (that is the whole GPU, planned as "not partitioned").
    std::vector<mig::Layout> layouts() const;
};

// What the partitions are: MIG instances or green contexts. Both get their MIG profile's SMs:
// the worker splits a green context's SMs off what the partitions before it left, and the driver
// grants such a split exactly (H200: 1g.35gb 26, 3g.71gb 60); only the first split, from the
// whole device, is rounded up to the granularity (docs/planner.md, "--backend mig|green"), which
// the model does not count. kGreen adds that note to the plan.
enum class PartitionKind { kMig, kGreen };
// The kind a backend's partitions are (by name, as partition/backend_traits.h has it): green for
// one whose SM partitions are rounded up, MIG otherwise (mps partitions get their profiles' SMs,
// as MIG instances do); MIG for an unknown name.
PartitionKind partition_kind(const std::string& backend);

// Whether every job needs a whole-GPU profile: to plan, yes (its speeds are fractions of it, its
// work may be given in its seconds); to predict measured mixes of its partitions (residuals.h),
// no: such a job just cannot use the whole GPU.
enum class WholeGpuProfile { kRequired, kOptional };

// Builds the problem. Input errors name the job or the constraint: unknown workload or batch,
// a job that fits no partition (memory), a min speed above 1, no whole-GPU profile.
Problem make_problem(const std::vector<JobRequest>& jobs, const ProfileSet& profiles,
                     const mig::GpuModel& model, const Constraints& constraints,
                     PartitionKind kind = PartitionKind::kMig,
                     WholeGpuProfile whole = WholeGpuProfile::kRequired);

// One GPU of a plan: a layout and a queue of jobs per partition (in layout order), or no layout
// (the whole GPU, not partitioned) and one queue.
struct GpuPlan {
    std::optional<mig::Layout> layout;
    std::vector<std::vector<size_t>> queues;  // job indices, in the order they run
};
using Plan = std::vector<GpuPlan>;

std::string describe(const GpuPlan& gpu);  // "4g.71gb@0+3g.71gb@4" or "whole GPU (not partitioned)"
size_t partitions_busy(const GpuPlan& gpu);  // its partitions (or the whole GPU) with jobs

// What drives the model's error for a job where a plan puts it (docs/planner.md, "How sure"):
// beside other jobs or alone, its partition's SMs, a capped clock, a queue. Each names the group
// of measured residuals its interval comes from (model_error.h).
struct JobSituation {
    bool mix = false;     // two or more partitions busy for most of its run
    unsigned sms = 0;     // its partition's
    bool capped = false;  // the power cap slows the clock for most of its run
    bool queued = false;  // its partition runs other jobs before or after it
};

struct JobPrediction {
    size_t gpu = 0;
    size_t partition = 0;  // index in the GPU's layout
    std::string partition_label;
    double start_s = 0, end_s = 0;
    // Over its run less its wait for the jobs starting with it (GpuTimeline::wait_s), as
    // `migscope run` counts a job's items/s: over its steps.
    double items_per_s = 0;
    double speed_fraction = 0;  // of its whole-GPU speed, likewise
    // Its share of its GPU's energy until that GPU's last job ends, split as `migscope run`
    // attributes a window (telemetry/attribution.h): idle power by partition size, its own
    // dynamic power alone there × its time, and a time share of the mix's interaction.
    double energy_j = 0;
    bool interpolated = false;
    JobSituation situation;
};

struct Prediction {
    double makespan_s = 0;     // when the last partition frees
    double energy_j = 0;       // board energy of all GPUs until the makespan
    double idle_energy_j = 0;  // the part no job is charged: GPUs done before the makespan
    // The work (every job's seconds alone on the whole GPU) over the makespan: the whole GPU
    // running the jobs one after another scores 1, a plan that finishes later less.
    double throughput = 0;
    // Sum over busy partitions of (work it does, in seconds of whole-GPU time) / (its busy
    // time): what a layout sustains when each partition keeps getting jobs like its own (the
    // tail where partitions wait for the last one does not count). Sequential scores 1.
    double aggregate_throughput = 0;
    double edp_js = 0;                // energy × makespan
    bool corrected = false;           // the interference correction applied (some GPU ran a mix)
    bool mix = false;                 // some GPU runs two or more partitions at once
    std::vector<JobPrediction> jobs;  // per job index
};

// Predicts a plan. Every job must appear exactly once; throws an input error otherwise.
// Model (docs/planner.md): each GPU's queues run as simulate_gpu says; a GPU draws idle power
// until the makespan plus the running jobs' dynamic power; each job's energy is attributed as
// `migscope run` does, its margin from the GPU simulated without it.
Prediction predict(const Problem& problem, const Plan& plan);

// A steady window of one GPU's mix: every partition of `gpu` runs its first job, all in their
// rest at once (simulate_gpu's first phase without start-ups): each job's items/s (per problem
// job; 0 for jobs not on the GPU), the board's power and the clock ratio.
struct SteadyWindow {
    std::vector<double> items_per_s;
    std::vector<JobSituation> situation;  // per problem job
    double board_power_w = 0;
    double dynamic_w = 0;
    double clock = 1;
    bool mix = false;
};
SteadyWindow predict_steady_window(const Problem& problem, const GpuPlan& gpu);

}  // namespace migscope::plan
