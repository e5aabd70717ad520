// The policies' names and how each is made.
#include "stream/policy_registry.h"

#include <algorithm>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::stream {

const std::vector<std::string>& policy_names() {
    static const std::vector<std::string> names = {"never", "static", "periodic", "online"};
    return names;
}

std::optional<double> min_gain_from_error(const plan::ModelError& error,
                                          const StreamObjective& objective) {
    const auto fraction = [&](plan::Objective o) -> std::optional<double> {
        const plan::ErrorBand band = plan::gain_band(error, o);
        if (!band.known())
            return std::nullopt;
        return std::max({0.0, band.hi - 1, 1 - band.lo});
    };
    switch (objective.kind) {
        case StreamObjective::Kind::kEnergy:
            return fraction(plan::Objective::kEnergy);
        case StreamObjective::Kind::kMeanCompletion:
            return fraction(plan::Objective::kMakespan);
        case StreamObjective::Kind::kEnergyTardiness: {
            // Energy and time both: the wider of the two bands.
            const auto energy = fraction(plan::Objective::kEnergy);
            const auto time = fraction(plan::Objective::kMakespan);
            if (!energy || !time)
                return std::nullopt;
            return std::max(*energy, *time);
        }
    }
    return std::nullopt;
}

PolicyFactory policy_factory(const std::string& name, const plan::Problem& problem,
                             const std::vector<StreamJob>& jobs, const SimulationOptions& options,
                             const PolicySettings& settings) {
    if (name == "never")
        return [] { return std::make_unique<NeverPartition>(); };
    if (name == "static") {
        const GpuLayout best =
            best_static_layout(problem, jobs, options, settings.objective).layout;
        return [best] { return std::make_unique<StaticLayout>(best); };
    }
    if (name == "periodic") {
        return [&problem, &jobs, options, settings] {
            return std::make_unique<PeriodicRepartition>(problem, jobs, options, settings.objective,
                                                         settings.period_s, settings.window_s);
        };
    }
    if (name == "online") {
        return [&problem, &jobs, options, settings] {
            return std::make_unique<OnlineRepartition>(problem, jobs, options, settings.objective,
                                                       settings.min_gain);
        };
    }
    throw input_error("unknown policy '" + user_text::shown(name) + "' (" +
                      text::join(policy_names(), ", ") + ")");
}

}  // namespace migscope::stream
