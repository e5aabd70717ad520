// The planner's search: every layout × assignment on one GPU (branch and bound), a heuristic for
// many jobs or many GPUs, the baselines, the top candidates and the energy/throughput Pareto front.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/model.h"
#include "plan/model_error.h"
#include "plan/objective.h"

namespace migscope::plan {

enum class Method { kAuto, kExhaustive, kHeuristic };
std::string to_string(Method method);

// The most GPUs one plan places jobs on (a node's or a few racks' worth; a plan of 4,096 takes
// about a second): beyond it `--gpus 1000000000` once ran out of memory.
inline constexpr size_t kMaxPlanGpus = 4096;

struct SearchOptions {
    Objective objective = Objective::kEnergy;
    size_t gpus = 1;  // 1 to kMaxPlanGpus
    size_t top_k = 3;
    Method method = Method::kAuto;
    // kAuto: exhaustive on one GPU up to this many jobs, the heuristic beyond.
    size_t exhaustive_job_limit = 9;
    // The model's measured residuals, for every candidate's interval and the recommendation;
    // null: none (points are compared, and the result says so).
    const ModelError* error = nullptr;
    // A plan of the user's own (`plan --layout`), predicted beside the search's: a layout of one
    // GPU and each of its partitions' queue (job indices in the order they run); no queues: the
    // best assignment on the layout for the objective.
    struct GivenLayout {
        mig::Layout layout;
        std::vector<std::vector<size_t>> queues;
    };
    std::optional<GivenLayout> given = std::nullopt;
};

// A candidate's figure against the same jobs one after another on the whole GPU, as a fraction
// (+0.068: 6.8 % more), with the range the model's measured gains of partitioning give it: the
// predicted ratio × their 90 % band (gain_band of the candidate's busy partitions: the band the
// Decision judges by), less 1. No range for a plan that is not partitioned (its figure is the
// sequential one's), or where the residuals hold too few gains for the figure.
struct ChangeVsSequential {
    double predicted = 0;
    std::optional<Bounds> range;
    double range_coverage = 0;  // the share of measured changes it is expected to hold
    std::string gain_group;     // whose gains: "energy/3-4"
};

struct Candidate {
    std::string name;  // the layout, or "N× layout + M× layout" on several GPUs
    Plan plan;
    Prediction prediction;
    PredictionInterval interval;
    // Set with the interval (search): its energy and makespan against the sequential baseline.
    ChangeVsSequential energy_vs_sequential, makespan_vs_sequential;
    bool partitioned() const;  // some GPU has a layout (not the whole GPU)
};

// Why the recommendation is what it is. A partitioned plan is recommended over not partitioning
// only when its gain is clear of the model's error: the measured range of the model's gains where
// the residuals have them, else its interval for the objective clear of not partitioning's
// (docs/planner.md, "How sure").
enum class Verdict {
    kNotPartitioned,  // not partitioning is the best predicted plan
    kClearGain,       // the best partitioned plan's gain (or interval) is clear of the error
    kInsideError,     // its gain lies inside the model's error: do not partition
    kErrorUnknown,    // too few residuals for its interval: do not partition
    kPointsOnly,      // no residuals at all: the best predicted plan, its points compared
};
struct Decision {
    Verdict verdict = Verdict::kPointsOnly;
    std::string best_partitioned;  // the best partitioned candidate by its prediction; "": none
    // Its predicted gain over not partitioning for the objective, as a fraction of not
    // partitioning's (> 0: better), and both objective intervals in score order (lower is
    // better: the throughputs negated).
    double gain = 0;
    Bounds partitioned, not_partitioned;
    // Where the residuals hold the model's gain of partitioning on verified plans for the
    // objective (gain_band: of plans with as many busy partitions as the best partitioned one,
    // else all, at least kMinGroupResiduals pairs), the gain judges: corrected by
    // their median, with their 90 % range (ErrorBand; fractions as `gain`), and a partitioned
    // plan is recommended only when that range is above 0. gain_pairs = 0: the intervals judge.
    size_t gain_pairs = 0;
    std::string gain_group;  // whose pairs: "energy/3-4" (gain_group), or all "energy"
    double corrected_gain = 0;
    Bounds gain_range;
    double gain_range_coverage = 0;  // ErrorBand::coverage: 0.9 from 19 pairs on
    std::string unknown_why;  // kErrorUnknown: which residuals are missing
    // Other top candidates whose objective interval overlaps the recommendation's (or is
    // unknown): the model cannot tell them from it.
    std::vector<std::string> indistinguishable;
};
std::string to_string(Verdict verdict);

struct Baseline {
    // "sequential whole GPU", "7x1g" (one 1g per compute slice), "all-balanced", "best single
    // layout"
    std::string name;
    std::optional<Candidate> candidate;
    std::string why_not;  // set when it cannot run the job set
};

// The user's plan (SearchOptions::given), predicted as every candidate is, set against the
// recommendation by the rule that lists plans indistinguishable from it.
struct GivenPlan {
    Candidate candidate;
    // Its score for the objective against the recommendation's, as a fraction of the
    // recommendation's (> 0: better, as Decision::gain).
    double vs_recommended = 0;
    // Its objective interval overlaps the recommendation's, or either is unknown or there are no
    // residuals: the model cannot tell the two apart.
    bool indistinguishable = true;
};

struct SearchResult {
    Method method = Method::kExhaustive;  // what ran
    // The recommendation first (Decision), then the best predicted, each a different layout
    // (mix): the top K by the objective, and not partitioning ahead of them when the
    // recommendation is not to partition and it was not among them.
    std::vector<Candidate> top;
    Decision decision;
    std::vector<Candidate> pareto;        // energy vs throughput, by increasing energy
    std::vector<Baseline> baselines;
    std::optional<GivenPlan> given;
    uint64_t evaluated = 0;  // complete assignments scored
    size_t layouts = 0;      // layouts considered (the whole GPU included)
    bool sequential_wins() const { return !top.empty() && !top.front().partitioned(); }
};

// Plans the problem's jobs on `gpus` GPUs. With SearchOptions::given (one GPU only), also predicts
// that plan; an input error starts with `layout:` when its layout is the whole GPU, has a size
// the problem lacks or fits no assignment, and with `assign[j]:` when job j cannot run on the
// partition it is given. The whole GPU running the jobs one after another is always a
// candidate, and the recommendation unless a partitioned plan beats it by more than the model's
// error (Decision). One GPU with at most exhaustive_job_limit jobs: every valid layout × every
// assignment (identical partitions are symmetric; branch and bound on the objective). Otherwise
// the heuristic (docs/planner.md): each layout on every GPU filled longest job first with local
// search, then each GPU's layout changed where that helps, then jobs moved between GPUs.
SearchResult search(const Problem& problem, const SearchOptions& options);

// The best plan with this layout on every GPU (partitions may stay idle); empty when some job can
// use none of its partitions.
std::optional<Candidate> best_on_layout(const Problem& problem, const mig::Layout& layout,
                                        const SearchOptions& options);

}  // namespace migscope::plan
