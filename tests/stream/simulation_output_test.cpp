// Tests of `stream simulate`'s output: the JSON document's fields and intervals, the table's rows
// and the lines around them, with the figures' intervals known and unknown.
#include "stream/simulation_output.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/golden.h"

namespace migscope::stream {
namespace {

// A policy's figures as the comparison holds them: 123.456 kJ, 2 of 3 jobs late for 100 s, one
// layout change, two bins of figures over time.
StreamEstimate online_estimate(bool known) {
    StreamEstimate e;
    StreamResult& r = e.point;
    r.policy = "online";
    r.horizon_s = 1000;
    r.energy_j = 123456;
    r.mean_completion_s = 400;
    r.p95_completion_s = 900;
    r.tardiness_s = 100;
    r.late_jobs = 2;
    r.busy_fraction = 0.5;
    r.reconfigurations = 1;
    r.layouts = {{0, 0, "whole GPU (not partitioned)", {}, 0},
                 {500, 0, "3g.71gb@0 + 4g.71gb@4", {}, 560}};
    r.series_bin_s = 500;
    r.series = {{500, 60000, 0, 1}, {1000, 123456, 100, 3}};
    e.known = known;
    e.unknown_why = known ? "" : "no model error (--model-error none)";
    e.energy_j = {120000, 130000};
    e.mean_completion_s = {380, 420};
    e.p95_completion_s = {850, 950};
    e.tardiness_s = {90, 110};
    e.energy_tardiness_j = {183000, 207000};
    return e;
}

SimulationSetup setup_of(StreamObjective::Kind kind) {
    SimulationSetup setup;
    setup.trace_path = "traces/day\x1b.json";  // a control character, as a path may hold
    setup.jobs = 3;
    setup.gpus = 2;
    setup.gpu_model = "h200";
    setup.profiles_origin = "data/profiles-h200.json";
    setup.error_origin = "data/model-error-h200.json";
    setup.objective_name =
        kind == StreamObjective::Kind::kEnergyTardiness ? "energy-tardiness" : "energy";
    setup.objective.kind = kind;
    setup.objective.tardiness_weight_w = 600;
    setup.reconfiguration.orchestrator_s = 30;
    setup.reconfiguration.per_instance_s = 0.5;
    return setup;
}

PolicyComparison comparison(bool known) {
    PolicyComparison compared;
    compared.policies = {{"online", online_estimate(known)}};
    compared.online_min_gain.by_bucket = {0.034, 0.072, 0.132};
    compared.online_min_gain_from = "the model's gain error";
    return compared;
}

std::string table(const SimulationSetup& setup, const PolicyComparison& compared) {
    std::ostringstream out;
    write_simulation_table(setup, compared, out);
    return out.str();
}

TEST(SimulationOutput, JsonHasTheSetupAndEachPolicysFiguresWithTheirIntervals) {
    const nlohmann::ordered_json doc = simulation_json(
        setup_of(StreamObjective::Kind::kEnergyTardiness), comparison(/*known=*/true));
    EXPECT_EQ(doc["trace"], "traces/day\x1b.json");  // as given: JSON escapes it itself
    EXPECT_EQ(doc["jobs"], 3);
    EXPECT_EQ(doc["gpus"], 2);
    EXPECT_EQ(doc["objective"], "energy-tardiness");
    EXPECT_EQ(doc["tardiness_weight_w"], 600.0);
    EXPECT_EQ(doc["reconfiguration"]["orchestrator_s"], 30.0);
    EXPECT_EQ(doc["reconfiguration"]["per_instance_s"], 0.5);
    EXPECT_EQ(doc["online_min_gain"]["fraction_by_partitions"]["2"], 0.034);
    EXPECT_EQ(doc["online_min_gain"]["fraction_by_partitions"]["3-4"], 0.072);
    EXPECT_EQ(doc["online_min_gain"]["fraction_by_partitions"]["5+"], 0.132);
    ASSERT_EQ(doc["policies"].size(), 1u);
    const auto& p = doc["policies"][0];
    EXPECT_EQ(p["policy"], "online");
    EXPECT_EQ(p["energy_j"], 123456.0);
    EXPECT_EQ(p["energy_j_interval"]["lo"], 120000.0);
    EXPECT_EQ(p["energy_j_interval"]["hi"], 130000.0);
    EXPECT_EQ(p["energy_tardiness_j"], 123456.0 + 600 * 100);
    EXPECT_EQ(p["interval_unknown_why"], "");
    ASSERT_EQ(p["layouts"].size(), 2u);
    EXPECT_EQ(p["layouts"][1]["at_s"], 500.0);
    EXPECT_EQ(p["layouts"][1]["layout"], "3g.71gb@0 + 4g.71gb@4");
    EXPECT_EQ(p["series"]["bin_s"], 500.0);
    EXPECT_EQ(p["series"]["end_s"], nlohmann::ordered_json({500.0, 1000.0}));
    EXPECT_EQ(p["series"]["energy_tardiness_j"],
              nlohmann::ordered_json({60000.0, 123456.0 + 600 * 100}));
    EXPECT_EQ(p["series"]["jobs_done"], nlohmann::ordered_json({1, 3}));
    // The field order is the document's contract with scripts reading it.
    std::vector<std::string> keys;
    for (const auto& [key, value] : doc.items())
        keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"trace", "jobs", "gpus", "gpu_model", "profiles",
                                              "model_error", "objective", "tardiness_weight_w",
                                              "reconfiguration", "online_min_gain", "policies"}));
}

