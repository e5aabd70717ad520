// Tests of the stream simulator and its static policies on hand-computed streams.
#include "stream/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "stream/fixture.h"
#include "stream/policies.h"

namespace migscope::stream {
namespace {

using plan::testing::job_profile;
using plan::testing::profile_set;
using testing::layout;

// a: 200 items/s on the whole GPU (300 W), 100 on 2g (200 W); b: 100 on the whole GPU (250 W),
// 80 on 2g (180 W), 50 on 1g (150 W). Idle 100 W, no power limit, no mix correction. 1000 items
// each: a takes 5 s whole, 10 s on 2g; b 10 s whole, 12.5 s on 2g, 20 s on 1g.
plan::Problem two_jobs() {
    static const plan::ProfileSet set = profile_set(
        {job_profile("a", 10, {{"2g.35gb", {100, 200}}, {"whole GPU", {200, 300}}}),
         job_profile("b", 10,
                     {{"1g.18gb", {50, 150}}, {"2g.35gb", {80, 180}}, {"whole GPU", {100, 250}}})});
    return plan::make_problem(
        {{"a", "a", "train", 10, 100, {}, {}}, {"b", "b", "train", 10, 100, {}, {}}}, set,
        mig::builtin_model("h200"), {});
}

TEST(StreamSimulator, NeverPartitionRunsJobsOneAfterAnother) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, 12}}, never, {});
    EXPECT_EQ(r.policy, "never-partition");
    EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 5);
    EXPECT_DOUBLE_EQ(r.jobs[1].start_s, 5);
    EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 15);
    EXPECT_DOUBLE_EQ(r.horizon_s, 15);
    // Idle 100 W × 15 s, a's 200 W × 5 s, b's 150 W × 10 s.
    EXPECT_NEAR(r.energy_j, 1500 + 1000 + 1500, 1e-9);
    EXPECT_DOUBLE_EQ(r.mean_completion_s, 10);
    EXPECT_DOUBLE_EQ(r.tardiness_s, 3);  // b was due at 12
    EXPECT_EQ(r.late_jobs, 1u);
    EXPECT_DOUBLE_EQ(r.busy_fraction, 1);
    EXPECT_EQ(r.reconfigurations, 0u);
    EXPECT_EQ(r.jobs[1].partition, "whole GPU");
}

// The same two jobs at once on 2g + 1g: as the planner predicts that plan (model_test.cpp,
// Model.TwoJobsSideBySide): a on 2g ends at 10, b on 1g at 20, 4000 J.
TEST(StreamSimulator, AStaticLayoutRunsJobsSideBySideAsThePlannerPredicts) {
    const plan::Problem p = two_jobs();
    StaticLayout policy(layout("2g.35gb+1g.18gb"));
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, {}}}, policy, {});
    EXPECT_EQ(r.jobs[0].partition, "2g.35gb@0");
    EXPECT_EQ(r.jobs[1].partition.substr(0, 8), "1g.18gb@");  // ends at 20, not 22.5 after a
    EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 10);
    EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 20);
    EXPECT_NEAR(r.energy_j, 100 * 20 + 100 * 10 + 50 * 20, 1e-9);
    const plan::Prediction predicted =
        plan::predict(p, {plan::GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}});
    EXPECT_NEAR(r.energy_j, predicted.energy_j, 1e-9);
    EXPECT_NEAR(r.horizon_s, predicted.makespan_s, 1e-9);
}

