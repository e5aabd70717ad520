// The objectives' table and the functions that read it.
#include "plan/objective.h"

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::plan {

const std::vector<ObjectiveInfo>& objectives() {
    static const std::vector<ObjectiveInfo> table = {
        {Objective::kEnergy, "energy", false, &Prediction::energy_j, &PredictionInterval::energy_j,
         "kJ", 1e3, 2},
        {Objective::kThroughput, "throughput", true, &Prediction::throughput,
         &PredictionInterval::throughput, "", 1, 2},
        {Objective::kAggregateThroughput, "aggregate-throughput", true,
         &Prediction::aggregate_throughput, &PredictionInterval::aggregate_throughput, "", 1, 2},
        {Objective::kMakespan, "makespan", false, &Prediction::makespan_s,
         &PredictionInterval::makespan_s, "s", 1, 1},
        {Objective::kEdp, "edp", false, &Prediction::edp_js, &PredictionInterval::edp_js, "MJ·s",
         1e6, 2},
    };
    return table;
}

const ObjectiveInfo& info(Objective objective) {
    return objectives().at(static_cast<size_t>(objective));
}

Objective parse_objective(std::string_view text) {
    const std::string t = text::lower(text);
    std::vector<std::string> names;
    for (const ObjectiveInfo& o : objectives()) {
        if (o.name == t)
            return o.objective;
        names.emplace_back(o.name);
    }
    throw input_error("unknown objective '" + user_text::shown(text) + "'" +
                      text::did_you_mean(t, names) + " (" + text::join(names, ", ") + ")");
}

std::string to_string(Objective objective) {
    return std::string(info(objective).name);
}

double score(Objective objective, const Prediction& p) {
    const ObjectiveInfo& o = info(objective);
    return o.higher_is_better ? -(p.*o.figure) : p.*o.figure;
}

Bounds score_bounds(Objective objective, const PredictionInterval& iv) {
    const ObjectiveInfo& o = info(objective);
    const Bounds& b = iv.*o.interval;
    return o.higher_is_better ? Bounds{-b.hi, -b.lo} : b;
}

Bounds figure_bounds(Objective objective, const Bounds& score) {
    return info(objective).higher_is_better ? Bounds{-score.hi, -score.lo} : score;
}

}  // namespace migscope::plan
