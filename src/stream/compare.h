// Every named policy played on one stream, each with its interval: what `migscope stream simulate`
// prints. The online policy's least gain is the caller's, or else what the model's error lets it
// tell apart.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stream/policy_registry.h"

namespace migscope::stream {

struct PolicyComparison {
    std::vector<std::pair<std::string, StreamEstimate>> policies;  // by name, in the order asked
    MinGain online_min_gain;
    std::string online_min_gain_from;  // "--min-gain", "the model's gain error" or why 0
};

// `settings.min_gain` is used when `min_gain` is given; otherwise min_gain_from_error, else 0.
// `progress` is told each policy's name before its runs.
PolicyComparison compare_policies(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                                  const std::vector<std::string>& names,
                                  const SimulationOptions& options, PolicySettings settings,
                                  std::optional<double> min_gain, const plan::ModelError* error,
                                  const std::function<void(const std::string&)>& progress = {});

// The policy whose schedule is deployed: the one named, which must be among those compared (an
// input error naming --schedule-policy otherwise), or else the one that scores best on
// `objective` (the first of equals).
const std::pair<std::string, StreamEstimate>& chosen_policy(const PolicyComparison& compared,
                                                            const std::string& name,
                                                            const StreamObjective& objective);

}  // namespace migscope::stream