// Pinned to the 2g, b waits there for a (10 s) and takes 12.5 s, though the 1g would end it at
// 20 s; a job pinned where it cannot run is refused, naming its partition.
TEST(StreamSimulator, APinnedJobWaitsForItsPartition) {
    const plan::Problem p = two_jobs();
    StaticLayout policy(layout("2g.35gb+1g.18gb"));
    SimulationOptions o;
    o.pinned_partition = {0, 0};
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, {}}}, policy, o);
    EXPECT_EQ(r.jobs[1].partition, "2g.35gb@0");
    EXPECT_DOUBLE_EQ(r.jobs[1].start_s, 10);
    EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 22.5);
    o.pinned_partition = {1, 0};  // a has no 1g profile
    try {
        StaticLayout again(layout("2g.35gb+1g.18gb"));
        simulate(p, {{0, 0, {}}, {1, 0, {}}}, again, o);
        ADD_FAILURE() << "a pinned where it cannot run was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("pinned partition 1"), std::string::npos) << e.what();
    }
    o.pinned_partition = {0};  // one for every job
    StaticLayout third(layout("2g.35gb+1g.18gb"));
    EXPECT_THROW(simulate(p, {{0, 0, {}}, {1, 0, {}}}, third, o), Error);
}

// On green partitions jobs that start at one moment wait 0.5 s per other one before they run,
// drawing no power (plan/start_delay.h): a and b at 0 on 2g + 1g each wait 0.5 s; a job that
// starts alone later, and the whole GPU, do not.
TEST(StreamSimulator, JobsStartingTogetherOnPartitionsWaitForEachOther) {
    plan::ProfileSet set = plan::testing::profile_set(
        {job_profile("a", 10, {{"2g.35gb", {100, 200}}, {"whole GPU", {200, 300}}}),
         job_profile("b", 10,
                     {{"1g.18gb", {50, 150}}, {"2g.35gb", {80, 180}}, {"whole GPU", {100, 250}}})});
    set.start_delay.per_partner_s = 0.5;
    const plan::Problem p = plan::make_problem(
        {{"a", "a", "train", 10, 100, {}, {}}, {"b", "b", "train", 10, 100, {}, {}}}, set,
        mig::builtin_model("h200"), {}, plan::PartitionKind::kGreen);
    SimulationOptions o;
    o.pinned_partition = {0, 1};
    StaticLayout split(layout("2g.35gb+1g.18gb"));
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, {}}}, split, o);
    EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 10.5);
    EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 20.5);
    EXPECT_NEAR(r.energy_j, 100 * 20.5 + 100 * 10 + 50 * 20, 1e-9);
    StaticLayout again(layout("2g.35gb+1g.18gb"));
    const StreamResult apart = simulate(p, {{0, 0, {}}, {1, 3, {}}}, again, o);
    EXPECT_DOUBLE_EQ(apart.jobs[0].end_s, 10);
    EXPECT_DOUBLE_EQ(apart.jobs[1].end_s, 23);
    NeverPartition never;
    EXPECT_DOUBLE_EQ(simulate(p, {{0, 0, {}}, {1, 0, {}}}, never, {}).jobs[1].end_s, 15);
}

TEST(StreamSimulator, IdleGapsCostIdlePower) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 100, {}}}, never, {});
    EXPECT_DOUBLE_EQ(r.jobs[1].start_s, 100);
    EXPECT_DOUBLE_EQ(r.horizon_s, 110);
    EXPECT_NEAR(r.energy_j, 100 * 110 + 200 * 5 + 150 * 10, 1e-9);
    EXPECT_DOUBLE_EQ(r.mean_completion_s, (5 + 10) / 2.0);
    EXPECT_NEAR(r.busy_fraction, 15.0 / 110, 1e-12);
}

TEST(StreamSimulator, JobsGoToTheGpuWhereTheyEndFirst) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    SimulationOptions o;
    o.gpus = 2;
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, {}}}, never, o);
    EXPECT_EQ(r.jobs[0].gpu, 0u);
    EXPECT_EQ(r.jobs[1].gpu, 1u);
    EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 10);
    EXPECT_NEAR(r.energy_j, 2 * 100 * 10 + 200 * 5 + 150 * 10, 1e-9);  // both GPUs idle 10 s
    EXPECT_NEAR(r.busy_fraction, 15.0 / 20, 1e-12);
}

