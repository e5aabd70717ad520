// Plan verification over a scripted runner: what each candidate runs, the measured scores, the
// best measured candidate and the recommendation's gap, and candidates that cannot be compared.
#include "plan/verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "fixture.h"

namespace migscope::plan {
namespace {

using testing::profile_set;
using testing::scaling_job;

// Answers each candidate (by its index) with a scripted measurement, and records what it ran.
class ScriptedRunner : public CandidateRunner {
  public:
    std::map<size_t, MeasuredRun> answers;
    std::vector<CandidateRun> ran;
    std::optional<MeasuredRun> run(const Candidate&, size_t index, const CandidateRun& run,
                                   std::string& why_not) override {
        ran.push_back(run);
        const auto it = answers.find(index);
        if (it == answers.end()) {
            why_not = "not scripted";
            return std::nullopt;
        }
        return it->second;
    }
};

MeasuredRun measured(double makespan_s, std::optional<double> energy_j, size_t jobs,
                     const std::string& status = "ok") {
    MeasuredRun m;
    m.makespan_s = makespan_s;
    m.energy_j = energy_j;
    m.wall_s = 2;
    m.jobs.assign(jobs, MeasuredJob{status, "", 100.0, 5.0});
    return m;
}

struct Fixture {
    std::unique_ptr<ProfileSet> set;  // the problem points into it: it must outlive the problem
    Problem problem;
    SearchResult result;
};

Fixture three_candidates() {
    std::vector<JobProfile> jobs;
    for (int i = 0; i < 3; ++i)
        jobs.push_back(scaling_job("small" + std::to_string(i), 1000, 300, 0.4, 0.6, 100));
    auto set = std::make_unique<ProfileSet>(profile_set(jobs));
    std::vector<JobRequest> requests;
    for (size_t i = 0; i < set->jobs.size(); ++i)
        requests.push_back(
            {"job" + std::to_string(i), set->jobs[i].workload, "train", {}, 100, {}, {}});
    Problem problem = make_problem(requests, *set, mig::builtin_model("h200"), {});
    Fixture f{std::move(set), std::move(problem), {}};
    f.result = search(f.problem, {Objective::kEnergy, 1, 3});
    return f;
}

TEST(Verify, CandidateRunNamesEveryJobOnItsBusyPartition) {
    const Fixture f = three_candidates();
    for (const Candidate& c : f.result.top) {
        const CandidateRun run = candidate_run(f.problem, c.plan.front());
        ASSERT_EQ(run.jobs.size(), 3u) << c.name;
        std::vector<size_t> order = run.order;
        std::sort(order.begin(), order.end());
        EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2})) << c.name;
        EXPECT_EQ(run.jobs[0].workload.rfind("small", 0), 0u);
        EXPECT_EQ(run.jobs[0].name, f.problem.jobs[run.order[0]].request.name);
        if (c.partitioned()) {
            ASSERT_EQ(run.assign.size(), 3u);
            for (size_t k : run.assign)
                EXPECT_LT(k, run.layout.size());
        } else {
            EXPECT_TRUE(run.layout.empty());
            EXPECT_TRUE(run.assign.empty());
        }
    }
}

TEST(Verify, GapIsTheRecommendationAgainstTheBestMeasured) {
    const Fixture f = three_candidates();
    ASSERT_EQ(f.result.top.size(), 3u);
    ScriptedRunner runner;
    runner.answers = {
        {0, measured(10, 1100, 3)}, {1, measured(12, 1000, 3)}, {2, measured(9, 1200, 3)}};
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    ASSERT_EQ(v.candidates.size(), 4u);  // the top lacks the whole GPU: its baseline comes last
    EXPECT_EQ(runner.ran.size(), 4u);
    EXPECT_TRUE(v.candidates[3].baseline);
    EXPECT_EQ(v.candidates[3].skipped, "not scripted");
    ASSERT_TRUE(v.best_measured);
    EXPECT_EQ(*v.best_measured, 1u);
    ASSERT_TRUE(v.recommended_gap);
    EXPECT_NEAR(*v.recommended_gap, 0.10, 1e-12);
    EXPECT_DOUBLE_EQ(v.runs_wall_s, 6);
    for (size_t i = 0; i < 3; ++i) {  // each candidate's interval, from the search
        const PredictionInterval& iv = v.candidates[i].interval;
        EXPECT_DOUBLE_EQ(iv.makespan_s.lo, f.result.top[i].interval.makespan_s.lo);
        EXPECT_DOUBLE_EQ(iv.energy_j.hi, f.result.top[i].interval.energy_j.hi);
        EXPECT_TRUE(iv.makespan_s.contains(v.candidates[i].predicted.makespan_s));
        EXPECT_FALSE(v.candidates[i].baseline);
    }

    const Verification by_time = verify(f.problem, f.result, Objective::kMakespan, runner);
    EXPECT_EQ(*by_time.best_measured, 2u);
    EXPECT_NEAR(*by_time.recommended_gap, 10.0 / 9 - 1, 1e-12);
}

