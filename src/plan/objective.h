// The planner's objectives, each described once: its name, which way is better, the figure of a
// plan it judges and how that figure prints. Every choice among objectives reads this table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan/model_error.h"

namespace migscope::plan {

struct ObjectiveInfo {
    Objective objective;
    std::string_view name;                 // as --objective takes it
    bool higher_is_better;                 // the throughputs
    double Prediction::*figure;            // the figure of a plan it judges
    Bounds PredictionInterval::*interval;  // that figure's interval
    std::string_view unit;                 // printed after figure / unit_scale: "kJ", "s", ""
    double unit_scale;
    int digits;
};
// Every objective, in Objective's order.
const std::vector<ObjectiveInfo>& objectives();
const ObjectiveInfo& info(Objective objective);

Objective parse_objective(std::string_view text);  // input error listing them
std::string to_string(Objective objective);

// A plan's score for the objective: lower is better (its figure, negated where higher is better).
// NaN where the figure is (a measured run without energy).
double score(Objective objective, const Prediction& prediction);
// The objective's interval as score orders it.
Bounds score_bounds(Objective objective, const PredictionInterval& interval);
// Score bounds back in the figure's own units.
Bounds figure_bounds(Objective objective, const Bounds& score);

}  // namespace migscope::plan
