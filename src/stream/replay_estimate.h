// The interval of a schedule as a replay runs it (replay_plan.h, runner/stream_replay.h): its
// layouts in order, each job's stretches on their partitions in their order, none before its
// arrival, each layout's work after the work before it has ended; predicted at the model's point
// and with every job at the slow, then the fast end of its band (estimate.h's error_ends). The
// policy does not decide again in the two ends' runs: a replay runs one schedule, so its
// interval is that schedule's, not the policy's under another error.
#pragma once

#include <cstdint>
#include <vector>

#include "stream/estimate.h"
#include "stream/replay_plan.h"

namespace migscope::stream {

// The replay's clock, as runner/stream_replay.h keeps it, with the model's speeds of `options`
// (its ratios: the error's ends): every epoch's layout from its start (epoch_start_s), its
// stretches a static layout's jobs pinned to their partitions, each with its share of the work
// (`job_steps`: each stream job's steps) and its start-up. The result holds each job's start
// and end (JobOutcome; its partition the last one's), the horizon, the energy (the epochs' and
// the idle power between them) and the completion figures; not the layouts, segments or series.
StreamResult replay_run(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                        const ReplayPlan& plan, const std::vector<int64_t>& job_steps,
                        const SimulationOptions& options);

// `schedule` (the policy's simulated point, which the plan was made from) with the interval of
// replay_run at the error's two ends; the point alone, known false, without the bands.
StreamEstimate replay_estimate(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                               const StreamResult& schedule, const ReplayPlan& plan,
                               const std::vector<int64_t>& job_steps,
                               const SimulationOptions& options, const plan::ModelError* error,
                               double tardiness_weight_w);

}  // namespace migscope::stream