// Splits GPU 0 into 2g + 1g when the second job arrives.
class SplitOnSecondArrival : public Policy {
  public:
    std::string name() const override { return "split"; }
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, std::nullopt}; }
    std::vector<LayoutChange> on_arrival(const StreamView& view) override {
        if (++arrivals_ != 2)
            return {};
        EXPECT_EQ(view.waiting.at(0), 1u);  // a runs
        return {{0, layout("2g.35gb+1g.18gb")}};
    }

  private:
    int arrivals_ = 0;
};

// a runs alone from 0; at 1 s b arrives and the GPU is split: a stops with 1 s of its 5 done
// (0.8 of its work left), the change costs 10 s + 0.2 s × 2 instances made, and from 11.4 s a
// resumes on 2g (0.8 × 10 s) and b runs on 1g (20 s).
TEST(StreamSimulator, ALayoutChangeStopsJobsAndCostsTime) {
    const plan::Problem p = two_jobs();
    SplitOnSecondArrival policy;
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 10;
    o.reconfiguration.per_instance_s = 0.2;
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 1, {}}}, policy, o);
    EXPECT_EQ(r.reconfigurations, 1u);
    EXPECT_EQ(r.jobs[0].restarts, 1u);
    EXPECT_EQ(r.jobs[1].restarts, 0u);
    EXPECT_DOUBLE_EQ(r.jobs[0].start_s, 0);  // its first start
    EXPECT_NEAR(r.jobs[0].end_s, 11.4 + 8, 1e-9);
    EXPECT_NEAR(r.jobs[1].start_s, 11.4, 1e-9);
    EXPECT_NEAR(r.jobs[1].end_s, 31.4, 1e-9);
    // Idle throughout; a's 200 W for 1 s; nothing while blocked; 150 W for 8 s; 50 W for 12 s.
    EXPECT_NEAR(r.energy_j, 100 * 31.4 + 200 + 150 * 8 + 50 * 12, 1e-9);
    ASSERT_EQ(r.layouts.size(), 2u);
    EXPECT_DOUBLE_EQ(r.layouts[1].at_s, 1);
    EXPECT_EQ(r.layouts[1].layout, mig::to_string(layout("2g.35gb+1g.18gb")));
}

TEST(StreamSimulator, TheModelsErrorScalesSpeedAndDynamicEnergy) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    SimulationOptions o;
    o.speed_ratio_whole = 0.5;  // measured at half the predicted speed
    o.dynamic_energy_ratio = 2;
    const StreamResult r = simulate(p, {{0, 0, {}}}, never, o);
    EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 10);
    EXPECT_NEAR(r.energy_j, 100 * 10 + 200 * 10 * 2, 1e-9);
}

TEST(StreamSimulator, TheBestStaticLayoutIsAtLeastAsGoodAsTheOthersTried) {
    const plan::Problem p = two_jobs();
    const std::vector<StreamJob> jobs = {{0, 0, {}}, {1, 0, {}}, {0, 3, {}}, {1, 4, {}}};
    for (const StreamObjective::Kind kind :
         {StreamObjective::Kind::kEnergy, StreamObjective::Kind::kMeanCompletion,
          StreamObjective::Kind::kEnergyTardiness}) {
        const StreamObjective objective{kind, 700};
        const StaticChoice best = best_static_layout(p, jobs, {}, objective);
        EXPECT_GT(best.tried, 2u);
        NeverPartition never;
        StaticLayout split(layout("2g.35gb+1g.18gb"));
        EXPECT_LE(score(best.result, objective), score(simulate(p, jobs, never, {}), objective));
        EXPECT_LE(score(best.result, objective), score(simulate(p, jobs, split, {}), objective));
        EXPECT_TRUE(holds_every_job(p, jobs, best.layout));
    }
    // a runs on no 1g: a layout of 1g only does not hold it.
    EXPECT_FALSE(holds_every_job(p, jobs, layout("7x1g.18gb")));
}

