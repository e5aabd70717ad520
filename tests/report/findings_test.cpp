// Findings from hand-made records: scaling series, layout groups with spread, the Pareto front,
// and missing values kept missing.
#include "report/findings.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace migscope::report {
namespace {

int64_t g_next_id = 1;

store::JobRecord job(const std::string& workload, const std::string& mode, int64_t sms,
                     std::optional<double> items_per_s, std::optional<double> j_per_item) {
    store::JobRecord j;
    j.name = workload + (mode == "finetune" ? "-ft" : "");
    j.workload = workload;
    j.mode = mode;
    j.batch = 8;
    j.partition = sms == 132 ? "whole GPU" : std::to_string(sms) + " SMs";
    j.sms = sms;
    j.status = "ok";
    j.item_unit = "images";
    j.items_per_s = items_per_s;
    j.energy_per_item_j = j_per_item;
    j.busy_s = 9.5;
    return j;
}

store::RunRecord run(const std::string& backend, std::vector<store::JobRecord> jobs,
                     std::optional<double> energy_j = std::nullopt, double window_s = 10) {
    store::RunRecord r;
    r.id = g_next_id++;
    r.backend = backend;
    r.mode = "duration";
    r.window_s = window_s;
    r.counter_energy_j = energy_j;
    r.jobs = std::move(jobs);
    return r;
}

store::RunRecord baseline_of(const store::RunRecord& parent, std::vector<store::JobRecord> jobs) {
    store::RunRecord b = run("sequential", std::move(jobs), 1.0);
    b.role = store::RunRole::kBaseline;
    b.parent_id = parent.id;
    return b;
}

TEST(Spread, MedianAndRange) {
    const Spread s = *spread_of({3, 1, 2, 10});
    EXPECT_EQ(s.n, 4);
    EXPECT_DOUBLE_EQ(s.median, 2.5);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 10);
    EXPECT_FALSE(spread_of({}));
}

TEST(Spread, TextNamesTheWithinWindowSpreadWhenThereIsOne) {
    const auto format = [](double v) { return std::to_string(static_cast<int>(v)); };
    Spread one = *spread_of({5});
    EXPECT_EQ(spread_range_text(one, format), "(n 1)");
    one.within_window_pct = 4.25;
    EXPECT_EQ(spread_range_text(one, format), "(n 1, ±4.2 % within the window)");
    Spread three = *spread_of({1, 2, 3});
    three.within_window_pct = 0.5;
    EXPECT_EQ(spread_range_text(three, format), "(n 3: 1 – 3, ±0.5 % within the window)");
}

TEST(Findings, OneRunsRatesCarryTheWidestOfTheirWithinWindowSpreads) {
    store::RunRecord quiet = run("green", {job("resnet50", "train", 16, 100, 2.0)});
    quiet.jobs[0].items_per_s_spread_pct = 1.5;
    store::RunRecord noisy = run("green", {job("resnet50", "train", 16, 110, 2.0)});
    noisy.jobs[0].items_per_s_spread_pct = 6.0;
    const store::RunRecord unrecorded = run("green", {job("vit", "train", 16, 80, 3.0)});
    // A layout against its baseline: the widest over both sides' jobs.
    store::RunRecord side_by_side = run("green", {job("a", "train", 60, 15, std::nullopt),
                                                  job("b", "train", 60, 15, std::nullopt)});
    side_by_side.layout = "4g.71gb+3g.71gb";
    side_by_side.jobs[0].items_per_s_spread_pct = 2.0;
    store::RunRecord base = baseline_of(
        side_by_side, {job("a", "train", 132, 10, 1.0), job("b", "train", 132, 10, 1.0)});
    base.jobs[1].items_per_s_spread_pct = 3.5;
    const Findings f = analyse({quiet, noisy, unrecorded, side_by_side, base});
    std::map<std::string, std::optional<double>> by_workload;
    for (const ScalingSeries& s : f.scaling)
        by_workload[s.workload] = s.points.at(0).items_per_s->within_window_pct;
    EXPECT_EQ(by_workload.at("resnet50"), 6.0);
    EXPECT_FALSE(by_workload.at("vit"));
    ASSERT_EQ(f.layouts.size(), 1u);
    EXPECT_EQ(f.layouts[0].speedup->within_window_pct, 3.5);
    EXPECT_FALSE(f.layouts[0].energy_change_pct->within_window_pct);  // rates, not energy
}