// The board's idle power: the median over the runs whose idle probes measured the profiles' idle
// state, beside the profiles' own; none when no run did or the profiles name no state.
TEST(Verify, TheBoardsIdlePowerIsTheMedianOfTheRunsProbedInTheProfilesState) {
    Fixture f = three_candidates();
    f.problem.idle_state = "clocks-up";
    const auto idle = [](double w, const std::string& state) {
        MeasuredRun m = measured(10, 1000, 3);
        m.idle_power_w = w;
        m.idle_state = state;
        return m;
    };
    ScriptedRunner runner;
    runner.answers = {{0, idle(120, "clocks-up")},
                      {1, idle(80, "deep")},
                      {2, idle(124, "clocks-up")},
                      {3, measured(10, 1000, 3)}};
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    ASSERT_TRUE(v.board_idle);
    EXPECT_DOUBLE_EQ(v.board_idle->measured_w, 122);
    EXPECT_EQ(v.board_idle->runs, 2u);
    EXPECT_DOUBLE_EQ(v.board_idle->profiles_w, f.problem.idle_power_w);
    EXPECT_EQ(v.board_idle->state, "clocks-up");

    runner.answers = {{0, idle(80, "deep")}, {1, measured(10, 1000, 3)}};
    EXPECT_FALSE(verify(f.problem, f.result, Objective::kEnergy, runner).board_idle);
    runner.answers = {{0, idle(120, "clocks-up")}};
    f.problem.idle_state.clear();  // profiles from before idle states were recorded
    EXPECT_FALSE(verify(f.problem, f.result, Objective::kEnergy, runner).board_idle);
}

// The top without the whole GPU: the sequential baseline is measured beside it, last.
TEST(Verify, TheSequentialBaselineIsMeasuredWhenTheTopLacksIt) {
    const Fixture f = three_candidates();
    ASSERT_TRUE(std::all_of(f.result.top.begin(), f.result.top.end(),
                            [](const Candidate& c) { return c.partitioned(); }));
    ScriptedRunner runner;
    runner.answers = {{0, measured(10, 1100, 3)}, {1, measured(12, 1000, 3)},
                      {2, measured(9, 1200, 3)}, {3, measured(15, 900, 3)}};
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    ASSERT_EQ(v.candidates.size(), 4u);
    EXPECT_FALSE(v.candidates[2].baseline);
    EXPECT_TRUE(v.candidates[3].baseline);
    EXPECT_EQ(v.candidates[3].name, f.result.baselines.front().candidate->name);
    EXPECT_TRUE(runner.ran[3].layout.empty());  // one after another on the whole GPU
    EXPECT_EQ(*v.best_measured, 3u);
    EXPECT_NEAR(*v.recommended_gap, 1100.0 / 900 - 1, 1e-12);

    // With the whole GPU among the top, nothing is added.
    Fixture with_whole = three_candidates();
    with_whole.result.top.back() = *with_whole.result.baselines.front().candidate;
    ScriptedRunner again;
    EXPECT_EQ(verify(with_whole.problem, with_whole.result, Objective::kEnergy, again)
                  .candidates.size(),
              3u);
}