// The never partitioned stream of NeverPartitionRunsJobsOneAfterAnother in 5 s bins: a runs 0-5
// s (200 W dynamic), b 5-15 s (150 W) and is due at 12; idle 100 W.
TEST(StreamSimulator, TheSeriesAccruesEnergyAndTardinessBinByBin) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    SimulationOptions o;
    o.series_bin_s = 5;
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, 12}}, never, o);
    ASSERT_EQ(r.series.size(), 3u);
    EXPECT_DOUBLE_EQ(r.series_bin_s, 5);
    EXPECT_DOUBLE_EQ(r.series[0].end_s, 5);
    EXPECT_NEAR(r.series[0].energy_j, 100 * 5 + 200 * 5, 1e-9);
    EXPECT_NEAR(r.series[1].energy_j, 100 * 10 + 200 * 5 + 150 * 5, 1e-9);
    EXPECT_NEAR(r.series[2].energy_j, r.energy_j, 1e-9);
    EXPECT_DOUBLE_EQ(r.series[1].tardiness_s, 0);
    EXPECT_DOUBLE_EQ(r.series[2].tardiness_s, 3);
    EXPECT_EQ(r.series[0].jobs_done, 1u);
    EXPECT_EQ(r.series[1].jobs_done, 1u);
    EXPECT_EQ(r.series[2].jobs_done, 2u);
    // Without the option, no series; the figures are the same either way.
    const StreamResult plain = simulate(p, {{0, 0, {}}, {1, 0, 12}}, never, {});
    EXPECT_TRUE(plain.series.empty());
    EXPECT_DOUBLE_EQ(plain.energy_j, r.energy_j);
    o.series_bin_s = -1;
    EXPECT_THROW(simulate(p, {{0, 0, {}}}, never, o), Error);
}

// Bins too short for the run are made twice as long until at most kMaxSeriesBins hold it; the
// energy in them still adds up to the run's.
TEST(StreamSimulator, TooShortSeriesBinsAreDoubled) {
    const plan::Problem p = two_jobs();
    StaticLayout split(layout("2g.35gb+1g.18gb"));
    SimulationOptions o;
    o.series_bin_s = 0.001;  // tens of seconds in 0.001 s: tens of thousands of bins asked
    std::vector<StreamJob> jobs = {{0, 0, {}}, {1, 0, {}}, {0, 3.3, 4}, {1, 7.7, {}}};
    const StreamResult r = simulate(p, jobs, split, o);
    ASSERT_FALSE(r.series.empty());
    EXPECT_LE(r.series.size(), kMaxSeriesBins);
    EXPECT_GT(r.series.size(), kMaxSeriesBins / 2);
    // The shortest power-of-two multiple of the bin that holds the run in kMaxSeriesBins.
    const double doublings = std::log2(r.series_bin_s / 0.001);
    EXPECT_NEAR(doublings, std::round(doublings), 1e-9);
    EXPECT_GE(doublings, 1);
    EXPECT_LT(r.horizon_s / r.series_bin_s, double(kMaxSeriesBins));
    EXPECT_GE(r.horizon_s / (r.series_bin_s / 2), double(kMaxSeriesBins));
    EXPECT_DOUBLE_EQ(r.series.back().end_s, r.horizon_s);
    EXPECT_NEAR(r.series.back().energy_j, r.energy_j, 1e-9 * r.energy_j);
    EXPECT_NEAR(r.series.back().tardiness_s, r.tardiness_s, 1e-9);
    EXPECT_GT(r.tardiness_s, 0);
    // The run without a series: the same energy; the series' last but one is below it.
    EXPECT_NEAR(simulate(p, jobs, split, {}).energy_j, r.energy_j, 1e-9);
    for (size_t i = 1; i < r.series.size(); ++i) {
        EXPECT_LE(r.series[i - 1].energy_j, r.series[i].energy_j) << i;
        EXPECT_LE(r.series[i - 1].tardiness_s, r.series[i].tardiness_s) << i;
        EXPECT_LE(r.series[i - 1].jobs_done, r.series[i].jobs_done) << i;
    }
    // The energy in each bin: idle 100 W for its length, plus at most every job's dynamic power.
    for (size_t i = 1; i + 1 < r.series.size(); ++i) {
        const double drawn = r.series[i].energy_j - r.series[i - 1].energy_j;
        EXPECT_GE(drawn, 100 * r.series_bin_s * (1 - 1e-9)) << i;
        EXPECT_LE(drawn, (100 + 100 + 80) * r.series_bin_s * (1 + 1e-9)) << i;
    }
}

