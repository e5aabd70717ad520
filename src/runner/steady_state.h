// When a job is in steady state: its step rate, judged over spans of time, no longer moves.
//
// The unit is a chunk: consecutive steps whose summed step time is at least `min_chunk_s` (one
// step when a step alone lasts that long). Why not single steps: under time-slicing (and MPS or
// green contexts under contention) short steps (a few ms) land on the scheduler's slices, so
// single step times scatter by far more than 10 % while the job's rate is flat; a chunk of
// 0.2 s spans many slices and averages the scheduler out. Jobs whose steps last longer than
// `min_chunk_s` are judged step by step.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace migscope::runner {

struct SteadyStateCriterion {
    size_t window_chunks = 5;  // the most recent complete chunks looked at (at least 2)
    double min_chunk_s = 0.2;  // a chunk: consecutive steps summing to at least this (0: 1 step)
    double max_cv = 0.10;      // CV (stddev / mean) of the chunks' mean step times at most this
};

struct SteadyCheck {
    bool steady = false;
    // Of the last window_chunks chunks' mean step times; empty while too few chunks.
    std::optional<double> cv;
};

// `step_times_s`: the job's measured (post-warm-up) step times, oldest first. Chunks are cut
// from the newest step backwards; steps older than the last complete chunk are not looked at.
SteadyCheck check_steady(const std::vector<double>& step_times_s,
                         const SteadyStateCriterion& criterion);

}  // namespace migscope::runner
