// Tests of a stream comparison's plots over time: the lines are the simulator's series, their
// ends its totals and intervals, and the markers its layout changes.
#include "stream/stream_charts.h"

#include <gtest/gtest.h>

#include "stream/compare.h"
#include "stream/fixture.h"

namespace migscope::stream {
namespace {

using testing::add_residuals;
using testing::launch_bound;

// Two GPUs, bursts of 14 jobs at 0, 1000 and 2000 s, each due 60 s after it arrives; never
// partitioned, and repartitioned every 1000 s (whole at 0, then 1g partitions), in 50 s bins,
// with the model's error.
struct Compared {
    plan::Problem problem = launch_bound();
    std::vector<StreamJob> jobs;
    PolicyComparison compared;
    Compared() {
        for (double at : {0.0, 1000.0, 2000.0}) {
            for (int i = 0; i < 14; ++i)
                jobs.push_back({0, at + 0.1 * i, at + 60});
        }
        SimulationOptions o;
        o.gpus = 2;
        o.reconfiguration.orchestrator_s = 10;
        o.series_bin_s = 50;
        PolicySettings s;
        s.period_s = 1000;
        s.window_s = 1000;
        plan::ModelError error;
        add_residuals(error, plan::ResidualKind::kSpeed, "alone", 0.8, 1.1);
        add_residuals(error, plan::ResidualKind::kSpeed, "mix/small/plain", 0.8, 1.1);
        add_residuals(error, plan::ResidualKind::kDynamicEnergy, "mix/plain", 0.9, 1.2);
        compared = compare_policies(problem, jobs, {"never", "periodic"}, o, s, 0.0, &error);
    }
};

const Compared& fixture() {
    static const Compared c;
    return c;
}

const report::PlotSeries* series(const report::Plot& plot, const std::string& title) {
    for (const report::PlotSeries& s : plot.series) {
        if (s.title == title)
            return &s;
    }
    return nullptr;
}

std::string layouts_text(const StreamResult& r) {
    std::string text;
    for (const LayoutEvent& e : r.layouts)
        text += e.layout + "; ";
    return text;
}

TEST(StreamCharts, UnitsFollowTheLongestRun) {
    const Compared& c = fixture();
    const ChartUnits u = chart_units(c.compared);
    // About 2000 s: minutes; a few hundred kJ; tardiness in seconds.
    EXPECT_EQ(u.time_name, "min");
    EXPECT_DOUBLE_EQ(u.time_s, 60);
    EXPECT_EQ(u.energy_name, "kJ");
    EXPECT_EQ(u.tardiness_name, "s");
}

TEST(StreamCharts, TheLinesAreTheSimulatorsSeriesAndEndAtItsTotals) {
    const Compared& c = fixture();
    const ChartUnits u = chart_units(c.compared);
    const std::vector<report::Plot> plots = stream_plots(c.compared, u);
    ASSERT_EQ(plots.size(), 2u);
    EXPECT_EQ(plots[0].name, kEnergyPlot);
    EXPECT_EQ(plots[1].name, kTardinessPlot);
    for (const auto& [name, e] : c.compared.policies) {
        const StreamResult& r = e.point;
        ASSERT_FALSE(r.series.empty()) << name;
        const report::PlotSeries* energy = series(plots[0], r.policy);
        const report::PlotSeries* tardiness = series(plots[1], r.policy);
        ASSERT_TRUE(energy && tardiness) << name;
        // (0, 0), then each bin's end: the values --format json writes as series.energy_j and
        // series.tardiness_s, in the plot's units.
        ASSERT_EQ(energy->points.size(), r.series.size() + 1);
        EXPECT_EQ(energy->points[0].x, 0);
        EXPECT_EQ(energy->points[0].y, 0);
        for (size_t i = 0; i < r.series.size(); ++i) {
            EXPECT_DOUBLE_EQ(energy->points[i + 1].x * u.time_s, r.series[i].end_s);
            EXPECT_DOUBLE_EQ(energy->points[i + 1].y * u.energy_j, r.series[i].energy_j);
            EXPECT_DOUBLE_EQ(tardiness->points[i + 1].y * u.tardiness_s, r.series[i].tardiness_s);
        }
        // The last point is the run's totals (the JSON's energy_j and tardiness_s), to rounding,
        // at its end, with the intervals the table gives.
        EXPECT_NEAR(energy->points.back().y * u.energy_j, r.energy_j, 1e-6 * r.energy_j);
        EXPECT_NEAR(tardiness->points.back().y * u.tardiness_s, r.tardiness_s,
                    1e-6 * (1 + r.tardiness_s));
        EXPECT_DOUBLE_EQ(energy->points.back().x * u.time_s, r.horizon_s);
        ASSERT_TRUE(e.known);
        EXPECT_DOUBLE_EQ(*energy->points.back().y_min * u.energy_j, e.energy_j.lo);
        EXPECT_DOUBLE_EQ(*energy->points.back().y_max * u.energy_j, e.energy_j.hi);
        EXPECT_DOUBLE_EQ(*tardiness->points.back().y_max * u.tardiness_s, e.tardiness_s.hi);
        EXPECT_FALSE(energy->points[1].y_min);  // only the end carries the interval
        EXPECT_GT(r.tardiness_s, 0);            // the deadlines bite: the line is not flat
    }
}

TEST(StreamCharts, MarkersAreTheLayoutChangesTheSimulatorMade) {
    const Compared& c = fixture();
    const ChartUnits u = chart_units(c.compared);
    const std::vector<report::Plot> plots = stream_plots(c.compared, u);
    const StreamResult& never = c.compared.policies[0].second.point;
    const StreamResult& periodic = c.compared.policies[1].second.point;
    ASSERT_EQ(never.reconfigurations, 0u);
    ASSERT_GE(periodic.reconfigurations, 2u);  // both GPUs partitioned at 1000 s at least
    EXPECT_NE(layouts_text(periodic).find("1g.18gb"), std::string::npos);
    // Never partitioned: a line, no markers.
    EXPECT_FALSE(series(plots[0], never.policy + ": layout changes"));
    // The simulator's changes: every layout event after each GPU's first.
    std::vector<double> times;
    std::vector<std::string> layouts;
    std::vector<bool> seen(2, false);
    for (const LayoutEvent& e : periodic.layouts) {
        if (seen.at(e.gpu)) {
            times.push_back(e.at_s);
            layouts.push_back(e.layout);
        }
        seen[e.gpu] = true;
    }
    ASSERT_EQ(times.size(), periodic.reconfigurations);
    EXPECT_EQ(layout_changes(periodic).size(), periodic.reconfigurations);
    for (const report::Plot& plot : plots) {
        const report::PlotSeries* marks = series(plot, periodic.policy + ": layout changes");
        ASSERT_TRUE(marks) << plot.name;
        EXPECT_EQ(marks->style, report::SeriesStyle::kMarkers);
        ASSERT_EQ(marks->points.size(), times.size());
        const report::PlotSeries* line = series(plot, periodic.policy);
        for (size_t i = 0; i < times.size(); ++i) {
            EXPECT_DOUBLE_EQ(marks->points[i].x * u.time_s, times[i]);
            // On the line: between its values at the bin ends around the change.
            double below = 0, above = line->points.back().y;
            for (const report::PlotPoint& p : line->points) {
                if (p.x <= marks->points[i].x)
                    below = p.y;
                if (p.x >= marks->points[i].x) {
                    above = p.y;
                    break;
                }
            }
            EXPECT_GE(marks->points[i].y, below - 1e-9);
            EXPECT_LE(marks->points[i].y, above + 1e-9);
            // The tooltip names the GPU, the time and the new layout.
            EXPECT_NE(marks->points[i].label.find("GPU "), std::string::npos);
            EXPECT_NE(marks->points[i].label.find(" min: "), std::string::npos);
            EXPECT_NE(marks->points[i].label.find(": " + layouts[i]), std::string::npos)
                << marks->points[i].label;
        }
    }
}

TEST(StreamCharts, APolicyWithoutASeriesHasNoLine) {
    const Compared& c = fixture();
    PolicyComparison without = c.compared;
    for (auto& [name, e] : without.policies)
        e.point.series.clear();
    for (const report::Plot& p : stream_plots(without, chart_units(without)))
        EXPECT_TRUE(p.series.empty()) << p.name;
}

}  // namespace
}  // namespace migscope::stream
