// What the planner's search works on, shared by its exhaustive and heuristic parts: layouts as
// shapes of partition sizes, each job's time and energy per size, the score of a plan's figures,
// and the sorted list of candidates each part keeps.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "plan/search.h"

namespace migscope::plan::search_parts {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kEps = 1e-9;  // relative improvement a move must bring

// A layout as the search sees it: partitions ordered so identical ones are adjacent, with their
// size indices. No layout: the whole GPU, one partition.
struct Shape {
    std::optional<mig::Layout> layout;
    std::vector<size_t> sizes;
};
Shape shape_of(const Problem& p, mig::Layout layout);
Shape whole_shape(const Problem& p);
std::vector<Shape> all_shapes(const Problem& p);  // the whole GPU first, then every layout

// Per job and size: time and dynamic energy alone, the job as a queue entry for simulate_gpu,
// usability, and the job's whole-GPU time (its work in seconds of whole-GPU time).
struct Tables {
    size_t sizes = 0;
    std::vector<double> t, dyn;                  // [job * sizes + size]
    std::vector<double> t_startup, dyn_startup;  // of t and dyn: a command's start-up
    std::vector<QueuedJob> queued;
    std::vector<char> usable;
    std::vector<double> whole_s;
    double work_s = 0;        // every job's whole-GPU time: the work
    std::vector<size_t> lpt;  // jobs by decreasing whole-GPU time

    explicit Tables(const Problem& p);
    size_t at(size_t job, size_t size) const { return job * sizes + size; }
};

// plan::score of the figures these make: `aggregate` is the aggregate throughput, `work_s` every
// job's whole-GPU time.
double score_of(Objective o, double makespan_s, double dynamic_j, double aggregate, double work_s,
                double idle_w);
// Whether score a beats b by more than kEps (relative).
bool better(double a, double b);

using Queues = std::vector<std::vector<size_t>>;

// A plan as a candidate: its name ("2× 3g.71gb + 1g.18gb") and prediction.
Candidate candidate_of(const Problem& p, Plan plan);
// Keeps candidates sorted by score, at most `keep`, earlier ones first among equals.
void insert_sorted(std::vector<std::pair<double, Candidate>>& list, double s, Candidate c,
                   size_t keep);

}  // namespace migscope::plan::search_parts
