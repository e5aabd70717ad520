// The stream policies by name, as `migscope stream simulate --policies` takes them: each name
// makes a fresh policy for a run (policies keep state). Adding a policy: its class (policies.h, a
// file of its own) and one entry here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/model_error.h"
#include "stream/estimate.h"
#include "stream/policies.h"

namespace migscope::stream {

struct PolicySettings {
    StreamObjective objective;    // energy by default
    double period_s = 12 * 3600;  // periodic: every 12 hours, to the last 12 hours' best
    double window_s = 12 * 3600;
    MinGain min_gain;  // online: the least predicted gain, a fraction of the figure
    // fixed: the user's layout on every GPU, never changed (the one run today, say).
    GpuLayout fixed_layout;
};

// The least gain the model can tell from its own error, for each size of plan: how far its
// predicted gain of partitioning was off, measured (plan::gain_band for the objective and the
// size: energy, makespan for completion, the wider of the two for energy-tardiness), as a
// fraction: max(0, hi - 1, 1 - lo). None without enough residuals.
std::optional<MinGain> min_gain_from_error(const plan::ModelError& error,
                                           const StreamObjective& objective);

// "never", "static", "periodic", "online", "fixed", in that order.
const std::vector<std::string>& policy_names();

// The named policy for this stream. "static" is the best static layout for the whole stream in
// hindsight (found here, once); "fixed" is PolicySettings::fixed_layout, an input error naming
// `layout:` without one or when some job of the stream can run on none of its partitions. An input
// error lists the names for an unknown one.
PolicyFactory policy_factory(const std::string& name, const plan::Problem& problem,
                             const std::vector<StreamJob>& jobs, const SimulationOptions& options,
                             const PolicySettings& settings);

}  // namespace migscope::stream
