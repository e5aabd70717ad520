// Plan verification: runs the top candidates through a runner the caller provides and sets what
// was measured against what the model predicted, then how far the recommendation is from the
// best measured candidate. Pure: the runner interface does the running.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/search.h"
#include "protocol/job_spec.h"

namespace migscope::plan {

// What one candidate on one GPU runs: jobs in queue order (built-in ones at their profiled
// batch and, with steps of their own, those steps), the busy partitions as a layout ("3g.71gb@4",
// none for the whole GPU) and each job's partition in it.
struct CandidateRun {
    std::vector<protocol::JobSpec> jobs;
    std::vector<size_t> order;  // plan job index of each run job
    std::vector<std::string> layout;
    std::vector<size_t> assign;  // the layout partition of each run job (empty without layout)
};
CandidateRun candidate_run(const Problem& problem, const GpuPlan& plan);

struct MeasuredJob {
    std::string status;  // "ok" or why not
    std::string message;
    std::optional<double> items_per_s;  // built-in jobs (a command's own units are not the plan's)
    // When it ended, from the start of its window: the run's common start on partitions (a queued
    // job's end counts its queue), its own window on a whole GPU (the sequential backend measures
    // each job alone, one window after another).
    std::optional<double> finish_s;
};

// One GPU of a candidate measured on several GPUs (CandidateRunner::run_gpus).
struct MeasuredGpu {
    size_t gpu = 0;                  // the plan's GPU index
    double makespan_s = 0;           // its own, from its start
    std::optional<double> energy_j;  // its board energy counter over its makespan
    std::string failure;             // empty: it ran its part
};

struct MeasuredRun {
    double makespan_s = 0;
    std::optional<double> energy_j;  // board energy counter
    std::vector<MeasuredJob> jobs;   // in CandidateRun::jobs order
    double wall_s = 0;               // 0 when taken from an earlier run
    std::optional<int64_t> stored_run_id;
    bool from_earlier_run = false;
    // Several GPUs: each GPU's part; makespan_s is then the slowest GPU's and energy_j the host
    // total (each GPU's energy, plus idle power until the slowest for those done sooner).
    std::vector<MeasuredGpu> gpus;
    // The board's idle power its idle probes measured, in that state (telemetry::state_key:
    // "clocks-up", ...); none without probes.
    std::optional<double> idle_power_w;
    std::string idle_state;
};

// Runs a candidate with fixed work and measures it, or says why it cannot (`why_not`).
class CandidateRunner {
  public:
    virtual ~CandidateRunner() = default;
    virtual std::optional<MeasuredRun> run(const Candidate& candidate, size_t index,
                                           const CandidateRun& run, std::string& why_not) = 0;
    // A candidate on several GPUs: runs[g] on the plan's GPU g, all at once (a GPU without jobs
    // has an empty run); the measured jobs in the order of the runs' jobs, one after another.
    // This default cannot (why_not says so).
    virtual std::optional<MeasuredRun> run_gpus(const Candidate& candidate, size_t index,
                                                const std::vector<CandidateRun>& runs,
                                                std::string& why_not);
};

// Predicted against measured on one GPU of a several-GPU candidate.
struct GpuCheck {
    size_t gpu = 0;
    double predicted_makespan_s = 0;  // when its last job ends
    double predicted_energy_j = 0;    // its jobs' predicted energy until then
    std::optional<MeasuredGpu> measured;
};

struct VerifiedCandidate {
    std::string name;
    bool baseline = false;  // not among the top: the sequential baseline, measured beside them
    bool given = false;     // not among the top: the user's plan (SearchResult::given)
    Prediction predicted;
    PredictionInterval interval;          // where the model expects the measurement
    std::optional<MeasuredRun> measured;  // empty: not run (see skipped)
    std::string skipped;
    std::vector<size_t> order;    // plan job index of each measured job
    // Per measured job, when it ended from the candidate's start, like the predicted end_s: on a
    // whole GPU the jobs' windows added up in order (measured_end_times).
    std::vector<std::optional<double>> end_s;
    std::optional<double> score;  // measured objective (lower is better), when comparable
    // Measured as the predictions' throughput and aggregate throughput are (measured_score).
    std::optional<double> throughput, aggregate_throughput;
    std::vector<GpuCheck> gpus;  // several GPUs: each one's; empty on one GPU
    bool complete = false;       // measured, every job ok: its figures compare with predictions
    // Its energy and makespan against the sequential baseline's: predicted with their measured
    // gains' range (Candidate), and measured against the baseline measured beside it, as
    // fractions (empty: not partitioned, either side incomplete or without the figure).
    bool partitioned = false;
    ChangeVsSequential energy_vs_sequential, makespan_vs_sequential;
    std::optional<double> measured_energy_vs_sequential, measured_makespan_vs_sequential;
};

// The measured board's idle power beside the profiles': a board that idles higher or lower than
// the one profiled draws that much more or less over every plan's makespan, whatever the plan.
struct BoardIdle {
    double measured_w = 0;  // median over the runs measured in the profiles' idle state
    size_t runs = 0;
    double profiles_w = 0;  // Problem::idle_power_w
    std::string state;      // both in this state
};

// The median idle power of the measured candidates whose idle probes measured the profiles' idle
// state, beside the profiles' (none when there are none, or the profiles name no state).
std::optional<BoardIdle> board_idle(const Problem& p,
                                    const std::vector<VerifiedCandidate>& candidates);

struct Verification {
    Objective objective = Objective::kEnergy;
    // The search's top, in its order, then the sequential baseline and the user's plan when the
    // top lacks them.
    std::vector<VerifiedCandidate> candidates;
    std::optional<size_t> best_measured;        // index of the best measured score
    // How much worse the recommendation measured than the best: energy, makespan, EDP: its score
    // / the best's - 1; throughputs: 1 - its / the best's. 0 when it was the best.
    std::optional<double> recommended_gap;
    double runs_wall_s = 0;
    std::optional<BoardIdle> board_idle;  // none: no run measured idle in the profiles' state
};

// The measured objective of a run of `plan` (lower is better, as plan::score), when the run can
// measure it: energy, makespan and EDP from the makespan and the board energy counter;
// throughput as the jobs' work (their whole-GPU seconds, from the profiles) over the measured
// makespan; aggregate throughput as each partition's work over when its last job ended.
std::optional<double> measured_score(Objective objective, const Problem& problem,
                                     const CandidateRun& plan, const MeasuredRun& run);

// The runs of a candidate on several GPUs as one (the jobs in GPU order, each whole GPU a
// partition of its own), for measured_score.
CandidateRun combined_run(const std::vector<CandidateRun>& runs);

// Each measured job's end from the start of the candidate, as JobPrediction::end_s counts it:
// finish_s on partitions, and on each whole GPU of `runs` the sum of its jobs' windows up to
// and including the job's (empty from a job without finish_s on). Jobs in combined_run order.
std::vector<std::optional<double>> measured_end_times(const std::vector<CandidateRun>& runs,
                                                      const MeasuredRun& run);

// Runs every top candidate of `result`, the sequential baseline when none of them is
// unpartitioned and the user's plan when it is none of them, through `runner` (one GPU: run;
// several: run_gpus) and compares, in total and, on several GPUs, per GPU.
Verification verify(const Problem& problem, const SearchResult& result, Objective objective,
                    CandidateRunner& runner);

}  // namespace migscope::plan