TEST(Findings, ScalingSeriesFromJobsAloneGroupedBySmsWithSpread) {
    const std::vector<store::RunRecord> runs = {
        run("green", {job("resnet50", "train", 16, 100, 2.0)}),
        run("green", {job("resnet50", "train", 16, 110, 2.2)}),
        run("green", {job("resnet50", "train", 60, 300, 1.5)}),
        run("green", {job("resnet50", "finetune", 60, 500, 0.9)}),
        // Sequential: each job alone on the whole GPU.
        run("sequential",
            {job("resnet50", "train", 132, 600, 1.2), job("resnet50", "finetune", 132, 900, 0.8)}),
        // Two jobs side by side: not a scaling point.
        run("green", {job("resnet50", "train", 32, 150, 1.0), job("vit", "train", 32, 80, 3.0)}),
    };
    const Findings f = analyse(runs);
    ASSERT_EQ(f.scaling.size(), 2u);
    const ScalingSeries& finetune = f.scaling[0];  // ordered by workload, mode, batch
    const ScalingSeries& train = f.scaling[1];
    EXPECT_EQ(finetune.mode, "finetune");
    ASSERT_EQ(train.points.size(), 3u);
    EXPECT_EQ(train.points[0].sms, 16);
    EXPECT_EQ(train.points[0].items_per_s->n, 2);
    EXPECT_DOUBLE_EQ(train.points[0].items_per_s->median, 105);
    EXPECT_DOUBLE_EQ(train.points[0].energy_per_item_j->min, 2.0);
    EXPECT_DOUBLE_EQ(train.points[0].energy_per_item_j->max, 2.2);
    EXPECT_EQ(train.points[2].sms, 132);
    EXPECT_EQ(train.points[2].backend, "sequential");
    EXPECT_EQ(train.points[2].partition, "whole GPU");
    EXPECT_EQ(train.item_unit, "images");
}

TEST(Findings, ScalingPointsRelateToTheirSeriesWholeGpuPointWithTheMostRuns) {
    const std::vector<store::RunRecord> runs = {
        run("green", {job("resnet50", "train", 16, 150, 3.0)}),
        // Two 132-SM points: a green context over the whole GPU once, sequential twice.
        run("green", {job("resnet50", "train", 132, 500, 1.0)}),
        run("sequential", {job("resnet50", "train", 132, 600, 1.5)}),
        run("sequential", {job("resnet50", "train", 132, 600, 1.5)}),
        // A series without a whole-GPU point, and one without energy there.
        run("green", {job("vit", "train", 16, 80, 3.0)}),
        run("green", {job("bert", "train", 16, 40, 2.0)}),
        run("sequential", {job("bert", "train", 132, 200, std::nullopt)}),
    };
    const Findings f = analyse(runs);
    ASSERT_EQ(f.scaling.size(), 3u);  // bert, resnet50, vit
    const ScalingSeries& resnet = f.scaling[1];
    ASSERT_EQ(resnet.points.size(), 3u);
    EXPECT_DOUBLE_EQ(*resnet.points[0].speed_of_whole, 0.25);  // 150 of the sequential 600
    EXPECT_DOUBLE_EQ(*resnet.points[0].energy_per_item_of_whole, 2.0);
    EXPECT_DOUBLE_EQ(*resnet.points[1].speed_of_whole, 500.0 / 600);  // the green 132-SM point
    EXPECT_DOUBLE_EQ(*resnet.points[2].speed_of_whole, 1.0);
    const ScalingSeries& bert = f.scaling[0];
    EXPECT_DOUBLE_EQ(*bert.points[0].speed_of_whole, 0.2);
    EXPECT_FALSE(bert.points[0].energy_per_item_of_whole);
    const ScalingSeries& vit = f.scaling[2];
    EXPECT_FALSE(vit.points[0].speed_of_whole);
    EXPECT_FALSE(vit.points[0].energy_per_item_of_whole);
}

