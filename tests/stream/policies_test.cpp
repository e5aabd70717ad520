// Tests of the repartitioning policies: they change layouts when the model says it pays, its
// cost included, and not otherwise.
#include "stream/policies.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "stream/compare.h"
#include "stream/fixture.h"
#include "stream/policy_registry.h"

namespace migscope::stream {
namespace {

using plan::testing::job_profile;
using plan::testing::profile_set;
using testing::launch_bound;

mig::Layout seven_1g() {
    return testing::layout("7x1g.18gb");
}

std::vector<StreamJob> burst(size_t n, double at_s) {
    std::vector<StreamJob> jobs;
    for (size_t i = 0; i < n; ++i)
        jobs.push_back({0, at_s + 0.1 * static_cast<double>(i), {}});
    return jobs;
}

TEST(OnlinePolicy, PartitionsWhenTheQueuesGainExceedsTheChangesCost) {
    const plan::Problem p = launch_bound();
    const std::vector<StreamJob> jobs = burst(7, 0);
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 10;  // 1 kJ of idle power: worth it
    OnlineRepartition online(p, jobs, o, StreamObjective{}, MinGain::all(0));
    const StreamResult r = simulate(p, jobs, online, o);
    EXPECT_GE(r.reconfigurations, 1u);
    ASSERT_GE(r.layouts.size(), 2u);
    EXPECT_NE(r.layouts.back().layout.find("1g.18gb"), std::string::npos) << r.layouts.back().layout;
    NeverPartition never;
    const StreamResult whole = simulate(p, jobs, never, o);
    EXPECT_LT(r.energy_j, 0.8 * whole.energy_j);
}

TEST(OnlinePolicy, StaysWholeWhenTheChangeCostsMoreThanItGains) {
    const plan::Problem p = launch_bound();
    const std::vector<StreamJob> jobs = burst(7, 0);
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 600;  // 60 kJ of idle power: more than any gain here
    OnlineRepartition online(p, jobs, o, StreamObjective{}, MinGain::all(0));
    const StreamResult r = simulate(p, jobs, online, o);
    EXPECT_EQ(r.reconfigurations, 0u);
    NeverPartition never;
    EXPECT_NEAR(r.energy_j, simulate(p, jobs, never, o).energy_j, 1e-6);
}

TEST(OnlinePolicy, ALargerLeastGainChangesLess) {
    const plan::Problem p = launch_bound();
    const std::vector<StreamJob> jobs = burst(2, 0);
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 1;
    OnlineRepartition eager(p, jobs, o, StreamObjective{}, MinGain::all(0));
    OnlineRepartition wary(p, jobs, o, StreamObjective{}, MinGain::all(0.9));
    EXPECT_GE(simulate(p, jobs, eager, o).reconfigurations,
              simulate(p, jobs, wary, o).reconfigurations);
    EXPECT_EQ(simulate(p, jobs, wary, o).reconfigurations, 0u);
    EXPECT_THROW(OnlineRepartition(p, jobs, o, StreamObjective{}, MinGain::all(-1)), Error);
    EXPECT_THROW(OnlineRepartition(p, jobs, o, StreamObjective{}, MinGain{{0, 0, NAN}}), Error);
}

// s: 100 items/s on the whole GPU (400 W), 70 on 3g (350 W); two jobs of 1000 items due at 15 s
// (simulator_test.cpp, TightDeadlinesMakeTheCombinedObjectivePreferAFasterLayout). At the second
// arrival the whole GPU would end them at 10 and 20 s (one 5 s late); 3g + 3g, after a free
// change, at 14.3 s each for 571 J more. Energy keeps the GPU whole; energy-tardiness changes.
TEST(OnlinePolicy, TheCombinedObjectiveChangesForADeadlineThatEnergyAloneWouldMiss) {
    static const plan::ProfileSet set =
        profile_set({job_profile("s", 10, {{"3g.71gb", {70, 350}}, {"whole GPU", {100, 400}}})});
    const plan::Problem p = plan::make_problem({{"s", "s", "train", 10, 100, {}, {}}}, set,
                                               mig::builtin_model("h200"), {});
    const std::vector<StreamJob> jobs = {{0, 0, 15}, {0, 0.1, 15}};
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 0;
    o.reconfiguration.per_instance_s = 0;
    OnlineRepartition energy(p, jobs, o, StreamObjective{StreamObjective::Kind::kEnergy},
                             MinGain::all(0));
    const StreamResult kept = simulate(p, jobs, energy, o);
    EXPECT_EQ(kept.reconfigurations, 0u);
    EXPECT_GT(kept.tardiness_s, 4);
    OnlineRepartition combined(
        p, jobs, o, StreamObjective{StreamObjective::Kind::kEnergyTardiness, 700}, MinGain::all(0));
    const StreamResult changed = simulate(p, jobs, combined, o);
    EXPECT_EQ(changed.reconfigurations, 1u);
    EXPECT_DOUBLE_EQ(changed.tardiness_s, 0);
    EXPECT_LT(energy_tardiness_j(changed, 700), energy_tardiness_j(kept, 700));
    EXPECT_GT(changed.energy_j, kept.energy_j);
}

// Bursts of seven jobs every 1000 s: from the first decision on (at the first arrival after
// 1000 s), the GPU is partitioned for the bursts, which the last window showed.
TEST(PeriodicPolicy, TakesTheLastWindowsBestLayoutAtEachPeriod) {
    const plan::Problem p = launch_bound();
    std::vector<StreamJob> jobs;
    for (double at : {0.0, 1000.0, 2000.0}) {
        for (const StreamJob& j : burst(7, at))
            jobs.push_back(j);
    }
    SimulationOptions o;
    o.reconfiguration.orchestrator_s = 10;
    PeriodicRepartition periodic(p, jobs, o, StreamObjective{}, 1000, 1000);
    EXPECT_EQ(periodic.name(), "periodic every 1000 s");
    const StreamResult r = simulate(p, jobs, periodic, o);
    ASSERT_EQ(r.layouts.size(), 2u);  // whole at 0, partitioned at 1000, then kept
    EXPECT_DOUBLE_EQ(r.layouts[1].at_s, 1000);
    EXPECT_NE(r.layouts[1].layout.find("1g.18gb"), std::string::npos);
    // The first burst ran whole (16.7 s each, one after another); the later ones side by side.
    EXPECT_GT(r.jobs[6].end_s, 100);
    EXPECT_LT(r.jobs[20].end_s - 2000, 25);
    PeriodicRepartition hourly(p, jobs, o, StreamObjective{}, 7200, 7200);
    EXPECT_EQ(hourly.name(), "periodic every 2 h");
    EXPECT_THROW(PeriodicRepartition(p, jobs, o, StreamObjective{}, 0, 1), Error);
}

// A period's end is found at once however many periods passed: an arrival 10^9 s after the
// first, with periods of 1 ms, once spun through 10^12 periods (and one at 1e300 s, forever).
TEST(PeriodicPolicy, DecidesAgainAtTheFirstPeriodAfterALateArrival) {
    const plan::Problem p = launch_bound();
    std::vector<StreamJob> jobs = burst(2, 0);
    for (const StreamJob& j : burst(2, 1e9))
        jobs.push_back(j);
    PeriodicRepartition periodic(p, jobs, SimulationOptions{}, StreamObjective{}, 1e-3, 1);
    const StreamResult r = simulate(p, jobs, periodic, SimulationOptions{});
    ASSERT_EQ(r.jobs.size(), 4u);
    EXPECT_GE(r.jobs[3].end_s, 1e9);
    EXPECT_LT(r.jobs[3].end_s, 1e9 + 100);
}

// The online policy's default least gain: how far the model's predicted gain of partitioning was
// off, measured, for the objective (energy; makespan for completion).
TEST(PolicyRegistry, TheLeastGainComesFromTheModelsGainError) {
    plan::ModelError error;
    for (int i = 0; i < 10; ++i) {
        error.residuals.push_back({plan::ResidualKind::kGain, "energy", 0.95 + 0.13 * i / 9.0,
                                   "test", "", "green"});
        error.residuals.push_back({plan::ResidualKind::kGain, "makespan", 0.8 + 0.2 * i / 9.0,
                                   "test", "", "green"});
    }
    // Residuals of no size (all the objective's): every size the same.
    const MinGain energy = *min_gain_from_error(error, StreamObjective{});
    EXPECT_TRUE(energy.uniform());
    EXPECT_NEAR(energy.for_partitions(2), 0.08, 1e-12);  // 1.08 - 1
    EXPECT_NEAR(min_gain_from_error(error, StreamObjective{StreamObjective::Kind::kMeanCompletion})
                    ->for_partitions(2),
                0.2, 1e-12);
    EXPECT_NEAR(min_gain_from_error(error, StreamObjective{StreamObjective::Kind::kEnergyTardiness})
                    ->for_partitions(7),
                0.2, 1e-12);  // the wider of the two
    // Eight energy gains of two-partition plans, within 2 %: those plans' own, the others' still
    // from all.
    for (int i = 0; i < 8; ++i) {
        error.residuals.push_back(
            {plan::ResidualKind::kGain, "energy/2", 0.98 + 0.04 * i / 7.0, "test", "", "green"});
    }
    const MinGain by_size = *min_gain_from_error(error, StreamObjective{});
    EXPECT_FALSE(by_size.uniform());
    EXPECT_NEAR(by_size.for_partitions(1), 0.02, 1e-12);
    EXPECT_NEAR(by_size.for_partitions(2), 0.02, 1e-12);
    EXPECT_NEAR(by_size.for_partitions(3), by_size.for_partitions(5), 1e-12);
    EXPECT_GT(by_size.for_partitions(4), 0.07);
    EXPECT_EQ(by_size.text().substr(0, 17), "2.0 % (2 partitio");
    EXPECT_EQ(MinGain::all(0.08).text(), "8.0 %");
    EXPECT_FALSE(min_gain_from_error(plan::ModelError{}, StreamObjective{}));
    const plan::Problem p = launch_bound();
    EXPECT_THROW(policy_factory("sometimes", p, {}, {}, {}), Error);
    PolicySettings settings;
    settings.fixed_layout = seven_1g();
    for (const std::string& name : policy_names())
        EXPECT_NE(policy_factory(name, p, burst(2, 0), {}, settings)(), nullptr) << name;
}

// The policy fixed: the user's layout on every GPU from the start, never changed, named as such;
// refused without a layout, or with one where some job of the stream fits no partition.
TEST(PolicyRegistry, TheFixedPolicyKeepsTheGivenLayout) {
    const plan::Problem p = launch_bound();
    PolicySettings settings;
    settings.fixed_layout = seven_1g();
    SimulationOptions options;
    options.gpus = 2;
    const PolicyComparison compared =
        compare_policies(p, burst(7, 0), {"fixed"}, options, settings, {}, nullptr);
    const StreamResult& fixed = compared.policies.front().second.point;
    EXPECT_EQ(fixed.policy.rfind("fixed 1g.18gb@0+", 0), 0u) << fixed.policy;
    EXPECT_EQ(fixed.reconfigurations, 0u);
    ASSERT_EQ(fixed.layouts.size(), 2u);  // each GPU's first layout, at 0
    for (const LayoutEvent& e : fixed.layouts) {
        EXPECT_EQ(e.at_s, 0);
        EXPECT_EQ(e.gpu_layout, settings.fixed_layout);
    }
    const auto message = [&](const plan::Problem& problem, const PolicySettings& given) {
        try {
            policy_factory("fixed", problem, burst(2, 0), {}, given);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(p, {}).rfind("layout: ", 0), 0u) << message(p, {});
    // A job of 30 GiB fits no 1g.18gb.
    static const plan::ProfileSet big_set = profile_set(
        {job_profile("big", 10, {{"1g.18gb", {50, 130}}, {"whole GPU", {60, 200}}}, 30.0)});
    const plan::Problem big = plan::make_problem({{"big", "big", "train", 10, 100, {}, {}}},
                                                 big_set, mig::builtin_model("h200"), {});
    EXPECT_NE(message(big, settings).find("layout: some job of the stream can run on none of "),
              std::string::npos)
        << message(big, settings);
}

TEST(ComparePolicies, PlaysEachNamedPolicyAndSaysWhereTheLeastGainCameFrom) {
    const plan::Problem p = launch_bound();
    const std::vector<StreamJob> jobs = burst(3, 0);
    std::vector<std::string> told;
    const PolicyComparison given = compare_policies(
        p, jobs, {"never", "online"}, {}, {}, 0.25, nullptr,
        [&](const std::string& name) { told.push_back(name); });
    EXPECT_EQ(told, (std::vector<std::string>{"never", "online"}));
    ASSERT_EQ(given.policies.size(), 2u);
    EXPECT_EQ(given.policies[1].first, "online");
    EXPECT_TRUE(given.online_min_gain.uniform());
    EXPECT_DOUBLE_EQ(given.online_min_gain.for_partitions(5), 0.25);
    EXPECT_EQ(given.online_min_gain_from, "--min-gain");
    const PolicyComparison none = compare_policies(p, jobs, {"never"}, {}, {}, {}, nullptr);
    EXPECT_DOUBLE_EQ(none.online_min_gain.for_partitions(2), 0);
    EXPECT_EQ(none.online_min_gain_from, "no gain residuals: 0");
    EXPECT_FALSE(none.policies[0].second.known);
}

}  // namespace
}  // namespace migscope::stream
