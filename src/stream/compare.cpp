// Playing each named policy on a stream, with the online policy's least gain settled first, and
// choosing the one whose schedule is deployed.
#include "stream/compare.h"

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::stream {

PolicyComparison compare_policies(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                                  const std::vector<std::string>& names,
                                  const SimulationOptions& options, PolicySettings settings,
                                  std::optional<double> min_gain, const plan::ModelError* error,
                                  const std::function<void(const std::string&)>& progress) {
    PolicyComparison out;
    if (min_gain) {
        settings.min_gain = MinGain::all(*min_gain);
        out.online_min_gain_from = "--min-gain";
    } else if (const auto from_error =
                   error ? min_gain_from_error(*error, settings.objective) : std::nullopt) {
        settings.min_gain = *from_error;
        out.online_min_gain_from = "the model's gain error";
    } else {
        settings.min_gain = MinGain::all(0);
        out.online_min_gain_from = "no gain residuals: 0";
    }
    out.online_min_gain = settings.min_gain;
    for (const std::string& name : names) {
        if (progress)
            progress(name);
        const PolicyFactory factory = policy_factory(name, problem, jobs, options, settings);
        out.policies.emplace_back(name, estimate(problem, jobs, factory, options, error,
                                                 settings.objective.tardiness_weight_w));
    }
    return out;
}

const std::pair<std::string, StreamEstimate>& chosen_policy(const PolicyComparison& compared,
                                                            const std::string& name,
                                                            const StreamObjective& objective) {
    const auto& results = compared.policies;
    if (results.empty())
        throw input_error("--policies: no policy was compared");
    if (!name.empty()) {
        for (const auto& r : results) {
            if (r.first == name)
                return r;
        }
        throw input_error("--schedule-policy: '" + user_text::shown(name) +
                          "' is not among the policies compared (--policies)");
    }
    const auto* best = &results.front();
    for (const auto& r : results) {
        if (score(r.second.point, objective) < score(best->second.point, objective))
            best = &r;
    }
    return *best;
}

}  // namespace migscope::stream