TEST(Findings, CudaGraphAndEagerRunsOfAJobAreSeparateSeriesAndJobSets) {
    store::RunRecord graph = run("green", {job("resnet18", "train", 16, 200, 1.0)});
    graph.jobs[0].step_mode = "cuda-graph";
    store::RunRecord eager = run("green", {job("resnet18", "train", 16, 100, 2.0)});
    eager.jobs[0].step_mode = "eager";
    const store::RunRecord unrecorded = run("green", {job("resnet18", "train", 16, 110, 2.0)});
    const Findings f = analyse({graph, eager, unrecorded});
    ASSERT_EQ(f.scaling.size(), 2u);
    EXPECT_FALSE(f.scaling[0].cuda_graph);  // eager and unrecorded (from before graphs) together
    EXPECT_EQ(f.scaling[0].points.at(0).items_per_s->n, 2);
    EXPECT_TRUE(f.scaling[1].cuda_graph);
    EXPECT_DOUBLE_EQ(f.scaling[1].points.at(0).items_per_s->median, 200);
    EXPECT_EQ(job_key(graph.jobs[0]), "resnet18:train:8 (CUDA graph)");
    EXPECT_EQ(job_key(eager.jobs[0]), "resnet18:train:8 (eager)");
}

TEST(Findings, MissingEnergyStaysMissingWithTheRunsWarning) {
    store::RunRecord r = run("green", {job("resnet50", "train", 16, 100, std::nullopt)});
    r.warnings = {"no power source: energy not measured"};
    store::RunRecord failed = run("green", {job("resnet50", "train", 16, 90, 2.0)});
    failed.jobs[0].status = "crashed";  // failed jobs are no points
    const Findings f = analyse({r, failed});
    ASSERT_EQ(f.scaling.size(), 1u);
    const ScalingPoint& p = f.scaling[0].points.at(0);
    EXPECT_EQ(p.items_per_s->n, 1);
    EXPECT_FALSE(p.energy_per_item_j);
    ASSERT_EQ(p.notes.size(), 1u);
    EXPECT_NE(p.notes[0].find("no power source"), std::string::npos) << p.notes[0];
}

TEST(Findings, LayoutsGroupRepetitionsWithTheirBaselinesAndSpread) {
    std::vector<store::RunRecord> runs;
    // Three repetitions of one layout: a and b both at 10 items/s alone → 2 J/item and 1 J/item.
    for (double energy_j : {200.0, 240.0, 220.0}) {
        store::RunRecord r =
            run("green",
                {job("a", "train", 60, 10, std::nullopt), job("b", "train", 60, 10, std::nullopt)},
                energy_j);
        r.layout = "3g.71gb+3g.71gb";
        runs.push_back(r);
        runs.push_back(
            baseline_of(r, {job("a", "train", 132, 20, 2.0), job("b", "train", 132, 20, 1.0)}));
    }
    // The same jobs in another order are the same job set; a run without baseline is left out.
    store::RunRecord other = run(
        "green", {job("b", "train", 64, 10, std::nullopt), job("a", "train", 64, 20, std::nullopt)},
        150);
    other.layout = "4g.71gb+3g.71gb";
    runs.push_back(other);
    runs.push_back(
        baseline_of(other, {job("a", "train", 132, 20, 2.0), job("b", "train", 132, 20, 1.0)}));
    store::RunRecord lonely = run("green", {job("a", "train", 60, 10, std::nullopt)}, 100);
    lonely.layout = "3g.71gb";
    runs.push_back(lonely);

    const Findings f = analyse(runs);
    ASSERT_EQ(f.layouts.size(), 2u);
    const LayoutComparison& g = f.layouts[1];  // by job set, backend, then layout
    EXPECT_EQ(g.layout, "4g.71gb+3g.71gb");
    const LayoutComparison& three = f.layouts[0];
    EXPECT_EQ(three.layout, "3g.71gb+3g.71gb");
    EXPECT_EQ(three.job_set, "a:train:8 (eager) + b:train:8 (eager)");
    EXPECT_EQ(g.job_set, three.job_set);
    ASSERT_EQ(three.repetitions.size(), 3u);
    // Same work: 100 items of a (200 J, 5 s alone) and 100 of b (100 J, 5 s alone) in 10 s.
    EXPECT_DOUBLE_EQ(three.baseline_energy_j->median, 300);
    EXPECT_EQ(three.energy_change_pct->n, 3);
    EXPECT_NEAR(three.energy_change_pct->median, -100.0 * 80 / 300, 1e-9);
    EXPECT_NEAR(three.energy_change_pct->min, -100.0 * 100 / 300, 1e-9);
    EXPECT_NEAR(three.energy_change_pct->max, -100.0 * 60 / 300, 1e-9);
    EXPECT_DOUBLE_EQ(three.speedup->median, 1.0);
    EXPECT_EQ(three.repetitions[0].baseline_id, three.repetitions[0].run_id + 1);
}

