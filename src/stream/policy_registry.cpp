// The policies' names and how each is made.
#include "stream/policy_registry.h"

#include <algorithm>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::stream {

const std::vector<std::string>& policy_names() {
    static const std::vector<std::string> names = {"never", "static", "periodic", "online",
                                                   "fixed"};
    return names;
}

std::optional<MinGain> min_gain_from_error(const plan::ModelError& error,
                                           const StreamObjective& objective) {
    // Per size, the widest of the objective's planner gain bands (of plans of that size where
    // there are enough, as `plan` takes them); none while any of them is unknown.
    MinGain out;
    for (size_t b = 0; b < plan::kGainBuckets; ++b) {
        for (const plan::Objective o : definition(objective.kind).gain_bands) {
            const plan::ErrorBand band = plan::gain_band_of_bucket(error, o, b);
            if (!band.known())
                return std::nullopt;
            out.by_bucket[b] = std::max({out.by_bucket[b], band.hi - 1, 1 - band.lo});
        }
    }
    return out;
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
    if (name == "fixed") {
        if (!settings.fixed_layout)
            throw input_error("layout: the policy fixed runs a layout of yours: give one");
        if (!holds_every_job(problem, jobs, settings.fixed_layout))
            throw input_error("layout: some job of the stream can run on none of " +
                              plan::describe(plan::GpuPlan{settings.fixed_layout, {}}) +
                              "'s partitions (memory or its profile's sizes)");
        return [layout = settings.fixed_layout] {
            return std::make_unique<StaticLayout>(layout, "fixed");
        };
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