// Each measured partitioned candidate's energy and makespan against the sequential baseline
// measured beside it, with what was predicted for them (and their range) carried along.
TEST(Verify, PartitionedCandidatesAreSetAgainstTheMeasuredSequentialBaseline) {
    Fixture f = three_candidates();
    f.result.top[0].energy_vs_sequential = {0.05, Bounds{0.04, 0.12}, 0.91, "energy/3-4"};
    ScriptedRunner runner;
    runner.answers = {{0, measured(10, 1100, 3)},  // the sequential baseline is candidate 3
                      {1, measured(12, std::nullopt, 3)},
                      {3, measured(15, 1000, 3)}};
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    ASSERT_EQ(v.candidates.size(), 4u);
    const VerifiedCandidate& first = v.candidates[0];
    EXPECT_TRUE(first.partitioned);
    EXPECT_NEAR(*first.measured_energy_vs_sequential, 0.10, 1e-12);
    EXPECT_NEAR(*first.measured_makespan_vs_sequential, 10.0 / 15 - 1, 1e-12);
    EXPECT_EQ(first.energy_vs_sequential.range->hi, 0.12);        // the prediction travels with it
    EXPECT_FALSE(v.candidates[1].measured_energy_vs_sequential);  // no energy measured
    EXPECT_NEAR(*v.candidates[1].measured_makespan_vs_sequential, 12.0 / 15 - 1, 1e-12);
    EXPECT_FALSE(v.candidates[2].measured_makespan_vs_sequential);  // not run
    EXPECT_FALSE(v.candidates[3].partitioned);
    EXPECT_FALSE(v.candidates[3].measured_makespan_vs_sequential);  // the baseline itself

    // Without the baseline measured there is nothing to set them against.
    ScriptedRunner no_baseline;
    no_baseline.answers = {{0, measured(10, 1100, 3)}};
    EXPECT_FALSE(verify(f.problem, f.result, Objective::kEnergy, no_baseline)
                     .candidates[0]
                     .measured_energy_vs_sequential);
}

// The user's plan (plan --layout) is measured after the others, unless one of them is it.
TEST(Verify, AGivenPlanIsMeasuredTooUnlessItIsAmongTheOthers) {
    Fixture f = three_candidates();
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    const mig::Layout one = *mig::check_layout(mig::parse_layout("4g", h200), h200).layout;
    SearchOptions o{Objective::kEnergy, 1, 3};
    o.given = SearchOptions::GivenLayout{one, {{2, 0, 1}}};
    f.result = search(f.problem, o);
    ScriptedRunner runner;
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    ASSERT_EQ(v.candidates.size(), 5u);  // the top 3, the sequential baseline, the given plan
    EXPECT_TRUE(v.candidates[3].baseline);
    EXPECT_FALSE(v.candidates[3].given);
    EXPECT_TRUE(v.candidates[4].given);
    EXPECT_FALSE(v.candidates[4].baseline);
    EXPECT_EQ(runner.ran[4].layout, std::vector<std::string>{"4g.71gb@0"});
    EXPECT_EQ(runner.ran[4].order, (std::vector<size_t>{2, 0, 1}));

    // Given as the search's own first candidate: run once.
    o.given = SearchOptions::GivenLayout{*f.result.top.front().plan.front().layout,
                                         f.result.top.front().plan.front().queues};
    f.result = search(f.problem, o);
    ScriptedRunner again;
    const Verification once = verify(f.problem, f.result, Objective::kEnergy, again);
    EXPECT_EQ(once.candidates.size(), 4u);
    EXPECT_TRUE(std::none_of(once.candidates.begin(), once.candidates.end(),
                             [](const VerifiedCandidate& c) { return c.given; }));
}

// Jobs with work of their own run it: each job's steps travel with its spec.
TEST(Verify, EachJobsOwnStepsTravelWithIt) {
    std::vector<JobProfile> jobs;
    for (int i = 0; i < 2; ++i)
        jobs.push_back(scaling_job("small" + std::to_string(i), 1000, 300, 0.4, 0.6, 100));
    const ProfileSet set = profile_set(jobs);
    const Problem p = make_problem({{"a", "small0", "train", {}, 100, {}, {}},
                                    {"b", "small1", "train", {}, 250, {}, {}}},
                                   set, mig::builtin_model("h200"), {});
    const CandidateRun run = candidate_run(p, GpuPlan{std::nullopt, {{1, 0}}});
    ASSERT_EQ(run.jobs.size(), 2u);
    EXPECT_EQ(run.jobs[0].steps, 250);
    EXPECT_EQ(run.jobs[1].steps, 100);
}

TEST(Verify, FailedJobsMissingEnergyAndUnrunCandidatesAreNotCompared) {
    const Fixture f = three_candidates();
    ScriptedRunner runner;
    runner.answers = {{0, measured(10, 1100, 3, "out of memory")}, {2, measured(9, {}, 3)}};
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    EXPECT_FALSE(v.candidates[0].score);  // a job failed
    EXPECT_FALSE(v.candidates[0].complete);
    EXPECT_TRUE(v.candidates[2].complete);
    EXPECT_FALSE(v.candidates[1].measured);
    EXPECT_EQ(v.candidates[1].skipped, "not scripted");
    EXPECT_FALSE(v.candidates[2].score);  // no energy measured
    EXPECT_FALSE(v.best_measured);
    EXPECT_FALSE(v.recommended_gap);
}