TEST(StreamObjective, NamesParseAndBadOnesAreRefusedNamingTheField) {
    EXPECT_EQ(parse_stream_objective("energy").kind, StreamObjective::Kind::kEnergy);
    EXPECT_EQ(parse_stream_objective("completion").kind, StreamObjective::Kind::kMeanCompletion);
    const StreamObjective combined = parse_stream_objective("energy-tardiness", 50);
    EXPECT_EQ(combined.kind, StreamObjective::Kind::kEnergyTardiness);
    EXPECT_DOUBLE_EQ(combined.tardiness_weight_w, 50);
    EXPECT_DOUBLE_EQ(parse_stream_objective("energy-tardiness").tardiness_weight_w,
                     kDefaultTardinessWeightW);
    try {
        parse_stream_objective("speed");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("--objective"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("energy-tardiness"), std::string::npos) << e.what();
    }
    for (const double bad : {-1.0, std::nan(""), HUGE_VAL}) {
        try {
            parse_stream_objective("energy-tardiness", bad);
            ADD_FAILURE() << "no error for " << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("--tardiness-weight-w"), std::string::npos)
                << e.what();
        }
    }
}

// The combined score is its definition: energy_j + weight x tardiness_s, in J. The never
// partitioned stream of NeverPartitionRunsJobsOneAfterAnother: 4000 J, b 3 s late.
// Each objective is one definition: its name parses to it, and it names its score's gain bands.
TEST(StreamObjective, EachNameIsOneDefinition) {
    ASSERT_EQ(stream_objectives().size(), stream_objective_names().size());
    for (const StreamObjectiveDefinition& d : stream_objectives()) {
        EXPECT_EQ(parse_stream_objective(d.name).kind, d.kind) << d.name;
        EXPECT_EQ(definition(d.kind).name, d.name);
        EXPECT_FALSE(d.gain_bands.empty()) << d.name;
    }
    EXPECT_TRUE(definition(StreamObjective::Kind::kEnergyTardiness).weighs_tardiness);
    EXPECT_FALSE(definition(StreamObjective::Kind::kEnergy).weighs_tardiness);
}

TEST(StreamObjective, TheCombinedScoreIsEnergyPlusTheWeightTimesTardiness) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    const StreamResult r = simulate(p, {{0, 0, {}}, {1, 0, 12}}, never, {});
    ASSERT_NEAR(r.energy_j, 4000, 1e-9);
    ASSERT_DOUBLE_EQ(r.tardiness_s, 3);
    EXPECT_NEAR(energy_tardiness_j(r, 700), 4000 + 700 * 3, 1e-9);
    EXPECT_NEAR(score(r, {StreamObjective::Kind::kEnergyTardiness, 700}), 6100, 1e-9);
    EXPECT_NEAR(score(r, {StreamObjective::Kind::kEnergyTardiness, 0}), r.energy_j, 1e-9);
    // The weight counts only for the combined objective.
    EXPECT_DOUBLE_EQ(score(r, {StreamObjective::Kind::kEnergy, 700}), r.energy_j);
    EXPECT_DOUBLE_EQ(score(r, {StreamObjective::Kind::kMeanCompletion, 700}), r.mean_completion_s);
}

