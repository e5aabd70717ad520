// What a report says, computed from stored runs: scaling with partition size, layouts against
// their sequential baselines with spread over repetitions, and the throughput–energy Pareto front.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/comparison.h"
#include "store/record.h"

namespace migscope::report {

// Median and range of repeated measurements of one figure.
struct Spread {
    int n = 0;
    double median = 0;
    double min = 0;
    double max = 0;
    // For rates and speed-ups: the widest spread of the jobs' rates within their windows behind
    // the values, % (each job's counted steps in three parts, (max - min) / median; store:
    // items_per_s_spread_pct). One run has no range: this is its error. Empty where no job
    // recorded one.
    std::optional<double> within_window_pct;
};
std::optional<Spread> spread_of(const std::vector<double>& values);  // empty for no values
// "(n 3: min – max)", "(n 1)" for one value, "(n 1, ±4.2 % within the window)" with a
// within-window spread: how tables show a median's spread, each value written by `format`.
std::string spread_range_text(const Spread& s, const std::function<std::string(double)>& format);

// One partition size of a scaling series: the job alone on `sms` SMs, over its repetitions.
struct ScalingPoint {
    int64_t sms = 0;
    std::string backend;    // green, mps, mig, sequential (the whole GPU), ...
    std::string partition;  // "3g.71gb", "whole GPU"
    std::vector<int64_t> run_ids;
    std::optional<Spread> items_per_s;
    std::optional<Spread> energy_per_item_j;
    std::optional<Spread> measured_s;  // the job's seconds in steps inside its window
    std::vector<std::string> notes;    // why a figure is missing (the runs' warnings)
    // This point's medians over its series' whole-GPU point (on the SMs the store's "whole GPU"
    // jobs had; of several there, the one with the most runs): the speed the job keeps here and
    // the energy per item it pays. Empty when the series has no whole-GPU point or no energy.
    std::optional<double> speed_of_whole;
    std::optional<double> energy_per_item_of_whole;
};

// A workload in one mode and batch, alone on partitions of growing size.
struct ScalingSeries {
    std::string workload;  // the job's name for external commands
    std::string mode;      // train | finetune
    std::optional<int64_t> batch;
    // The jobs replayed their step as a CUDA graph (store: step_mode "cuda-graph"); false: eager,
    // or not recorded (runs from before graphs). Never one series for both: graphs change a
    // small-batch job's whole-GPU speed by up to 2.5x.
    bool cuda_graph = false;
    std::string item_unit;             // images, tokens, items
    std::vector<ScalingPoint> points;  // by SMs, then backend
};

// One repetition of a layout: the run, its baseline and their same-work comparison.
struct Repetition {
    int64_t run_id = 0;
    int64_t baseline_id = 0;
    Comparison comparison;
};

// Runs of the same backend, layout, run mode and job set that have a sequential baseline.
struct LayoutComparison {
    std::string backend;
    std::string layout;    // "–" for backends without one
    std::string run_mode;  // duration | work
    // How much each job did: "window" (duration), or its fixed steps in job order ("97/48/24
    // steps"): equal and matched work are different cells, never repetitions of one.
    std::string work;
    std::string job_set;                      // "bert-base:finetune:8 + resnet50:train:32", sorted
    std::string attribution_method;           // of the latest repetition
    std::vector<Repetition> repetitions;      // in run id order
    std::optional<Spread> energy_change_pct;  // repetitions with a complete comparison
    std::optional<Spread> speedup;
    std::optional<Spread> run_energy_j;
    std::optional<Spread> baseline_energy_j;
    std::optional<Spread> window_s;
    std::optional<Spread> disagreement_pct;  // board counter vs integrated trace
    // The board's average power and median SM clock in the run's window and in its baseline's:
    // what the power cap leaves a board that is busier side by side than one job at a time.
    std::optional<Spread> run_power_w;
    std::optional<Spread> baseline_power_w;
    std::optional<Spread> run_sm_clock_mhz;
    std::optional<Spread> baseline_sm_clock_mhz;
    std::vector<std::string> notes;
};

// "green 4g.71gb+2g.35gb+1g.18gb, 97/48/24 steps" ("cpu" without a layout): what names a
// comparison in plots and tables.
std::string comparison_label(const LayoutComparison& g);

// A layout (or the sequential baseline) in the throughput–energy plane of its job set: throughput
// and energy for the same work, both relative to running the jobs one after another (= 1).
struct ParetoPoint {
    std::string job_set;
    std::string label;               // "green 4g.71gb+3g.71gb", "sequential baseline"
    double relative_throughput = 1;  // median speedup
    double relative_energy = 1;      // median run energy / baseline energy for the same work
    bool on_front = false;           // no other point of the job set is as fast and as frugal
};

// The answer for one job set and objective: which layout, or none (one after another on the whole
// GPU), and by how much for the same work.
enum class Objective { kThroughput, kEnergy };
struct Verdict {
    std::string job_set;
    Objective objective = Objective::kThroughput;
    // Whose runs: steady windows (the rate for a stream of such jobs) or fixed work (all of it
    // done: the makespan), never both in one verdict.
    bool fixed_work = false;
    // The layout with the best median figure; empty when no layout has the figure.
    std::string best_layout;
    std::optional<Spread> figure;  // its speedup (×) or energy change (%)
    bool partition = false;        // the best layout beats one after another (median)
    bool tie = false;              // its median prints as even: +0.0 % or 1.00×
    bool clear = false;            // every repetition is on the median's side (never for a tie)
    std::string missing;           // why there is no figure (the runs' warnings)
};

struct Findings {
    // Per job set with a baseline, steady windows then fixed work: throughput, then energy.
    std::vector<Verdict> verdicts;
    std::vector<ScalingSeries> scaling;
    std::vector<LayoutComparison> layouts;
    std::vector<ParetoPoint> pareto;  // grouped by job set, the baseline first
};

// Runs are read without their traces. Only jobs with status ok count; baselines belong to their
// parent run (the latest one when there are several).
Findings analyse(const std::vector<store::RunRecord>& runs);

// The verdicts as a report's summary shows them: one row per job set and kind of measurement
// (steady windows, fixed work), with its verdict for each objective.
struct VerdictRow {
    std::string job_set;  // as shown: see VerdictSummary::every_job_graph
    bool fixed_work = false;
    bool on_cpu = false;  // its runs split CPU cores: no GPU, no layout
    std::optional<Verdict> throughput, energy;
};
struct VerdictSummary {
    std::vector<VerdictRow> rows;
    bool on_cpu = false, on_gpu = false;  // some row's runs were on CPU cores, on a GPU
    // Every job of every compared set stepped as a CUDA graph: the page says so once and the job
    // sets leave out each job's " (CUDA graph)".
    bool every_job_graph = false;
};
VerdictSummary summarise_verdicts(const Findings& f);
// What a verdict says, in words every format shows the same: "partition", "do not partition",
// "no difference", "no verdict"; on CPU cores "side by side" and "one after another".
std::string verdict_answer(const Verdict& v, bool on_cpu);
// What the device is called where the jobs ran one after another: "the whole GPU", or "all the
// CPU cores" for runs on CPU cores.
const char* whole_device(bool on_cpu);
// The note under the summary: how its figures are made, said once.
std::string verdict_note(const VerdictSummary& s);

// Whether every job of every compared job set stepped as a CUDA graph (" (CUDA graph)" after
// each), and a job set without those marks when so.
bool every_job_stepped_as_graph(const Findings& f);
std::string shown_job_set(const std::string& job_set, bool every_job_graph);
// Whether a job set's comparisons ran on CPU cores (a backend without a GPU).
bool job_set_on_cpu(const Findings& f, const std::string& job_set);

// "resnet50:train:32 (eager)" (batch "default" when not recorded), "… (CUDA graph)" for a job
// that replayed its step as a CUDA graph.
std::string job_key(const store::JobRecord& job);

// Whether a stored job replayed its step as a CUDA graph.
bool replayed_cuda_graph(const store::JobRecord& job);
// "CUDA graph" or "eager": how a series' or job's steps ran, for labels.
std::string step_label(bool cuda_graph);

}  // namespace migscope::report