TEST(SimulationOutput, JsonIntervalsAreNullWhenUnknown) {
    const nlohmann::ordered_json doc =
        simulation_json(setup_of(StreamObjective::Kind::kEnergy), comparison(/*known=*/false));
    const auto& p = doc["policies"][0];
    for (const char* key :
         {"energy_j_interval", "mean_completion_s_interval", "p95_completion_s_interval",
          "tardiness_s_interval", "energy_tardiness_j_interval"})
        EXPECT_TRUE(p[key].is_null()) << key;
    EXPECT_EQ(p["interval_unknown_why"], "no model error (--model-error none)");
}

TEST(SimulationOutput, TableHasTheSetupARowPerPolicyAndWhatTheIntervalsAre) {
    const std::string text =
        table(setup_of(StreamObjective::Kind::kEnergyTardiness), comparison(/*known=*/true));
    EXPECT_EQ(text.rfind("traces/day\\x1b.json: 3 jobs on 2 x h200, objective energy-tardiness "
                         "(a late second costs 600 W); a layout change costs 30 s + 0.5 s per "
                         "instance; online changes for a predicted gain over 3.4 % (2 "
                         "partitions), 7.2 % (3-4), 13.2 % (5+) (the model's gain error)\n",
                         0),
              0u)
        << text;
    EXPECT_NE(text.find("policy energy kJ        interval mean JCT s        interval"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\nonline     123.5         120-130        400         380-420      900 "
                        "        850-950        100          90-110     2   50%        1       "
                        "183.5           183-207\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("intervals: every job at the slow and the fast end of the model's known "
                        "error (data/model-error-h200.json).\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("E+w*T: energy + 600 W x tardiness"), std::string::npos) << text;
}

TEST(SimulationOutput, TableSaysWhyThereAreNoIntervals) {
    const std::string text =
        table(setup_of(StreamObjective::Kind::kEnergy), comparison(/*known=*/false));
    // The weight is named only for the combined objective; the E+w*T column uses it anyway.
    EXPECT_EQ(text.find("a late second costs"), std::string::npos) << text;
    EXPECT_NE(text.find("no intervals: no model error (--model-error none).\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("       183.5                  \n"), std::string::npos) << text;
}

TEST(SimulationOutput, EveryFormatMatchesItsGoldenFile) {
    const SimulationSetup setup = setup_of(StreamObjective::Kind::kEnergyTardiness);
    const PolicyComparison known = comparison(true), unknown = comparison(false);
    test::expect_golden_formats(simulation_printers(), SimulationOutput{setup, known},
                                "stream-simulate");
    test::expect_golden_formats(simulation_printers(), SimulationOutput{setup, unknown},
                                "stream-simulate-unknown");
}

}  // namespace
}  // namespace migscope::stream