// s: 100 items/s on the whole GPU (400 W), 70 on 3g (350 W); idle 100 W. Two jobs of 1000
// items at 0: one after the other on the whole GPU they end at 10 and 20 s (8000 J); side by side
// on 3g + 3g both end at 14.3 s (8571 J). Energy alone keeps the GPU whole; with both due at 15 s
// the whole GPU makes one 5 s late, 3500 J at 700 W: the combined objective takes the faster
// layout.
TEST(StreamObjective, TightDeadlinesMakeTheCombinedObjectivePreferAFasterLayout) {
    static const plan::ProfileSet set =
        profile_set({job_profile("s", 10, {{"3g.71gb", {70, 350}}, {"whole GPU", {100, 400}}})});
    const plan::Problem p = plan::make_problem({{"s", "s", "train", 10, 100, {}, {}}}, set,
                                               mig::builtin_model("h200"), {});
    const std::vector<StreamJob> loose = {{0, 0, 100}, {0, 0, 100}};
    const std::vector<StreamJob> tight = {{0, 0, 15}, {0, 0, 15}};
    const StreamObjective energy{StreamObjective::Kind::kEnergy, 700};
    const StreamObjective combined{StreamObjective::Kind::kEnergyTardiness, 700};
    EXPECT_FALSE(best_static_layout(p, tight, {}, energy).layout);
    EXPECT_FALSE(best_static_layout(p, loose, {}, combined).layout);  // nobody late: energy
    const StaticChoice faster = best_static_layout(p, tight, {}, combined);
    ASSERT_TRUE(faster.layout);
    EXPECT_DOUBLE_EQ(faster.result.tardiness_s, 0);
    EXPECT_NEAR(faster.result.jobs[1].end_s, 1000.0 / 70, 1e-9);
    NeverPartition never;
    const StreamResult whole = simulate(p, tight, never, {});
    EXPECT_NEAR(whole.energy_j, 8000, 1e-9);
    EXPECT_DOUBLE_EQ(whole.tardiness_s, 5);
    EXPECT_GT(faster.result.energy_j, whole.energy_j);
    EXPECT_LT(energy_tardiness_j(faster.result, 700), energy_tardiness_j(whole, 700));
}

// Jobs that all arrive at 0 on a static layout are a batch: the simulator's figures are the
// planner's prediction of the same assignment (the partition and order each job ran in), on
// random jobs with the mix correction, the power cap, shared memory bandwidth and (green
// partitions, odd seeds) the wait of jobs starting together in play.
TEST(StreamSimulator, ABatchIsWhatThePlannerPredictsForTheSameAssignment) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    for (unsigned seed = 1; seed <= 8; ++seed) {
        plan::ProfileSet set = plan::testing::random_profiles(5, seed);
        set.correction = {0.85, 1.1, 2};
        if (seed % 2 == 0)
            set.power_limit_w = 450;
        if (seed % 3 == 0) {
            for (plan::JobProfile& j : set.jobs)
                for (plan::PartitionProfile& pp : j.partitions)
                    pp.memory_utilization_pct = plan::testing::one(30 + 50.0 * pp.sms / 132);
        }
        set.start_delay.per_partner_s = 0.3;
        const plan::PartitionKind kind =
            seed % 2 ? plan::PartitionKind::kGreen : plan::PartitionKind::kMig;
        std::vector<plan::JobRequest> requests;
        std::vector<StreamJob> jobs;
        for (size_t i = 0; i < set.jobs.size(); ++i) {
            plan::JobRequest r;
            r.name = r.workload = set.jobs[i].workload;
            r.batch = 32;
            r.work_whole_gpu_s = 5.0 + 7.0 * static_cast<double>((seed * 13 + i * 7) % 10);
            requests.push_back(r);
            jobs.push_back({i, 0, {}});
        }
        const plan::Problem p = plan::make_problem(requests, set, h200, {}, kind);
        std::vector<mig::Layout> layouts;
        for (const mig::Layout& l : p.layouts()) {
            if (holds_every_job(p, jobs, l) && l.instances.size() >= 2)
                layouts.push_back(l);
        }
        ASSERT_FALSE(layouts.empty());
        const mig::Layout chosen = layouts[(seed * 17) % layouts.size()];
        StaticLayout policy(chosen);
        const StreamResult r = simulate(p, jobs, policy, {});
        // The assignment the simulator made: per partition, its jobs by start.
        plan::GpuPlan gpu{chosen, std::vector<std::vector<size_t>>(chosen.instances.size())};
        std::vector<size_t> order(jobs.size());
        for (size_t j = 0; j < order.size(); ++j)
            order[j] = j;
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return r.jobs[a].start_s < r.jobs[b].start_s; });
        for (size_t j : order) {
            for (size_t k = 0; k < chosen.instances.size(); ++k) {
                const mig::Instance& i = chosen.instances[k];
                if (r.jobs[j].partition == i.profile + "@" + std::to_string(i.start))
                    gpu.queues[k].push_back(j);
            }
        }
        const plan::Prediction predicted = plan::predict(p, {gpu});
        EXPECT_NEAR(r.horizon_s, predicted.makespan_s, 1e-6 * predicted.makespan_s)
            << "seed " << seed << " " << mig::to_string(chosen);
        EXPECT_NEAR(r.energy_j, predicted.energy_j, 1e-6 * predicted.energy_j)
            << "seed " << seed << " " << mig::to_string(chosen);
        for (size_t j = 0; j < jobs.size(); ++j)
            EXPECT_NEAR(r.jobs[j].end_s, predicted.jobs[j].end_s, 1e-6 * predicted.makespan_s)
                << "seed " << seed << " job " << j;
    }
}

