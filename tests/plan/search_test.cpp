// Tests of the planner's search: known optima, exhaustive against brute force, the heuristic's
// gap to the exact answer, baselines and the Pareto front.
#include "plan/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/error.h"
#include "fixture.h"

namespace migscope::plan {
namespace {

using testing::profile_set;
using testing::random_profiles;
using testing::scaling_job;

const mig::GpuModel& h200() {
    return mig::builtin_model("h200");
}

// `count` alike jobs that cannot fill the GPU (speed as (SMs/132)^0.3): they gain from partitions.
ProfileSet small_jobs(int count) {
    std::vector<JobProfile> jobs;
    for (int i = 0; i < count; ++i)
        jobs.push_back(scaling_job("small" + std::to_string(i), 1000, 300, 0.3, 0.5, 100));
    return profile_set(jobs);
}

std::vector<JobRequest> equal_work(const ProfileSet& set, double whole_gpu_s = 10) {
    std::vector<JobRequest> out;
    for (size_t i = 0; i < set.jobs.size(); ++i)
        out.push_back(
            {"job" + std::to_string(i), set.jobs[i].workload, "train", {}, {}, whole_gpu_s, {}});
    return out;
}

std::vector<JobRequest> random_work(const ProfileSet& set, unsigned seed) {
    std::mt19937 rng(seed * 7 + 1);
    std::vector<JobRequest> out = equal_work(set);
    for (JobRequest& r : out)
        r.work_whole_gpu_s = 5 + 60 * std::uniform_real_distribution<double>(0, 1)(rng);
    return out;
}

// The best score over every layout (and the whole GPU) × every assignment, idle partitions too;
// each queue runs its jobs longest first (by whole-GPU time), as the search orders them.
double brute_force(const Problem& p, Objective o) {
    std::vector<std::optional<mig::Layout>> layouts = {std::nullopt};
    for (const mig::Layout& l : p.layouts())
        layouts.push_back(l);
    double best = 1e300;
    const size_t n = p.jobs.size();
    std::vector<size_t> longest_first(n);
    std::iota(longest_first.begin(), longest_first.end(), 0);
    std::stable_sort(longest_first.begin(), longest_first.end(), [&](size_t a, size_t b) {
        return p.jobs[a].on[p.whole()].time_s > p.jobs[b].on[p.whole()].time_s;
    });
    for (const auto& l : layouts) {
        const size_t k = l ? l->instances.size() : 1;
        std::vector<size_t> digit(n, 0);
        while (true) {
            GpuPlan g{l, std::vector<std::vector<size_t>>(k)};
            bool ok = true;
            for (size_t j : longest_first) {
                const size_t s = l ? p.size_index(l->instances[digit[j]].profile) : p.whole();
                ok = ok && p.jobs[j].on[s].usable;
                g.queues[digit[j]].push_back(j);
            }
            if (ok)
                best = std::min(best, score(o, predict(p, {g})));
            size_t i = 0;
            while (i < n && ++digit[i] == k)
                digit[i++] = 0;
            if (i == n)
                break;
        }
    }
    return best;
}

constexpr Objective kObjectives[] = {Objective::kEnergy, Objective::kThroughput,
                                     Objective::kAggregateThroughput, Objective::kMakespan,
                                     Objective::kEdp};

TEST(Search, SequentialWinsForJobsThatFillTheGpu) {
    // Speed and dynamic power follow the SM share: no layout beats the whole GPU (layouts leave
    // SMs unused while idle power keeps flowing).
    const ProfileSet set = profile_set({scaling_job("big", 1000, 500, 1.0, 1.0, 100),
                                        scaling_job("big2", 800, 450, 1.0, 1.0, 100),
                                        scaling_job("big3", 600, 400, 1.0, 1.0, 100)});
    const Problem p = make_problem(equal_work(set), set, h200(), {});
    for (Objective o : kObjectives) {
        const SearchResult r = search(p, {o, 1, 3});
        ASSERT_FALSE(r.top.empty());
        EXPECT_TRUE(r.sequential_wins()) << to_string(o) << ": " << r.top.front().name;
        EXPECT_EQ(r.top.front().name, "whole GPU (not partitioned)");
        EXPECT_DOUBLE_EQ(r.top.front().prediction.throughput, 1.0);
    }
}

// A long job and a short one that each keep (SMs/132)^0.7 of their speed: side by side the
// partitions' rates add up to more than 1 (the aggregate throughput a stream of such jobs would
// see), but the long job alone on its partition finishes later than both one after another on
// the whole GPU. With fixed work, throughput is the work over the makespan: sequential wins.
TEST(Search, ThroughputIsTheWorkOverTheMakespanAndTheAggregateIsItsOwnObjective) {
    const ProfileSet set = profile_set({scaling_job("long", 1000, 300, 0.7, 0.7, 100),
                                        scaling_job("short", 1000, 300, 0.7, 0.7, 100)});
    std::vector<JobRequest> work = equal_work(set, 100);
    work[1].work_whole_gpu_s = 1;
    const Problem p = make_problem(work, set, h200(), {});
    const SearchResult by_work = search(p, {Objective::kThroughput, 1, 3});
    EXPECT_TRUE(by_work.sequential_wins()) << by_work.top.front().name;
    EXPECT_DOUBLE_EQ(by_work.top.front().prediction.throughput, 1.0);
    const SearchResult by_rate = search(p, {Objective::kAggregateThroughput, 1, 3});
    ASSERT_FALSE(by_rate.sequential_wins());
    const Prediction& partitioned = by_rate.top.front().prediction;
    EXPECT_GT(partitioned.aggregate_throughput, 1.1);
    EXPECT_LT(partitioned.throughput, 1.0);  // it finishes later than one after another
    EXPECT_GT(partitioned.makespan_s, by_work.top.front().prediction.makespan_s);
}

// `n` residuals of every group and kind, ratios lo..hi.
ModelError uniform_error(double lo, double hi, size_t n = 8) {
    ModelError e;
    for (const ResidualKind kind : {ResidualKind::kSpeed, ResidualKind::kDynamicEnergy}) {
        for (const char* group : {"alone", "mix"}) {
            for (size_t i = 0; i < n; ++i)
                e.residuals.push_back(
                    {kind, group, lo + (hi - lo) * double(i) / double(n - 1), "t", "t", "green"});
        }
    }
    return e;
}

// On two GPUs as on one: small jobs gain from partitions by their points; that gain is the
// recommendation only while the model's error is smaller than it.
TEST(Search, OnSeveralGpusAPartitionedPlanIsRecommendedOnlyClearOfTheModelsError) {
    const ProfileSet set = small_jobs(6);
    const Problem p = make_problem(equal_work(set, 60), set, h200(), {});
    const ModelError tight = uniform_error(0.99, 1.01), wide = uniform_error(0.4, 1.6);
    SearchOptions o{Objective::kEnergy, 2, 3};
    o.error = &tight;
    const SearchResult clear = search(p, o);
    EXPECT_EQ(clear.decision.verdict, Verdict::kClearGain);
    EXPECT_TRUE(clear.top.front().partitioned());
    EXPECT_GT(clear.decision.gain, 0.05);
    EXPECT_LT(clear.decision.partitioned.hi, clear.decision.not_partitioned.lo);
    o.error = &wide;
    const SearchResult inside = search(p, o);
    EXPECT_EQ(inside.decision.verdict, Verdict::kInsideError);
    EXPECT_FALSE(inside.top.front().partitioned());  // the sequential baseline, first
    EXPECT_EQ(inside.top.front().name, inside.baselines.front().candidate->name);
    EXPECT_DOUBLE_EQ(inside.decision.gain, clear.decision.gain);
    EXPECT_FALSE(inside.decision.indistinguishable.empty());
    // The same plans were searched: only the answer moved.
    EXPECT_EQ(inside.top.size(), clear.top.size() + 1);
    o.error = nullptr;
    EXPECT_EQ(search(p, o).decision.verdict, Verdict::kPointsOnly);
}

// Where the residuals hold measured gains of partitioning for the objective, they judge: the
// predicted gain corrected by their median, recommended only when their whole range keeps it
// above 0, however narrow the intervals.
TEST(Search, MeasuredGainsOfPartitioningJudgeWhereTheResidualsHaveThem) {
    const ProfileSet set = small_jobs(6);
    const Problem p = make_problem(equal_work(set, 60), set, h200(), {});
    SearchOptions o{Objective::kEnergy, 1, 3};
    ModelError e = uniform_error(0.99, 1.01);
    o.error = &e;
    const SearchResult by_intervals = search(p, o);
    ASSERT_EQ(by_intervals.decision.verdict, Verdict::kClearGain);
    EXPECT_EQ(by_intervals.decision.gain_pairs, 0u);
    const double gain = by_intervals.decision.gain;
    ASSERT_GT(gain, 0.1);
    // Partitioned plans measured (energy ratio to sequential) 1.0-1.1 of their predicted ratio,
    // median 1.05: the corrected gain is 1 - (1 - gain) × 1.05, its range from 1.0 and 1.1.
    for (int i = 0; i <= 10; ++i)
        e.residuals.push_back({ResidualKind::kGain, "energy", 1.0 + 0.01 * i, "t", "t", "green"});
    const SearchResult modest = search(p, o);
    EXPECT_EQ(modest.decision.gain_pairs, 11u);
    EXPECT_NEAR(modest.decision.corrected_gain, 1 - (1 - gain) * 1.05, 1e-9);
    EXPECT_NEAR(modest.decision.gain_range.lo, 1 - (1 - gain) * 1.1, 1e-9);
    EXPECT_NEAR(modest.decision.gain_range.hi, gain, 1e-9);
    EXPECT_EQ(modest.decision.verdict, Verdict::kClearGain);
    // Gains measured at up to 1 / (1 - gain) of predicted take all of it: do not partition.
    for (int i = 0; i < 20; ++i)  // enough that the 95th percentile is that high
        e.residuals.push_back({ResidualKind::kGain, "energy", 1.0 / (1 - gain) + 0.01, "t", "t",
                               "green"});
    const SearchResult none = search(p, o);
    EXPECT_LT(none.decision.gain_range.lo, 0);
    EXPECT_EQ(none.decision.verdict, Verdict::kInsideError);
    EXPECT_FALSE(none.top.front().partitioned());
    EXPECT_EQ(none.decision.gain_group, "energy");
    // Plans with as many busy partitions as the best partitioned one, measured as predicted:
    // from 8 of them, their band judges alone, and the gain is clear again.
    const auto best = std::find_if(none.top.begin(), none.top.end(),
                                   [&](const Candidate& c) { return c.partitioned(); });
    ASSERT_NE(best, none.top.end());
    const size_t busy = partitions_busy(best->plan.front());
    for (int i = 0; i < 7; ++i)
        e.residuals.push_back(
            {ResidualKind::kGain, gain_group(Objective::kEnergy, busy), 1.0, "t", "t", "green"});
    EXPECT_EQ(search(p, o).decision.verdict, Verdict::kInsideError);  // 7: too few
    e.residuals.push_back(
        {ResidualKind::kGain, gain_group(Objective::kEnergy, busy), 1.0, "t", "t", "green"});
    const SearchResult grouped = search(p, o);
    EXPECT_EQ(grouped.decision.gain_group, gain_group(Objective::kEnergy, busy));
    EXPECT_EQ(grouped.decision.gain_pairs, 8u);
    EXPECT_NEAR(grouped.decision.corrected_gain, gain, 1e-9);
    EXPECT_EQ(grouped.decision.verdict, Verdict::kClearGain);
    // Another objective's gains say nothing of this one's: the intervals judge it.
    o.objective = Objective::kMakespan;
    EXPECT_EQ(search(p, o).decision.gain_pairs, 0u);
}

// Every candidate's energy and makespan against the sequential baseline carry the range of the
// measured gains of plans its size: the decision's band, as a change (the ratio × its ends, - 1).
TEST(Search, EveryCandidatesChangeVsSequentialCarriesItsMeasuredGainsRange) {
    const ProfileSet set = small_jobs(6);
    const Problem p = make_problem(equal_work(set, 60), set, h200(), {});
    SearchOptions o{Objective::kEnergy, 1, 3};
    ModelError e = uniform_error(0.99, 1.01);
    o.error = &e;
    for (int i = 0; i <= 10; ++i)  // energy gains 1.0-1.1 for every size; no makespan gains
        e.residuals.push_back({ResidualKind::kGain, "energy", 1.0 + 0.01 * i, "t", "t", "green"});
    const SearchResult r = search(p, o);
    const Candidate& sequential = *r.baselines.front().candidate;
    EXPECT_DOUBLE_EQ(sequential.energy_vs_sequential.predicted, 0);
    EXPECT_FALSE(sequential.energy_vs_sequential.range);  // not partitioned: its own figure
    size_t partitioned = 0;
    for (const Candidate& c : r.top) {
        if (!c.partitioned())
            continue;
        ++partitioned;
        const double ratio = c.prediction.energy_j / sequential.prediction.energy_j;
        EXPECT_NEAR(c.energy_vs_sequential.predicted, ratio - 1, 1e-12);
        ASSERT_TRUE(c.energy_vs_sequential.range) << c.name;
        EXPECT_NEAR(c.energy_vs_sequential.range->lo, ratio - 1, 1e-9);
        EXPECT_NEAR(c.energy_vs_sequential.range->hi, ratio * 1.1 - 1, 1e-9);
        EXPECT_EQ(c.energy_vs_sequential.gain_group, "energy");
        // The decision's range of the same plan is the same band, read as a gain (1 - ratio).
        if (c.name == r.decision.best_partitioned)
            EXPECT_NEAR(r.decision.gain_range.lo, -c.energy_vs_sequential.range->hi, 1e-9);
        EXPECT_NEAR(c.makespan_vs_sequential.predicted,
                    c.prediction.makespan_s / sequential.prediction.makespan_s - 1, 1e-12);
        EXPECT_FALSE(c.makespan_vs_sequential.range);  // no makespan gains measured
    }
    EXPECT_GT(partitioned, 0u);
    o.error = nullptr;
    for (const Candidate& c : search(p, o).top)
        EXPECT_FALSE(c.energy_vs_sequential.range);
}

TEST(Search, SevenSmallJobsGoOnSevenSmallPartitions) {
    // Seven equal jobs that keep 45% of their speed on 1g and draw little power there.
    std::vector<JobProfile> jobs;
    for (int i = 0; i < 7; ++i)
        jobs.push_back(scaling_job("small" + std::to_string(i), 1000, 300, 0.4, 0.6, 100));
    const ProfileSet set = profile_set(jobs);
    const Problem p = make_problem(equal_work(set), set, h200(), {});
    for (Objective o : kObjectives) {
        const SearchResult r = search(p, {o, 1, 3});
        EXPECT_EQ(r.method, Method::kExhaustive);
        // One job per partition on seven 1g partitions (one of them may be the 26-SM 1g.35gb).
        const GpuPlan& g = r.top.front().plan.front();
        ASSERT_TRUE(g.layout);
        EXPECT_EQ(g.queues.size(), 7u) << to_string(o) << ": " << r.top.front().name;
        for (const auto& q : g.queues)
            EXPECT_EQ(q.size(), 1u) << to_string(o);
        if (o == Objective::kEnergy) {
            EXPECT_EQ(r.top.front().name,
                      "1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6");
        }
        EXPECT_FALSE(r.sequential_wins());
        const Candidate& seq = *r.baselines[0].candidate;
        EXPECT_EQ(r.baselines[0].name, "sequential whole GPU");
        EXPECT_LT(r.top.front().prediction.energy_j, seq.prediction.energy_j);
        EXPECT_GT(r.top.front().prediction.throughput, 3 * seq.prediction.throughput);
    }
}

// Job 0 as a command whose one run is its drawn work, 40 % of the run start-up (which a mix does
// not slow down).
void make_first_a_command(ProfileSet& set, std::vector<JobRequest>& work) {
    JobProfile& j = set.jobs[0];
    const double items = *work[0].work_whole_gpu_s * j.partitions.back().items_per_s.value;
    j.name = work[0].name;
    j.command = {"python3", "train.py", j.workload};
    j.workload.clear();
    j.item_unit = "runs";
    j.items_per_step = 1;
    for (PartitionProfile& p : j.partitions) {
        const double run_s = items / p.items_per_s.value;
        p.items_per_s = testing::one(1 / run_s);
        p.startup_s = testing::one(0.4 * run_s);
    }
    work[0].workload.clear();
    work[0].command = j.command;
    work[0].work_whole_gpu_s.reset();
}

TEST(Search, ExhaustiveMatchesBruteForceOnTinyInstances) {
    bool sharing_changed_an_answer = false;  // the memory bandwidth's sharing, on some seed
    for (unsigned seed = 1; seed <= 6; ++seed) {
        ProfileSet set = random_profiles(seed % 2 ? 3 : 2, seed);
        std::vector<JobRequest> work = random_work(set, seed);
        if (seed > 3) {
            set.correction = {0.85, 0.9, 2};
            make_first_a_command(set, work);
        }
        if (seed % 2 == 0)
            set.power_limit_w = 350;  // the mixes of the biggest jobs slow to fit
        if (seed >= 3) {  // memory-hungry jobs: two or three together want more than 100 %
            const Problem unshared = make_problem(work, set, h200(), {seed % 3 * 0.15});
            for (JobProfile& j : set.jobs)
                for (PartitionProfile& pp : j.partitions)
                    pp.memory_utilization_pct = testing::one(40 + 50.0 * pp.sms / 132);
            const Problem shared = make_problem(work, set, h200(), {seed % 3 * 0.15});
            for (Objective o : kObjectives)
                sharing_changed_an_answer |= brute_force(shared, o) != brute_force(unshared, o);
        }
        const Problem p = make_problem(work, set, h200(), {seed % 3 * 0.15});
        if (set.power_limit_w) {  // the limit changes some answer
            set.power_limit_w.reset();
            const Problem unlimited = make_problem(work, set, h200(), {seed % 3 * 0.15});
            EXPECT_TRUE(
                std::any_of(std::begin(kObjectives), std::end(kObjectives),
                            [&](auto o) { return brute_force(p, o) != brute_force(unlimited, o); }))
                << "seed " << seed;
        }
        for (Objective o : kObjectives) {
            const SearchResult r = search(p, {o, 1, 1});
            ASSERT_FALSE(r.top.empty());
            const double found = score(o, r.top.front().prediction);
            EXPECT_NEAR(found, brute_force(p, o), 1e-9 * std::abs(found))
                << "seed " << seed << " " << to_string(o);
        }
    }
    EXPECT_TRUE(sharing_changed_an_answer);
}

TEST(Search, TopCandidatesAreSortedDistinctLayoutsAndBaselinesAreThere) {
    const ProfileSet set = random_profiles(5, 11);
    const Problem p = make_problem(random_work(set, 11), set, h200(), {});
    const SearchResult r = search(p, {Objective::kEnergy, 1, 5});
    ASSERT_EQ(r.top.size(), 5u);
    for (size_t i = 1; i < r.top.size(); ++i) {
        EXPECT_LE(r.top[i - 1].prediction.energy_j, r.top[i].prediction.energy_j);
        EXPECT_NE(r.top[i - 1].name, r.top[i].name);
    }
    ASSERT_EQ(r.baselines.size(), 4u);
    EXPECT_EQ(r.baselines[1].name, "7x1g");
    EXPECT_EQ(r.baselines[2].name, "all-balanced");
    for (const Baseline& b : r.baselines) {
        if (b.candidate) {
            EXPECT_GE(b.candidate->prediction.energy_j, r.top.front().prediction.energy_j - 1e-6);
        } else {
            EXPECT_FALSE(b.why_not.empty());
        }
    }
    if (r.baselines[2].candidate) {
        EXPECT_EQ(r.baselines[2].candidate->name, "3g.71gb@4+2g.35gb@0+1g.18gb@2+1g.18gb@3");
    }
    // The front: energy up, throughput up, nothing dominated.
    ASSERT_FALSE(r.pareto.empty());
    for (size_t i = 1; i < r.pareto.size(); ++i) {
        EXPECT_GE(r.pareto[i].prediction.energy_j, r.pareto[i - 1].prediction.energy_j);
        EXPECT_GT(r.pareto[i].prediction.throughput, r.pareto[i - 1].prediction.throughput);
    }
}

TEST(Search, LayoutsThatGiveTheJobsTheSameSmsAreOneCandidate) {
    const ProfileSet set = random_profiles(3, 5);
    const Problem p = make_problem(random_work(set, 5), set, h200(), {}, PartitionKind::kGreen);
    const SearchResult r = search(p, {Objective::kEnergy, 1, 100});
    // Each candidate gives the jobs SM counts no better-scored candidate gives them: per job, the
    // SMs of its partition (the whole GPU: 0) and the jobs before it there.
    std::set<std::vector<std::pair<unsigned, std::vector<size_t>>>> seen;
    for (const Candidate& c : r.top) {
        std::vector<std::pair<unsigned, std::vector<size_t>>> placement(p.jobs.size());
        const GpuPlan& g = c.plan.front();
        for (size_t k = 0; k < g.queues.size(); ++k) {
            const unsigned sms =
                g.layout ? p.sizes[p.size_index(g.layout->instances[k].profile)].sms : 0;
            for (size_t q = 0; q < g.queues[k].size(); ++q) {
                placement[g.queues[k][q]] = {
                    sms, std::vector<size_t>(g.queues[k].begin(), g.queues[k].begin() + q)};
            }
        }
        EXPECT_TRUE(seen.insert(placement).second) << c.name << " repeats an earlier candidate";
    }
    // Green contexts get the MIG profiles' SMs: the same candidates as MIG instances.
    const ProfileSet mig_set = random_profiles(3, 5);
    const Problem mig_p = make_problem(random_work(mig_set, 5), mig_set, h200(), {});
    EXPECT_EQ(r.top.size(), search(mig_p, {Objective::kEnergy, 1, 100}).top.size());
}

TEST(Search, BestOnLayoutLeavesPartitionsIdleWhenThereAreFewerJobs) {
    const ProfileSet set = profile_set(
        {scaling_job("a", 500, 300, 0.5, 0.5, 100), scaling_job("b", 700, 200, 0.3, 0.5, 100)});
    const Problem p = make_problem(equal_work(set), set, h200(), {});
    const mig::Layout seven = *mig::check_layout(mig::parse_layout("7x1g", h200()), h200()).layout;
    const auto c = best_on_layout(p, seven, {Objective::kEnergy, 1, 1});
    ASSERT_TRUE(c);
    size_t busy = 0;
    for (const auto& q : c->plan.front().queues)
        busy += !q.empty();
    EXPECT_EQ(c->plan.front().queues.size(), 7u);
    EXPECT_LE(busy, 2u);
}

// A plan of the user's own is predicted as the search predicts it: with queues, exactly those;
// without, the best assignment on its layout. Set against the recommendation by the rule that
// lists indistinguishable plans.
TEST(Search, AGivenPlanIsPredictedBesideTheRecommendationWithItsInterval) {
    const ProfileSet set = small_jobs(3);
    const Problem p = make_problem(equal_work(set, 60), set, h200(), {});
    const mig::Layout three =
        *mig::check_layout(mig::parse_layout("3g+2g+2g", h200()), h200()).layout;
    const ModelError tight = uniform_error(0.99, 1.01), wide = uniform_error(0.4, 1.6);
    SearchOptions o{Objective::kEnergy, 1, 3};
    o.error = &tight;
    // Every job queued on the 3g, the partitions beside it idle; placed, the layout lists the
    // 2g instances first (by start), the search lists the largest first.
    ASSERT_EQ(three.instances.back().profile, "3g.71gb");
    o.given = SearchOptions::GivenLayout{three, {{}, {}, {0, 1, 2}}};
    const SearchResult queued = search(p, o);
    ASSERT_TRUE(queued.given);
    const Candidate& mine = queued.given->candidate;
    EXPECT_EQ(mine.plan.front().layout->instances.front().profile, "3g.71gb");
    EXPECT_EQ(mine.plan.front().queues, (std::vector<std::vector<size_t>>{{0, 1, 2}, {}, {}}));
    EXPECT_NEAR(mine.prediction.energy_j, predict(p, mine.plan).energy_j, 1e-9);
    EXPECT_TRUE(mine.interval.known);
    const Candidate& chosen = queued.top.front();
    const double theirs = chosen.prediction.energy_j;
    EXPECT_NEAR(queued.given->vs_recommended, (theirs - mine.prediction.energy_j) / theirs, 1e-12);
    EXPECT_LT(queued.given->vs_recommended, -0.05);  // three jobs one after another on 3g
    EXPECT_FALSE(queued.given->indistinguishable);
    // Without queues: the best assignment on the layout, the same as best_on_layout's.
    o.given->queues.clear();
    const SearchResult best = search(p, o);
    EXPECT_EQ(best.given->candidate.plan.front().queues,
              best_on_layout(p, three, o)->plan.front().queues);
    EXPECT_GT(best.given->vs_recommended, queued.given->vs_recommended);
    // A wide error cannot tell it from the recommendation; no error compares points.
    o.error = &wide;
    o.given->queues = {{}, {}, {0, 1, 2}};
    EXPECT_TRUE(search(p, o).given->indistinguishable);
    o.error = nullptr;
    EXPECT_TRUE(search(p, o).given->indistinguishable);
    // The search itself does not move.
    o.error = &tight;
    o.given.reset();
    const SearchResult without = search(p, o);
    EXPECT_FALSE(without.given);
    EXPECT_EQ(without.top.front().name, queued.top.front().name);
}

TEST(Search, AGivenPlanThatCannotBeIsAnInputErrorNamingItsField) {
    // On 1g (16 of 132 SMs) the first keeps 0.81 of its speed, the second 0.35.
    const ProfileSet set = profile_set(
        {scaling_job("a", 500, 300, 0.1, 0.5, 100), scaling_job("b", 700, 200, 0.5, 0.5, 100)});
    const Problem p = make_problem(equal_work(set), set, h200(), {0.5});
    const mig::Layout two = *mig::check_layout(mig::parse_layout("3g+1g", h200()), h200()).layout;
    SearchOptions o{Objective::kEnergy, 1, 3};
    const auto message = [&] {
        try {
            search(p, o);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    ASSERT_EQ(p.jobs[1].on[p.size_index("1g.18gb")].usable, false);
    o.given = SearchOptions::GivenLayout{two, {{0}, {1}}};
    EXPECT_EQ(message().rfind("assign[1]: job 'job1' cannot run on 1g.18gb", 0), 0u) << message();
    o.given->queues = {{1}, {0}};
    EXPECT_EQ(message(), "no error");
    o.gpus = 2;
    EXPECT_EQ(message().rfind("layout: ", 0), 0u) << message();
}

double gap(Objective o, double heuristic, double exact) {
    const bool higher_is_better =
        o == Objective::kThroughput || o == Objective::kAggregateThroughput;
    return higher_is_better ? (heuristic - exact) / -exact : (heuristic - exact) / exact;
}

// The stated bound (docs/planner.md): the heuristic stays within this of the exact answer on
// small instances; the tests print the measured gaps.
constexpr double kStatedGap = 0.10;

TEST(Search, HeuristicOnOneGpuStaysWithinTheStatedGap) {
    double worst = 0, sum = 0;
    int count = 0;
    for (unsigned seed = 1; seed <= 12; ++seed) {
        const ProfileSet set = random_profiles(4 + seed % 4, 100 + seed);
        const Problem p = make_problem(random_work(set, seed), set, h200(), {});
        for (Objective o : kObjectives) {
            const double exact =
                score(o, search(p, {o, 1, 1, Method::kExhaustive}).top[0].prediction);
            const double heur =
                score(o, search(p, {o, 1, 1, Method::kHeuristic}).top[0].prediction);
            const double g = gap(o, heur, exact);
            EXPECT_GE(g, -1e-9);
            EXPECT_LE(g, kStatedGap) << "seed " << seed << " " << to_string(o);
            worst = std::max(worst, g);
            sum += g;
            ++count;
        }
    }
    std::printf("heuristic gap, 1 GPU, 4-7 jobs, %d cases: mean %.2f%%, worst %.2f%%\n", count,
                100 * sum / count, 100 * worst);
}

// Exact on two GPUs: every split of the jobs, every plan on each GPU (through each split's own
// problem), combined (idle power of both GPUs until the later one finishes).
double exact_two_gpus(const ProfileSet& set, const std::vector<JobRequest>& jobs, Objective o) {
    struct Outcome {
        double makespan = 0, dynamic = 0, work_s = 0, aggregate = 0;
    };
    const size_t n = jobs.size();
    std::vector<std::vector<Outcome>> by_mask(size_t(1) << n);
    for (size_t mask = 0; mask < by_mask.size(); ++mask) {
        std::vector<JobRequest> sub;
        for (size_t j = 0; j < n; ++j) {
            if (mask & (size_t(1) << j))
                sub.push_back(jobs[j]);
        }
        if (sub.empty()) {
            by_mask[mask] = {Outcome{}};
            continue;
        }
        const Problem p = make_problem(sub, set, h200(), {});
        std::vector<std::optional<mig::Layout>> layouts = {std::nullopt};
        for (const mig::Layout& l : p.layouts())
            layouts.push_back(l);
        for (const auto& l : layouts) {
            const size_t k = l ? l->instances.size() : 1;
            std::vector<size_t> digit(sub.size(), 0);
            while (true) {
                GpuPlan g{l, std::vector<std::vector<size_t>>(k)};
                bool ok = true;
                for (size_t j = 0; j < sub.size(); ++j) {
                    const size_t s = l ? p.size_index(l->instances[digit[j]].profile) : p.whole();
                    ok = ok && p.jobs[j].on[s].usable;
                    g.queues[digit[j]].push_back(j);
                }
                if (ok) {
                    const Prediction r = predict(p, {g});
                    by_mask[mask].push_back({r.makespan_s, r.energy_j - p.idle_power_w * r.makespan_s,
                                             r.throughput * r.makespan_s, r.aggregate_throughput});
                }
                size_t i = 0;
                while (i < sub.size() && ++digit[i] == k)
                    digit[i++] = 0;
                if (i == sub.size())
                    break;
            }
        }
    }
    const double idle = set.idle_power_w.value;
    double best = 1e300;
    for (size_t mask = 0; mask < by_mask.size(); ++mask) {
        for (const Outcome& a : by_mask[mask]) {
            for (const Outcome& b : by_mask[by_mask.size() - 1 - mask]) {
                const double m = std::max(a.makespan, b.makespan);
                const double e = 2 * idle * m + a.dynamic + b.dynamic;
                const double s = o == Objective::kEnergy     ? e
                                 : o == Objective::kMakespan ? m
                                 : o == Objective::kEdp      ? e * m
                                 : o == Objective::kThroughput
                                     ? -(a.work_s + b.work_s) / m
                                     : -(a.aggregate + b.aggregate);
                best = std::min(best, s);
            }
        }
    }
    return best;
}

TEST(Search, HeuristicOnTwoGpusStaysWithinTheStatedGap) {
    double worst = 0, sum = 0;
    int count = 0;
    for (unsigned seed = 1; seed <= 10; ++seed) {
        const ProfileSet set = random_profiles(3, 200 + seed);
        const std::vector<JobRequest> jobs = random_work(set, seed);
        const Problem p = make_problem(jobs, set, h200(), {});
        for (Objective o : kObjectives) {
            const double exact = exact_two_gpus(set, jobs, o);
            const double heur = score(o, search(p, {o, 2, 1}).top[0].prediction);
            const double g = gap(o, heur, exact);
            EXPECT_GE(g, -1e-9) << "seed " << seed << " " << to_string(o);
            // Seed 3 was a miss of 58.9 % for makespan until each GPU's layout change could move
            // its jobs to the other GPU (a move that alone left the makespan as it was).
            EXPECT_LE(g, kStatedGap) << "seed " << seed << " " << to_string(o);
            worst = std::max(worst, g);
            sum += g;
            ++count;
        }
    }
    std::printf("heuristic gap, 2 GPUs, 3 jobs, %d cases: mean %.2f%%, worst %.2f%%\n", count,
                100 * sum / count, 100 * worst);
}

TEST(Search, ManyGpusGetEveryJobPlacedOnce) {
    const ProfileSet set = random_profiles(40, 9);
    const Problem p = make_problem(random_work(set, 9), set, h200(), {});
    const SearchResult r = search(p, {Objective::kEnergy, 5, 3});
    EXPECT_EQ(r.method, Method::kHeuristic);
    ASSERT_FALSE(r.top.empty());
    EXPECT_EQ(r.top.front().plan.size(), 5u);
    size_t placed = 0;
    for (const GpuPlan& g : r.top.front().plan) {
        for (const auto& q : g.queues)
            placed += q.size();
    }
    EXPECT_EQ(placed, 40u);
    const Candidate& seq = *r.baselines[0].candidate;
    EXPECT_LE(r.top.front().prediction.energy_j, seq.prediction.energy_j + 1e-6);
}

TEST(Search, BadOptionsAreInputErrors) {
    const ProfileSet set = random_profiles(2, 1);
    const Problem p = make_problem(equal_work(set), set, h200(), {});
    EXPECT_THROW(search(p, {Objective::kEnergy, 0, 1}), Error);
    EXPECT_THROW(search(p, {Objective::kEnergy, kMaxPlanGpus + 1, 1}), Error);
    EXPECT_THROW(search(p, {Objective::kEnergy, size_t(-1), 1}), Error);
    EXPECT_THROW(search(p, {Objective::kEnergy, 1, 0}), Error);
    EXPECT_THROW(search(p, {Objective::kEnergy, 2, 1, Method::kExhaustive}), Error);
}

// Planning is not the H200's alone: every catalog model plans from profiles measured on it (a job
// that scales with its SMs, one that cannot fill the GPU), on MIG instances and, where the
// granularity is known, on green contexts.
TEST(Search, EveryCatalogModelPlansFromProfilesMeasuredOnIt) {
    for (const mig::GpuModel& model : mig::builtin_catalog()) {
        if (!model.sm_count)
            continue;  // a model without SM counts cannot be planned (make_problem says so)
        ProfileSet set;
        set.gpu_model = model.key;
        set.idle_power_w = testing::one(80);
        for (const auto& [name, exponent] : {std::pair{"fills", 1.0}, std::pair{"small", 0.3}}) {
            JobProfile j;
            j.workload = name;
            j.mode = "train";
            j.batch = 32;
            j.item_unit = "images";
            j.items_per_step = 32;
            std::vector<std::pair<std::string, unsigned>> sizes = {
                {std::string(kWholeGpu), *model.sm_count}};
            for (const mig::Profile& p : model.profiles) {
                if (!p.media_extensions && p.sms && p.compute_slices < model.compute_slices)
                    sizes.emplace_back(p.name, *p.sms);
            }
            for (const auto& [label, sms] : sizes) {
                const double share = double(sms) / *model.sm_count;
                PartitionProfile pp;
                pp.partition = label;
                pp.sms = sms;
                pp.items_per_s = testing::one(1000 * std::pow(share, exponent));
                pp.average_power_w = testing::one(80 + 300 * share);
                pp.window_s = 5;
                j.partitions.push_back(pp);
            }
            std::sort(j.partitions.begin(), j.partitions.end(),
                      [](const auto& a, const auto& b) { return a.sms < b.sms; });
            set.jobs.push_back(j);
        }
        std::vector<JobRequest> jobs;
        for (const char* name : {"fills", "small", "small"})
            jobs.push_back({std::string(name) + std::to_string(jobs.size()), name, "train", 32,
                            100, {}, {}});
        const SearchResult mig = search(make_problem(jobs, set, model, {}), {});
        ASSERT_FALSE(mig.top.empty()) << model.key;
        EXPECT_GT(mig.top.front().prediction.energy_j, 0) << model.key;
        EXPECT_GT(mig.layouts, 1u) << model.key << ": layouts of the model searched";
        if (model.green_granularity) {
            const Problem p = make_problem(jobs, set, model, {}, PartitionKind::kGreen);
            EXPECT_FALSE(search(p, {}).top.empty()) << model.key;
        }
    }
}

}  // namespace
}  // namespace migscope::plan