// The board's power and SM clock of each repetition and of its baseline: what the power cap left.
TEST(Findings, LayoutsKeepTheRunsAndBaselinesPowerAndClockWithSpread) {
    std::vector<store::RunRecord> runs;
    const std::vector<double> run_w = {690, 700, 695}, run_mhz = {1785, 1800, 1830};
    for (size_t i = 0; i < 3; ++i) {
        store::RunRecord r = run("green", {job("a", "train", 60, 10, std::nullopt)}, 200);
        r.layout = "3g.71gb";
        r.average_power_w = run_w[i];
        r.sm_clock_mhz = run_mhz[i];
        runs.push_back(r);
        store::RunRecord b = baseline_of(r, {job("a", "train", 132, 20, 2.0)});
        if (i != 1) {  // one baseline without readings: the spread is over the other two
            b.average_power_w = 600 + 10 * static_cast<double>(i);
            b.sm_clock_mhz = 1980;
        }
        runs.push_back(b);
    }
    const Findings f = analyse(runs);
    ASSERT_EQ(f.layouts.size(), 1u);
    const LayoutComparison& g = f.layouts[0];
    ASSERT_TRUE(g.run_power_w && g.baseline_power_w && g.run_sm_clock_mhz &&
                g.baseline_sm_clock_mhz);
    EXPECT_EQ(g.run_power_w->n, 3);
    EXPECT_DOUBLE_EQ(g.run_power_w->median, 695);
    EXPECT_DOUBLE_EQ(g.run_sm_clock_mhz->min, 1785);
    EXPECT_DOUBLE_EQ(g.run_sm_clock_mhz->max, 1830);
    EXPECT_EQ(g.baseline_power_w->n, 2);
    EXPECT_DOUBLE_EQ(g.baseline_power_w->max, 620);
    EXPECT_DOUBLE_EQ(g.baseline_sm_clock_mhz->median, 1980);
}

// A run over two GPUs (a row per GPU, its baseline too, naming the run's first row): each GPU's
// run is compared with that GPU's baseline, each pair a repetition.
TEST(Findings, EachGpuOfAHostRunIsComparedWithItsOwnGpusBaseline) {
    std::vector<store::RunRecord> runs;
    std::vector<store::RunRecord> gpus;
    for (double energy_j : {200.0, 260.0}) {
        store::RunRecord r =
            run("green",
                {job("a", "train", 60, 10, std::nullopt), job("b", "train", 60, 10, std::nullopt)},
                energy_j);
        r.layout = "3g.71gb+3g.71gb";
        r.gpu_index = static_cast<int64_t>(gpus.size());
        gpus.push_back(r);
    }
    for (store::RunRecord& r : gpus)
        r.host_run_id = gpus[0].id;
    runs = gpus;
    // GPU 0's baseline costs 300 J for the work, GPU 1's 400 J.
    for (size_t g = 0; g < 2; ++g) {
        const double j_per_item = g == 0 ? 2.0 : 3.0;
        store::RunRecord b = baseline_of(
            gpus[0], {job("a", "train", 132, 20, j_per_item), job("b", "train", 132, 20, 1.0)});
        b.gpu_index = static_cast<int64_t>(g);
        runs.push_back(b);
    }
    const Findings f = analyse(runs);
    ASSERT_EQ(f.layouts.size(), 1u);
    const LayoutComparison& c = f.layouts[0];
    ASSERT_EQ(c.repetitions.size(), 2u);
    EXPECT_EQ(c.repetitions[0].run_id, gpus[0].id);
    EXPECT_EQ(c.repetitions[0].baseline_id, runs[2].id);
    EXPECT_EQ(c.repetitions[1].run_id, gpus[1].id);
    EXPECT_EQ(c.repetitions[1].baseline_id, runs[3].id);
    EXPECT_NEAR(*c.repetitions[0].comparison.energy_change_pct, -100.0 * 100 / 300, 1e-9);
    EXPECT_NEAR(*c.repetitions[1].comparison.energy_change_pct, -100.0 * 140 / 400, 1e-9);
}

