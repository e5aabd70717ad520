// A policy's figures on a stream with the interval the planner's known error puts around them:
// the stream simulated at the model's point, then with every job at the slow end of its speed
// band and the dynamic energy at the high end of its band, then the reverse (plan/model_error.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "plan/model_error.h"
#include "stream/simulator.h"

namespace migscope::stream {

struct StreamEstimate {
    StreamResult point;
    bool known = false;       // the bands came from residuals
    std::string unknown_why;  // else why not
    plan::Bounds energy_j, mean_completion_s, p95_completion_s, tardiness_s;
    // energy_j + tardiness_weight_w x tardiness_s (policies.h, energy_tardiness_j) of each run:
    // the interval of the sum, not the sum of the two intervals.
    double tardiness_weight_w = 0;
    plan::Bounds energy_tardiness_j;
    // Per stream job: its completion time (end - arrival) over the three runs.
    std::vector<plan::Bounds> job_completion_s;
};

// Makes a fresh policy for each run (policies keep state).
using PolicyFactory = std::function<std::unique_ptr<Policy>()>;

// The model's known error as two runs' options (from `options`): every job at the slow end of
// its speed band and the dynamic energy at the high end of its band ("slow"), then the reverse.
// The bands: speed "alone" for whole GPUs and "mix" for partitioned ones, dynamic energy "mix"
// (plan/model_error.h's groups). None, with why in `unknown_why`, for `error` null or without
// the bands.
struct ErrorEnds {
    SimulationOptions slow, fast;
};
std::optional<ErrorEnds> error_ends(const plan::ModelError* error, const SimulationOptions& options,
                                    std::string& unknown_why);

// An estimate from the point's run and the two ends' runs: each figure the span of the three.
StreamEstimate spanned(StreamResult point, const StreamResult& slow, const StreamResult& fast,
                       const std::vector<StreamJob>& jobs, double tardiness_weight_w);
// An estimate of the point alone: bounds equal to it, known false, and why.
StreamEstimate point_only(StreamResult point, const std::vector<StreamJob>& jobs,
                          double tardiness_weight_w, std::string why);

// `error` null or without the bands: the point alone, with bounds equal to it and known false.
// `tardiness_weight_w` prices a late second in the combined figure (J). The ends are
// error_ends'; the policy decides on the model's point in every run, as it would not know the
// error's sign.
StreamEstimate estimate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                        const PolicyFactory& make_policy, const SimulationOptions& options,
                        const plan::ModelError* error, double tardiness_weight_w);

}  // namespace migscope::stream
