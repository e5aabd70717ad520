// The planner's search: every layout × assignment on one GPU (branch and bound), a heuristic for
// many jobs or many GPUs, the baselines, the top candidates and the energy/throughput Pareto front.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/model.h"

namespace migscope::plan {

enum class Method { kAuto, kExhaustive, kHeuristic };
std::string to_string(Method method);

struct SearchOptions {
    Objective objective = Objective::kEnergy;
    size_t gpus = 1;
    size_t top_k = 3;
    Method method = Method::kAuto;
    // kAuto: exhaustive on one GPU up to this many jobs, the heuristic beyond.
    size_t exhaustive_job_limit = 9;
};

struct Candidate {
    std::string name;  // the layout, or "N× layout + M× layout" on several GPUs
    Plan plan;
    Prediction prediction;
    bool partitioned() const;  // some GPU has a layout (not the whole GPU)
};

struct Baseline {
    // "sequential whole GPU", "7x1g" (one 1g per compute slice), "all-balanced", "best single
    // layout"
    std::string name;
    std::optional<Candidate> candidate;
    std::string why_not;  // set when it cannot run the job set
};

struct SearchResult {
    Method method = Method::kExhaustive;  // what ran
    std::vector<Candidate> top;           // best first, each a different layout (mix)
    std::vector<Candidate> pareto;        // energy vs throughput, by increasing energy
    std::vector<Baseline> baselines;
    uint64_t evaluated = 0;  // complete assignments scored
    size_t layouts = 0;      // layouts considered (the whole GPU included)
    bool sequential_wins() const { return !top.empty() && !top.front().partitioned(); }
};

// Plans the problem's jobs on `gpus` GPUs. The whole GPU running the jobs one after another is
// always a candidate. One GPU with at most exhaustive_job_limit jobs: every valid layout × every
// assignment (identical partitions are symmetric; branch and bound on the objective). Otherwise
// the heuristic (docs/planner.md): each layout on every GPU filled longest job first with local
// search, then each GPU's layout changed where that helps, then jobs moved between GPUs.
SearchResult search(const Problem& problem, const SearchOptions& options);

// The best plan with this layout on every GPU (partitions may stay idle); empty when some job can
// use none of its partitions.
std::optional<Candidate> best_on_layout(const Problem& problem, const mig::Layout& layout,
                                        const SearchOptions& options);

}  // namespace migscope::plan