TEST(Findings, EqualAndMatchedFixedWorkAreDifferentComparisons) {
    std::vector<store::RunRecord> runs;
    for (const auto& steps : std::vector<std::vector<int64_t>>{{100, 100}, {97, 24}, {100, 100}}) {
        store::RunRecord r =
            run("green",
                {job("a", "train", 64, 10, std::nullopt), job("b", "train", 16, 10, std::nullopt)},
                200.0);
        r.mode = "work";
        r.layout = "4g.71gb+1g.18gb";
        for (size_t i = 0; i < steps.size(); ++i)
            r.jobs[i].steps = steps[i];
        runs.push_back(r);
        runs.push_back(
            baseline_of(r, {job("a", "train", 132, 20, 2.0), job("b", "train", 132, 20, 1.0)}));
    }
    const Findings f = analyse(runs);
    ASSERT_EQ(f.layouts.size(), 2u);
    std::map<std::string, size_t> repetitions;
    for (const LayoutComparison& g : f.layouts)
        repetitions[g.work] = g.repetitions.size();
    EXPECT_EQ(repetitions["100/100 steps"], 2u);
    EXPECT_EQ(repetitions["97/24 steps"], 1u);
    EXPECT_EQ(comparison_label(f.layouts[0]).find("green 4g.71gb+1g.18gb, "), 0u);
}

TEST(Findings, AComparisonWithoutABaselineFigureIsMissingNotZero) {
    store::RunRecord r = run("green", {job("a", "train", 60, 10, std::nullopt)}, 100);
    r.layout = "3g.71gb";
    r.warnings = {"the window closed early"};
    const std::vector<store::RunRecord> runs = {
        r, baseline_of(r, {job("a", "train", 132, 20, std::nullopt)})};
    const Findings f = analyse(runs);
    ASSERT_EQ(f.layouts.size(), 1u);
    EXPECT_FALSE(f.layouts[0].energy_change_pct);
    EXPECT_FALSE(f.layouts[0].baseline_energy_j);
    // The speedup needs only throughputs: 100 items take 5 s alone, 10 s side by side.
    EXPECT_DOUBLE_EQ(f.layouts[0].speedup->median, 0.5);
    EXPECT_DOUBLE_EQ(f.layouts[0].window_s->median, 10);
    ASSERT_EQ(f.layouts[0].notes.size(), 1u);
    EXPECT_NE(f.layouts[0].notes[0].find("the window closed early"), std::string::npos);
    EXPECT_TRUE(f.pareto.empty());  // a point needs both figures
}

TEST(Findings, ParetoFrontPerJobSetWithTheBaselineAtOne) {
    // a alone: 10 items/s at 1 J/item. A run at r items/s for 10 s does 10 r items: the baseline
    // needs r s and 10 r J for them. (speedup, energy ratio): L1 (1.2, 0.8) beats L2 (1.1, 0.9)
    // and the baseline (1, 1); L3 (1.3, 0.95) is the fastest: L1 and L3 make the front.
    std::vector<store::RunRecord> runs;
    for (const auto& [name, rate, energy_j] : std::vector<std::tuple<std::string, double, double>>{
             {"L1", 12, 96}, {"L2", 11, 99}, {"L3", 13, 123.5}}) {
        store::RunRecord r = run("green", {job("a", "train", 60, rate, std::nullopt)}, energy_j);
        r.layout = name;
        runs.push_back(r);
        runs.push_back(baseline_of(r, {job("a", "train", 132, 10, 1.0)}));
    }
    // Another job set has its own baseline point and front.
    store::RunRecord b = run("green", {job("b", "train", 60, 10, std::nullopt)}, 200);
    b.layout = "L1";
    runs.push_back(b);
    runs.push_back(baseline_of(b, {job("b", "train", 132, 10, 1.0)}));

    const Findings f = analyse(runs);
    ASSERT_EQ(f.pareto.size(), 6u);
    std::map<std::string, const ParetoPoint*> a_points;
    for (const ParetoPoint& p : f.pareto) {
        if (p.job_set == "a:train:8 (eager)")
            a_points[p.label] = &p;
    }
    ASSERT_EQ(a_points.size(), 4u);
    EXPECT_EQ(f.pareto[0].label, "sequential baseline");
    EXPECT_FALSE(a_points["sequential baseline"]->on_front);
    EXPECT_NEAR(a_points["green L1"]->relative_throughput, 1.2, 1e-9);
    EXPECT_NEAR(a_points["green L1"]->relative_energy, 0.8, 1e-9);
    EXPECT_TRUE(a_points["green L1"]->on_front);
    EXPECT_FALSE(a_points["green L2"]->on_front);
    EXPECT_TRUE(a_points["green L3"]->on_front);
    // b: the layout (1.0, 2.0) is dominated by its own baseline, not by a's layouts.
    EXPECT_EQ(f.pareto[4].job_set, "b:train:8 (eager)");
    EXPECT_TRUE(f.pareto[4].on_front);
    EXPECT_FALSE(f.pareto[5].on_front);
}