// A long stream on many GPUs ends, every job after it arrived (found by bench/bench_stream.cpp:
// late in a long stream, a job's last sliver of work no longer moved the clock, and its event came
// back at the same time for ever).
TEST(StreamSimulator, ALongStreamEnds) {
    const plan::ProfileSet set = plan::testing::random_profiles(6, 3);
    std::vector<plan::JobRequest> requests;
    for (size_t i = 0; i < set.jobs.size(); ++i)
        requests.push_back({"j" + std::to_string(i), set.jobs[i].workload, "train", {}, {},
                            10.0 + double(i) * 9, {}});
    const plan::Problem p = plan::make_problem(requests, set, mig::builtin_model("h200"), {});
    std::vector<StreamJob> jobs;
    for (size_t i = 0; i < 5000; ++i)
        jobs.push_back({i % requests.size(), 1e6 + 0.37 * double(i), {}});
    SimulationOptions o;
    o.gpus = 50;
    StaticLayout policy(layout("3g.71gb+2g.35gb+2x1g.18gb"));
    const StreamResult r = simulate(p, jobs, policy, o);
    for (size_t j = 0; j < jobs.size(); ++j) {
        ASSERT_GT(r.jobs[j].end_s, jobs[j].arrival_s) << j;
        ASSERT_GE(r.jobs[j].start_s, jobs[j].arrival_s) << j;
    }
    EXPECT_GT(r.energy_j, p.idle_power_w * r.horizon_s * 50);
}

TEST(StreamSimulator, RefusesBadStreams) {
    const plan::Problem p = two_jobs();
    NeverPartition never;
    EXPECT_THROW(simulate(p, {{0, 5, {}}, {1, 1, {}}}, never, {}), Error);  // out of order
    EXPECT_THROW(simulate(p, {{7, 0, {}}}, never, {}), Error);               // no such job
    EXPECT_THROW(simulate(p, {{0, -1, {}}}, never, {}), Error);
    SimulationOptions none;
    none.gpus = 0;
    EXPECT_THROW(simulate(p, {{0, 0, {}}}, never, none), Error);
    StaticLayout ones(layout("7x1g.18gb"));
    try {
        simulate(p, {{0, 0, {}}}, ones, {});
        ADD_FAILURE() << "job a has no 1g profile";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("fits no partition"), std::string::npos) << e.what();
    }
    // No jobs: nothing to run, nothing drawn.
    const StreamResult empty = simulate(p, {}, never, {});
    EXPECT_DOUBLE_EQ(empty.energy_j, 0);
}

}  // namespace
}  // namespace migscope::stream
