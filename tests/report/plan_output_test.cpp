// Golden tests of the planner's printers (report/plan_output.h): the table and the JSON of one
// problem, three jobs planned on green partitions of an H200 from the shipped profiles, model
// error and start delay. Updating those data files changes the output; the golden files are then
// rewritten on purpose (golden.h).
#include "report/plan_output.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "core/text_file.h"
#include "golden.h"
#include "mig/catalog.h"
#include "plan/model_error.h"
#include "plan/start_delay.h"

namespace migscope::report {
namespace {

struct PlanFixture {
    plan::ProfileSet profiles;
    plan::ModelError error;
    plan::Problem problem;
    plan::SearchResult result;
};

// resnet18:32, resnet50:32 and bert-base:4, a minute's work alone on the whole GPU each, for the
// least energy on one GPU's green partitions; the files are named as the CLI would name them,
// without the folder (which differs from machine to machine).
PlanFixture fixture() {
    PlanFixture f;
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    f.profiles = plan::read_profiles_file(MIGSCOPE_DATA_DIR "/profiles-h200.json");
    f.profiles.start_delay = plan::parse_start_delay_json(
        read_text_file(MIGSCOPE_DATA_DIR "/start-delay-h200.json", "start-delay file"),
        "data/start-delay-h200.json");
    f.error = plan::parse_model_error_json(
        read_text_file(MIGSCOPE_DATA_DIR "/model-error-h200.json", "model-error file"),
        "data/model-error-h200.json");
    std::vector<plan::JobRequest> jobs;
    for (const auto& [name, batch] :
         {std::pair{"resnet18", 32}, {"resnet50", 32}, {"bert-base", 4}}) {
        plan::JobRequest r;
        r.name = name;
        r.workload = name;
        r.batch = batch;
        r.work_whole_gpu_s = 60;
        jobs.push_back(r);
    }
    f.problem = plan::make_problem(jobs, f.profiles, h200, {}, plan::PartitionKind::kGreen);
    plan::SearchOptions options;
    options.error = &f.error;
    // A layout of the user's own, queues in its placed order (2g@0, 2g@2, 3g@4): bert-base on
    // the 3g.
    options.given = plan::SearchOptions::GivenLayout{
        *mig::check_layout(mig::parse_layout("3g+2g+2g", h200), h200).layout, {{1}, {0}, {2}}};
    f.result = plan::search(f.problem, options);
    return f;
}

PlanReport report_of(const PlanFixture& f) {
    return PlanReport{f.problem, f.result, f.profiles, "data/profiles-h200.json", "energy", 1,
                      0.0,       "green",  "data/model-error-h200.json"};
}

TEST(PlanOutput, EveryFormatMatchesItsGoldenFile) {
    const PlanFixture f = fixture();
    const PlanReport report = report_of(f);
    test::expect_golden_formats(plan_printers(), PlanOutput{report, nullptr, ""}, "plan");
}

// --verify on a board that idles lower than the profiled one: the verification says by how much,
// over every plan's makespan, and what that alone is of the recommendation's predicted energy.
TEST(PlanOutput, VerificationSaysHowTheBoardsIdlePowerDiffersFromTheProfiles) {
    const PlanFixture f = fixture();
    const PlanReport report = report_of(f);
    plan::Verification v;
    plan::VerifiedCandidate c;
    c.name = f.result.top.front().name;
    c.predicted = f.result.top.front().prediction;
    v.candidates.push_back(c);  // not measured: only the board's line is asked about
    const double profiles_w = f.problem.idle_power_w;
    v.board_idle = plan::BoardIdle{profiles_w - 7.5, 3, profiles_w, "clocks-up"};
    const double share = -7.5 * c.predicted.makespan_s / c.predicted.energy_j;

    std::ostringstream table;
    print_verification(f.problem, v, table);
    EXPECT_NE(table.str().find(fmt::format(
                  "This board idled at {:.1f} W (idle with clocks up, median of 3 runs' idle "
                  "probes), the profiles' board at {:.1f} W: -7.5 W over a plan's whole makespan, "
                  "whatever the plan ({:+.1f} % of the recommendation's predicted energy).",
                  profiles_w - 7.5, profiles_w, 100 * share)),
              std::string::npos)
        << table.str();

    std::ostringstream out;
    plan_printers().print("json", PlanOutput{report, &v, "test"}, out);
    const nlohmann::json board = nlohmann::json::parse(out.str())["verify"]["board_idle"];
    EXPECT_DOUBLE_EQ(board["measured_w"].get<double>(), profiles_w - 7.5);
    EXPECT_EQ(board["runs"], 3);
    EXPECT_DOUBLE_EQ(board["profiles_w"].get<double>(), profiles_w);
    EXPECT_EQ(board["state"], "clocks-up");
    EXPECT_NEAR(board["recommended_energy_share"].get<double>(), share, 1e-12);
}

// --verify sets a partitioned candidate's measured energy and makespan against the sequential
// baseline measured beside it, and says whether each fell inside its measured gains' range.
TEST(PlanOutput, VerificationSetsEachPartitionedCandidateAgainstTheMeasuredBaseline) {
    const PlanFixture f = fixture();
    plan::Verification v;
    plan::VerifiedCandidate c;
    c.name = "3g.71gb@4+2g.35gb@0+2g.35gb@2";
    c.partitioned = true;
    c.complete = true;
    c.measured = plan::MeasuredRun{};
    c.measured->makespan_s = 9;
    c.measured->energy_j = 1100;
    c.energy_vs_sequential = {0.05, plan::Bounds{0.04, 0.08}, 0.91, "energy/3-4"};
    c.makespan_vs_sequential = {-0.12, plan::Bounds{-0.15, -0.11}, 0.91, "makespan/3-4"};
    c.measured_energy_vs_sequential = 0.10;
    c.measured_makespan_vs_sequential = -0.14;
    v.candidates.push_back(c);

    std::ostringstream table;
    print_verification(f.problem, v, table);
    EXPECT_NE(table.str().find("    against the sequential baseline measured beside it: energy "
                               "+10.0% measured, +5.0% predicted (+4.0 to +8.0%), outside; "
                               "makespan -14.0% measured, -12.0% predicted (-15.0 to -11.0%), "
                               "inside\n"),
              std::string::npos)
        << table.str();

    std::ostringstream out;
    plan_printers().print("json", PlanOutput{report_of(f), &v, "test"}, out);
    const nlohmann::json entry = nlohmann::json::parse(out.str())["verify"]["candidates"][0];
    EXPECT_DOUBLE_EQ(entry["measured"]["energy_vs_sequential"].get<double>(), 0.10);
    EXPECT_EQ(entry["measured"]["inside"]["energy_vs_sequential"], false);
    EXPECT_EQ(entry["measured"]["inside"]["makespan_vs_sequential"], true);
    EXPECT_EQ(entry["predicted"]["energy_vs_sequential"]["gain_group"], "energy/3-4");
}

// A candidate whose window closed without a job's work (one crashed) has no figure to compare:
// its makespan is not 0 s "outside" its interval, nor a measured -100 %.
TEST(PlanOutput, ACandidateWithAJobThatDidNotFinishIsNotCompared) {
    const PlanFixture f = fixture();
    plan::Verification v;
    plan::VerifiedCandidate c;
    c.name = "4g.71gb@0+3g.71gb@4";
    c.partitioned = true;
    c.predicted = f.result.top.front().prediction;
    c.measured = plan::MeasuredRun{};
    c.measured->makespan_s = 0;
    c.measured->jobs.push_back(plan::MeasuredJob{"crashed", "worker exited", {}, {}});
    v.candidates.push_back(c);

    std::ostringstream table;
    print_verification(f.problem, v, table);
    EXPECT_NE(table.str().find("  4g.71gb@0+3g.71gb@4: not compared: a job did not finish its "
                               "work (makespan "),
              std::string::npos)
        << table.str();
    EXPECT_EQ(table.str().find("measured (-100.0%"), std::string::npos) << table.str();

    std::ostringstream out;
    plan_printers().print("json", PlanOutput{report_of(f), &v, "test"}, out);
    const nlohmann::json m =
        nlohmann::json::parse(out.str())["verify"]["candidates"][0]["measured"];
    EXPECT_EQ(m["complete"], false);
    EXPECT_TRUE(m["makespan_s"].is_null());
    EXPECT_TRUE(m["inside"]["makespan_s"].is_null());
}

}  // namespace
}  // namespace migscope::report
