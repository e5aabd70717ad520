// Tests of the objectives' table: names, directions, scores and intervals read from it alone.
#include "plan/objective.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace migscope::plan {
namespace {

Prediction figures() {
    Prediction p;
    p.makespan_s = 20;
    p.energy_j = 4000;
    p.edp_js = 80000;
    p.throughput = 0.75;
    p.aggregate_throughput = 1.0;
    return p;
}

TEST(Objective, EveryObjectiveIsInTheTableInItsOwnPlaceAndRoundTripsByName) {
    ASSERT_EQ(objectives().size(), 5u);
    for (size_t i = 0; i < objectives().size(); ++i) {
        const ObjectiveInfo& o = objectives()[i];
        EXPECT_EQ(static_cast<size_t>(o.objective), i);
        EXPECT_EQ(parse_objective(o.name), o.objective);
        EXPECT_EQ(to_string(o.objective), o.name);
    }
    EXPECT_EQ(parse_objective("Aggregate-Throughput"), Objective::kAggregateThroughput);
    try {
        parse_objective("energi");
        FAIL() << "an unknown objective was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean 'energy'?"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("aggregate-throughput"), std::string::npos);
    }
}

TEST(Objective, LowerScoresAreBetterAndTheThroughputsAreNegated) {
    const Prediction p = figures();
    EXPECT_DOUBLE_EQ(score(Objective::kEnergy, p), 4000);
    EXPECT_DOUBLE_EQ(score(Objective::kMakespan, p), 20);
    EXPECT_DOUBLE_EQ(score(Objective::kEdp, p), 80000);
    EXPECT_DOUBLE_EQ(score(Objective::kThroughput, p), -0.75);
    EXPECT_DOUBLE_EQ(score(Objective::kAggregateThroughput, p), -1.0);
    Prediction unknown = p;
    unknown.energy_j = std::nan("");
    EXPECT_TRUE(std::isnan(score(Objective::kEnergy, unknown)));
}

TEST(Objective, IntervalsAreOrderedAsScoresAndBackInTheirOwnUnits) {
    PredictionInterval iv;
    iv.energy_j = {3000, 5000};
    iv.throughput = {0.5, 0.9};
    const Bounds energy = score_bounds(Objective::kEnergy, iv);
    EXPECT_DOUBLE_EQ(energy.lo, 3000);
    EXPECT_DOUBLE_EQ(energy.hi, 5000);
    const Bounds throughput = score_bounds(Objective::kThroughput, iv);
    EXPECT_DOUBLE_EQ(throughput.lo, -0.9);  // the best end first
    EXPECT_DOUBLE_EQ(throughput.hi, -0.5);
    const Bounds back = figure_bounds(Objective::kThroughput, throughput);
    EXPECT_DOUBLE_EQ(back.lo, 0.5);
    EXPECT_DOUBLE_EQ(back.hi, 0.9);
    EXPECT_DOUBLE_EQ(figure_bounds(Objective::kEnergy, energy).hi, 5000);
}

}  // namespace
}  // namespace migscope::plan