// Two layouts of one job set, each one repetition: (speedup, energy change %).
std::vector<store::RunRecord> two_layouts(double fast_rate, double fast_energy_j, double slow_rate,
                                          double slow_energy_j) {
    std::vector<store::RunRecord> runs;
    // a alone: 10 items/s at 1 J/item; 10 s at r items/s is 10 r items, r s and 10 r J alone.
    for (const auto& [layout, rate, energy_j] :
         std::vector<std::tuple<std::string, double, double>>{
             {"4g.71gb", fast_rate, fast_energy_j}, {"2g.35gb", slow_rate, slow_energy_j}}) {
        store::RunRecord r = run("green", {job("a", "train", 60, rate, std::nullopt)}, energy_j);
        r.layout = layout;
        runs.push_back(r);
        runs.push_back(baseline_of(r, {job("a", "train", 132, 10, 1.0)}));
    }
    return runs;
}

TEST(Verdict, NamesTheBestLayoutPerObjective) {
    // 4g: 1.5x, 150 items for 120 J (-20 %); 2g: 1.2x, 120 items for 84 J (-30 %).
    const Findings f = analyse(two_layouts(15, 120, 12, 84));
    ASSERT_EQ(f.verdicts.size(), 2u);
    const Verdict& throughput = f.verdicts[0];
    EXPECT_EQ(throughput.objective, Objective::kThroughput);
    EXPECT_TRUE(throughput.partition);
    EXPECT_TRUE(throughput.clear);
    EXPECT_EQ(throughput.best_layout, "green 4g.71gb");
    EXPECT_NEAR(throughput.figure->median, 1.5, 1e-9);
    const Verdict& energy = f.verdicts[1];
    EXPECT_EQ(energy.objective, Objective::kEnergy);
    EXPECT_TRUE(energy.partition);
    EXPECT_EQ(energy.best_layout, "green 2g.35gb");
    EXPECT_NEAR(energy.figure->median, -30, 1e-9);
}

TEST(Verdict, DoNotPartitionWhenOneAfterAnotherWins) {
    // 4g: 0.9x and +10 % energy; 2g: 0.8x and +20 %.
    const Findings f = analyse(two_layouts(9, 99, 8, 96));
    ASSERT_EQ(f.verdicts.size(), 2u);
    EXPECT_FALSE(f.verdicts[0].partition);
    EXPECT_TRUE(f.verdicts[0].clear);
    EXPECT_EQ(f.verdicts[0].best_layout, "green 4g.71gb");
    EXPECT_FALSE(f.verdicts[1].partition);
}

