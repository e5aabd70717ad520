// Tests of the model's residuals on stored runs: steady mixes, sequential windows and fixed work
// rebuilt as plans, predicted, and set against what they measured.
#include "plan/residuals.h"

#include <gtest/gtest.h>

#include <map>

#include "fixture.h"

namespace migscope::plan {
namespace {

using testing::job_profile;
using testing::profile_set;

// a: 200 items/s on the whole GPU (300 W), 100 on 2g (200 W). b: 100 on the whole GPU (250 W),
// 50 on 1g (150 W). Idle 100 W; batch 10.
ProfileSet two_jobs() {
    return profile_set({job_profile("a", 10, {{"2g.35gb", {100, 200}}, {"whole GPU", {200, 300}}}),
                        job_profile("b", 10, {{"1g.18gb", {50, 150}}, {"whole GPU", {100, 250}}})});
}

store::JobRecord job(const std::string& workload, const std::string& partition,
                     double items_per_s, int64_t steps = 100) {
    store::JobRecord j;
    j.name = workload;
    j.workload = workload;
    j.mode = "train";
    j.batch = 10;
    j.partition = partition;
    j.status = "ok";
    j.steps = steps;
    j.items = 10.0 * double(steps);
    j.items_per_s = items_per_s;
    return j;
}

store::RunRecord run(int64_t id, const std::string& backend, const std::string& mode,
                     std::optional<std::string> layout, std::vector<store::JobRecord> jobs) {
    store::RunRecord r;
    r.id = id;
    r.backend = backend;
    r.mode = mode;
    r.layout = std::move(layout);
    r.jobs = std::move(jobs);
    r.window_s = 10;
    return r;
}

const Residual* find(const StoreResiduals& s, ResidualKind kind, const std::string& subject) {
    for (const Residual& r : s.residuals) {
        if (r.kind == kind && r.subject.rfind(subject, 0) == 0)
            return &r;
    }
    return nullptr;
}

TEST(Residuals, ASteadyMixComparesEachJobAndTheBoardsPowerPerWork) {
    // Side by side the model says a 100 items/s and b 50 (no correction), 150 W above idle.
    store::RunRecord r =
        run(7, "green", "duration", "2g.35gb+1g.18gb", {job("a", "2g.35gb", 90), job("b", "1g.18gb", 55)});
    // The jobs did 0.9 and 1.1 of that, together (by dynamic power) (100·0.9 + 50·1.1) / 150.
    const double work = (100 * 0.9 + 50 * 1.1) / 150;
    r.average_power_w = 100 + 150 * 1.2 * work;
    const StoreResiduals s = residuals_from_runs({r}, two_jobs(), mig::builtin_model("h200"), "m.db");
    EXPECT_EQ(s.runs_used, 1u);
    ASSERT_EQ(s.residuals.size(), 3u);
    const Residual* a = find(s, ResidualKind::kSpeed, "a:train:10 on 2g.35gb");
    ASSERT_NE(a, nullptr);
    EXPECT_DOUBLE_EQ(a->ratio, 0.9);
    EXPECT_EQ(a->group, "mix/small/plain");
    EXPECT_EQ(a->source, "m.db run 7");
    EXPECT_EQ(a->backend, "green");
    EXPECT_DOUBLE_EQ(find(s, ResidualKind::kSpeed, "b:")->ratio, 1.1);
    const Residual* energy = find(s, ResidualKind::kDynamicEnergy, "2g.35gb+1g.18gb");
    ASSERT_NE(energy, nullptr);
    EXPECT_NEAR(energy->ratio, 1.2, 1e-12);
    EXPECT_EQ(energy->group, "mix/plain");
}

TEST(Residuals, ASequentialBaselineComparesEachJobAloneOnTheWholeGpu) {
    // a: 1900 items (10 s at 200/s, 200 W dynamic), b: 1000 (10 s at 100/s, 150 W): 3400 J.
    store::RunRecord r = run(3, "sequential", "duration", std::nullopt,
                             {job("a", "whole GPU", 190, 190), job("b", "whole GPU", 100)});
    r.role = store::RunRole::kBaseline;
    r.window_s = 20;
    r.counter_energy_j = 100 * 20 + 3400 * 1.05;
    const StoreResiduals s = residuals_from_runs({r}, two_jobs(), mig::builtin_model("h200"), "m.db");
    EXPECT_DOUBLE_EQ(find(s, ResidualKind::kSpeed, "a:")->ratio, 0.95);
    EXPECT_EQ(find(s, ResidualKind::kSpeed, "a:")->group, "alone");
    EXPECT_NEAR(find(s, ResidualKind::kDynamicEnergy, "whole GPU")->ratio, 1.05, 1e-12);
}

TEST(Residuals, FixedWorkFollowsTheQueuesOfAPlanVerifyLabel) {
    // a on 2g; b then c (a second b) queued on 1g: b beside a for most of its run, c alone.
    store::JobRecord c = job("b", "1g.18gb", 50);
    c.name = "c";
    store::RunRecord r = run(
        9, "green", "work", "2g.35gb@0+1g.18gb@2",
        {job("a", "2g.35gb", 95), job("b", "1g.18gb", 45), c});
    r.label = "plan --verify 2g.35gb@0+1g.18gb@2 --jobs a:train:10,b:train:10,b:train:10 "
              "--assign 0,1,1 --work 100";
    // Predicted: a 10 s; b 20 s; c 20 s after it: 40 s; dynamic 100·10 + 50·40 = 3000 J.
    r.window_s = 41;
    r.counter_energy_j = 100 * 41 + 3000 * 0.9;
    const StoreResiduals s = residuals_from_runs({r}, two_jobs(), mig::builtin_model("h200"), "v.db");
    ASSERT_EQ(s.skipped.size(), 0u) << s.skipped.front();
    ASSERT_EQ(s.residuals.size(), 4u);
    EXPECT_DOUBLE_EQ(s.residuals[0].ratio, 0.95);
    EXPECT_EQ(s.residuals[0].group, "mix/small/plain");
    EXPECT_DOUBLE_EQ(s.residuals[1].ratio, 0.9);
    EXPECT_EQ(s.residuals[1].group, "mix/small/queued");
    EXPECT_EQ(s.residuals[2].group, "alone");  // c ran after a had finished
    EXPECT_NEAR(s.residuals[3].ratio, 0.9, 1e-12);
    EXPECT_EQ(s.residuals[3].kind, ResidualKind::kDynamicEnergy);
}

TEST(Residuals, APartitionedRunAndTheSequentialBaselineOfItsWorkGiveTheGainsResiduals) {
    // a (1000 items) on 2g, b (1000) on 1g: predicted 10 and 20 s, 20 s in all, 2000 J idle +
    // 100 W · 10 s + 50 W · 20 s = 4000 J. One after another: 5 + 10 = 15 s, 1500 J idle +
    // 200 W · 5 s + 150 W · 10 s = 4000 J.
    store::JobRecord a = job("a", "2g.35gb", 1000.0 / 11), b = job("b", "1g.18gb", 1000.0 / 22);
    a.finish_s = 11;
    b.finish_s = 22;
    store::RunRecord part = run(5, "green", "work", "2g.35gb@0+1g.18gb@2", {a, b});
    part.window_s = 22;  // measured 1.1 of the predicted ratio to the baseline below
    part.counter_energy_j = 4400;
    store::RunRecord seq = run(6, "sequential", "work", std::nullopt,
                               {job("b", "whole GPU", 100), job("a", "whole GPU", 200)});
    seq.window_s = 15;
    seq.counter_energy_j = 4000;
    // Another job set's baseline is no baseline of this one.
    store::RunRecord other = run(7, "sequential", "work", std::nullopt,
                                 {job("a", "whole GPU", 200, 50), job("b", "whole GPU", 100)});
    other.counter_energy_j = 3000;
    const StoreResiduals s =
        residuals_from_runs({part, seq, other}, two_jobs(), mig::builtin_model("h200"), "v.db");
    std::map<std::string, double> gain;  // by group: the objective and the 2 busy partitions
    for (const Residual& r : s.residuals) {
        if (r.kind == ResidualKind::kGain) {
            gain[r.group] = r.ratio;
            EXPECT_EQ(r.source, "v.db run 5 vs run 6");
        }
    }
    ASSERT_EQ(gain.size(), 5u);
    EXPECT_NEAR(gain["makespan/2"], 1.1, 1e-9);
    EXPECT_NEAR(gain["throughput/2"], 1 / 1.1, 1e-9);
    EXPECT_NEAR(gain["energy/2"], 1.1, 1e-9);
    EXPECT_NEAR(gain["edp/2"], 1.21, 1e-9);
    // Each partition's work over its end: 5 / 11 + 10 / 22 measured against 5 / 10 + 10 / 20;
    // the baseline's, its throughput, as predicted.
    EXPECT_NEAR(gain["aggregate-throughput/2"], 10.0 / 11, 1e-9);
}

TEST(Residuals, RunsItCannotPredictAreSkippedWithWhyAndProfileRunsAreNotUsed) {
    store::RunRecord unknown = run(4, "green", "duration", "2g.35gb+1g.18gb",
                                   {job("a", "2g.35gb", 90), job("zz", "1g.18gb", 10)});
    unknown.average_power_w = 300;
    store::RunRecord alone = run(5, "green", "duration", "2g.35gb", {job("a", "2g.35gb", 99)});
    alone.average_power_w = 200;
    store::RunRecord failed = unknown;
    failed.id = 6;
    failed.jobs[1].status = "out of memory";
    const StoreResiduals s = residuals_from_runs({unknown, alone, failed}, two_jobs(),
                                                 mig::builtin_model("h200"), "m.db");
    EXPECT_EQ(s.runs_used, 0u);
    EXPECT_TRUE(s.residuals.empty());
    ASSERT_EQ(s.skipped.size(), 1u);
    EXPECT_NE(s.skipped[0].find("run 4"), std::string::npos);
    EXPECT_NE(s.skipped[0].find("zz"), std::string::npos) << s.skipped[0];
}

// Another GPU model's runs say nothing of this model's error: skipped, naming the GPU.
TEST(Residuals, RunsOfAnotherGpuModelAreSkippedWithTheirGpu) {
    store::RunRecord r = run(8, "green", "duration", "2g.35gb+1g.18gb",
                             {job("a", "2g.35gb", 90), job("b", "1g.18gb", 55)});
    r.average_power_w = 300;
    const StoreResiduals here =
        residuals_from_runs({r}, two_jobs(), mig::builtin_model("h200"), "m.db");
    EXPECT_EQ(here.runs_used, 1u);
    r.provenance.gpu_name = "NVIDIA H100 80GB HBM3";
    const StoreResiduals there =
        residuals_from_runs({r}, two_jobs(), mig::builtin_model("h200"), "m.db");
    EXPECT_EQ(there.runs_used, 0u);
    EXPECT_TRUE(there.residuals.empty());
    ASSERT_EQ(there.skipped.size(), 1u);
    EXPECT_NE(there.skipped[0].find("measured on NVIDIA H100 80GB HBM3, not h200"),
              std::string::npos)
        << there.skipped[0];
}

}  // namespace
}  // namespace migscope::plan