// Throughput is the jobs' work (whole-GPU seconds from their profiles) over the measured
// makespan; the aggregate, each partition's work over when its last job ended.
TEST(Verify, ThroughputsAreTheProfiledWorkOverTheMeasuredTimes) {
    const Fixture f = three_candidates();
    CandidateRun plan;
    plan.order = {0, 1, 2};
    plan.layout = {"4g.71gb@0", "3g.71gb@4"};
    plan.assign = {0, 0, 1};
    MeasuredRun run = measured(10, 1000, 3);
    run.jobs[0].finish_s = 4;
    run.jobs[1].finish_s = 10;
    run.jobs[2].finish_s = 5;
    const double w = f.problem.jobs[0].on[f.problem.whole()].time_s;  // equal jobs
    EXPECT_NEAR(*measured_score(Objective::kThroughput, f.problem, plan, run), -3 * w / 10, 1e-12);
    EXPECT_NEAR(*measured_score(Objective::kAggregateThroughput, f.problem, plan, run),
                -(2 * w / 10 + w / 5), 1e-12);
    EXPECT_EQ(measured_score(Objective::kEdp, f.problem, plan, run), 10000);
    run.jobs[2].finish_s.reset();  // a partition's end unknown: no aggregate
    EXPECT_FALSE(measured_score(Objective::kAggregateThroughput, f.problem, plan, run));
    run.energy_j.reset();
    EXPECT_EQ(measured_score(Objective::kMakespan, f.problem, plan, run), 10);
    EXPECT_FALSE(measured_score(Objective::kEnergy, f.problem, plan, run));
}

TEST(Verify, ForThroughputTheGapIsHowMuchLessTheRecommendationDid) {
    const Fixture f = three_candidates();
    ScriptedRunner runner;
    runner.answers = {
        {0, measured(12, 1000, 3)}, {1, measured(10, 1000, 3)}, {2, measured(11, 1000, 3)}};
    const Verification v = verify(f.problem, f.result, Objective::kThroughput, runner);
    EXPECT_EQ(*v.best_measured, 1u);
    EXPECT_NEAR(*v.recommended_gap, 1 - 10.0 / 12, 1e-12);  // 1 - its throughput / the best's
    ASSERT_TRUE(v.candidates[0].throughput);
    EXPECT_LT(*v.candidates[0].throughput, *v.candidates[1].throughput);
}

// Measured ends count from the candidate's start, as the predicted ones do: a queued job's
// finish already does; on a whole GPU each job ran in its own window, so its end is the sum of
// the windows up to its own.
TEST(Verify, MeasuredEndsCountFromTheCandidatesStartAsPredictedOnes) {
    const Fixture f = three_candidates();
    ScriptedRunner runner;
    for (size_t i = 0; i <= f.result.top.size(); ++i) {  // the sequential baseline last
        MeasuredRun m = measured(9, 1000, 3);
        m.jobs[0].finish_s = 2;
        m.jobs[1].finish_s = 3;
        m.jobs[2].finish_s = 4;
        runner.answers[i] = m;
    }
    const Verification v = verify(f.problem, f.result, Objective::kEnergy, runner);
    bool saw_whole = false, saw_partitioned = false;
    for (size_t i = 0; i < v.candidates.size(); ++i) {
        const VerifiedCandidate& c = v.candidates[i];
        ASSERT_EQ(c.end_s.size(), 3u) << c.name;
        const bool partitioned = !c.baseline && f.result.top[i].partitioned();
        const std::vector<double> expected =
            partitioned ? std::vector<double>{2, 3, 4} : std::vector<double>{2, 5, 9};
        (partitioned ? saw_partitioned : saw_whole) = true;
        for (size_t k = 0; k < 3; ++k)
            EXPECT_DOUBLE_EQ(c.end_s[k].value_or(-1), expected[k]) << c.name << " job " << k;
    }
    EXPECT_TRUE(saw_whole);
    EXPECT_TRUE(saw_partitioned);

    // A whole GPU's end is unknown from the first job without one; a partition's are its own.
    CandidateRun whole, split;
    whole.jobs.resize(2);
    split.jobs.resize(1);
    split.layout = {"7g.141gb@0"};
    MeasuredRun m = measured(9, 1000, 3);
    m.jobs[0].finish_s.reset();
    m.jobs[1].finish_s = 3;
    m.jobs[2].finish_s = 4;
    const auto ends = measured_end_times({whole, split}, m);
    ASSERT_EQ(ends.size(), 3u);
    EXPECT_FALSE(ends[0]);
    EXPECT_FALSE(ends[1]);
    EXPECT_EQ(ends[2], 4);
}

}  // namespace
}  // namespace migscope::plan