TEST(Verdict, SteadyWindowsAndFixedWorkGetTheirOwnVerdicts) {
    // Steady windows: 4g 1.5x at -20 %. Fixed work of the same job on 4g: 80 items in 10 s, 8 s
    // alone (0.8x), 110 J against 80 J alone (+37.5 %).
    std::vector<store::RunRecord> runs = two_layouts(15, 120, 12, 84);
    store::RunRecord fixed = run("green", {job("a", "train", 60, 8, 1.1)}, 110);
    fixed.layout = "4g.71gb";
    fixed.mode = "work";
    fixed.jobs[0].steps = 10;
    fixed.jobs[0].items = 80;
    runs.push_back(fixed);
    runs.push_back(baseline_of(fixed, {job("a", "train", 132, 10, 1.0)}));
    const Findings f = analyse(runs);
    ASSERT_EQ(f.verdicts.size(), 4u);
    EXPECT_FALSE(f.verdicts[0].fixed_work);
    EXPECT_TRUE(f.verdicts[0].partition);  // the stream: partition
    EXPECT_NEAR(f.verdicts[0].figure->median, 1.5, 1e-9);
    const Verdict& finish = f.verdicts[2];
    EXPECT_TRUE(finish.fixed_work);
    EXPECT_EQ(finish.objective, Objective::kThroughput);
    EXPECT_FALSE(finish.partition);  // this work done soonest: one after another
    EXPECT_NEAR(finish.figure->median, 0.8, 1e-9);
    // The summary: a row for the steady windows, one for the fixed work, each with both.
    const VerdictSummary summary = summarise_verdicts(f);
    ASSERT_EQ(summary.rows.size(), 2u);
    EXPECT_FALSE(summary.rows[0].fixed_work);
    EXPECT_TRUE(summary.rows[1].fixed_work);
    for (const VerdictRow& row : summary.rows) {
        ASSERT_TRUE(row.throughput && row.energy);
        EXPECT_EQ(row.throughput->objective, Objective::kThroughput);
        EXPECT_EQ(row.energy->objective, Objective::kEnergy);
        EXPECT_FALSE(row.on_cpu);
    }
    EXPECT_EQ(verdict_answer(*summary.rows[0].throughput, false), "partition");
    EXPECT_EQ(verdict_answer(*summary.rows[1].throughput, false), "do not partition");
    EXPECT_EQ(verdict_answer(*summary.rows[1].throughput, true), "one after another");
    EXPECT_NEAR(f.verdicts[3].figure->median, 37.5, 1e-9);
    EXPECT_FALSE(f.verdicts[3].partition);
}

TEST(Verdict, WithoutEnergyTheThroughputVerdictStaysAndEnergySaysWhy) {
    store::RunRecord r = run("green", {job("a", "train", 60, 15, std::nullopt)});
    r.layout = "4g.71gb";
    r.warnings = {"no power source: energy not measured"};
    store::RunRecord base = baseline_of(r, {job("a", "train", 132, 10, std::nullopt)});
    base.counter_energy_j.reset();
    const Findings f = analyse({r, base});
    ASSERT_EQ(f.verdicts.size(), 2u);
    EXPECT_TRUE(f.verdicts[0].partition);
    EXPECT_NEAR(f.verdicts[0].figure->median, 1.5, 1e-9);
    EXPECT_FALSE(f.verdicts[1].figure);
    EXPECT_NE(f.verdicts[1].missing.find("no power source"), std::string::npos)
        << f.verdicts[1].missing;
}

TEST(Verdict, AFigureThatPrintsAsEvenIsNoDifference) {
    // 4g: 1.5x and -0.02 % energy (150 items for 149.97 J); 2g: 1.2x and +10 %.
    const Findings f = analyse(two_layouts(15, 149.97, 12, 132));
    ASSERT_EQ(f.verdicts.size(), 2u);
    EXPECT_TRUE(f.verdicts[1].tie);
    EXPECT_FALSE(f.verdicts[1].partition);
    EXPECT_FALSE(f.verdicts[1].clear);
    EXPECT_FALSE(f.verdicts[0].tie);
}

TEST(Verdict, NotClearWhenRepetitionsFallOnBothSides) {
    std::vector<store::RunRecord> runs;
    for (double rate : {11.0, 12.0, 9.0}) {  // 1.1x, 1.2x, 0.9x
        store::RunRecord r = run("green", {job("a", "train", 60, rate, std::nullopt)});
        r.layout = "4g.71gb";
        runs.push_back(r);
        runs.push_back(baseline_of(r, {job("a", "train", 132, 10, 1.0)}));
    }
    const Findings f = analyse(runs);
    EXPECT_TRUE(f.verdicts.at(0).partition);
    EXPECT_FALSE(f.verdicts.at(0).clear);
}

TEST(Verdict, OneRepetitionsSpeedupInsideItsRatesWithinWindowSpreadIsNotClear) {
    const auto verdict_with_noise = [](double noise_pct) {
        std::vector<store::RunRecord> runs = two_layouts(10.4, 99, 8, 96);  // 1.04x at best
        runs[0].jobs[0].items_per_s_spread_pct = noise_pct;
        return analyse(runs).verdicts.at(0);
    };
    const Verdict noisy = verdict_with_noise(6.0);
    EXPECT_TRUE(noisy.partition);  // the median still says which side
    EXPECT_FALSE(noisy.clear);
    EXPECT_TRUE(verdict_with_noise(2.5).clear);
}

}  // namespace
}  // namespace migscope::report
