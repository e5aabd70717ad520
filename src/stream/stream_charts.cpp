// Energy and tardiness over time of each policy as plot descriptions, layout changes marked.
#include "stream/stream_charts.h"

#include <algorithm>

#include "report/table.h"

namespace migscope::stream {
namespace {

// A line's value at `t_s`, linear between its points (which start at (0, 0)); past the last
// point, the last value.
double value_at(const std::vector<report::PlotPoint>& line, double t) {
    if (line.empty())
        return 0;
    for (size_t i = 1; i < line.size(); ++i) {
        if (t <= line[i].x) {
            const report::PlotPoint& a = line[i - 1];
            const report::PlotPoint& b = line[i];
            if (b.x <= a.x)
                return b.y;
            return a.y + (b.y - a.y) * (t - a.x) / (b.x - a.x);
        }
    }
    return line.back().y;
}

report::PlotPoint point(double x, double y, const std::string& label = "") {
    report::PlotPoint p;
    p.x = x;
    p.y = y;
    p.label = label;
    return p;
}

}  // namespace

ChartUnits chart_units(const PolicyComparison& compared) {
    double horizon_s = 0, energy_j = 0, tardiness_s = 0;
    for (const auto& [name, e] : compared.policies) {
        horizon_s = std::max(horizon_s, e.point.horizon_s);
        energy_j = std::max({energy_j, e.point.energy_j, e.known ? e.energy_j.hi : 0.0});
        tardiness_s =
            std::max({tardiness_s, e.point.tardiness_s, e.known ? e.tardiness_s.hi : 0.0});
    }
    ChartUnits u;
    if (horizon_s > 3 * 3600) {
        u.time_s = 3600;
        u.time_name = "h";
    } else if (horizon_s > 3 * 60) {
        u.time_s = 60;
        u.time_name = "min";
    }
    if (energy_j > 10e6) {
        u.energy_j = 1e6;
        u.energy_name = "MJ";
    }
    if (tardiness_s > 3 * 3600) {
        u.tardiness_s = 3600;
        u.tardiness_name = "h";
    }
    return u;
}

std::vector<LayoutEvent> layout_changes(const StreamResult& result) {
    std::vector<LayoutEvent> changes;
    std::vector<bool> started;
    for (const LayoutEvent& e : result.layouts) {
        if (e.gpu >= started.size())
            started.resize(e.gpu + 1, false);
        if (started[e.gpu])
            changes.push_back(e);
        started[e.gpu] = true;
    }
    std::stable_sort(changes.begin(), changes.end(),
                     [](const LayoutEvent& a, const LayoutEvent& b) { return a.at_s < b.at_s; });
    return changes;
}

std::string change_text(const LayoutEvent& change, const ChartUnits& units) {
    return "GPU " + std::to_string(change.gpu) + " at " +
           report::short_number(change.at_s / units.time_s) + " " + units.time_name + ": " +
           change.layout;
}

std::vector<report::Plot> stream_plots(const PolicyComparison& compared, const ChartUnits& units) {
    report::Plot energy{kEnergyPlot,
                        "Energy drawn over time, each policy",
                        "time (" + units.time_name + ")",
                        "energy (" + units.energy_name + ")",
                        report::XAxis::kNumeric,
                        {},
                        report::YRange::kFromZero,
                        std::nullopt,
                        {},
                        true};
    report::Plot tardiness = energy;
    tardiness.name = kTardinessPlot;
    tardiness.title = "Tardiness accrued over time (late seconds of jobs past their deadline)";
    tardiness.y_label = "tardiness (" + units.tardiness_name + ")";

    for (const auto& [name, e] : compared.policies) {
        const StreamResult& r = e.point;
        if (r.series.empty())
            continue;
        report::PlotSeries energy_line{r.policy, report::SeriesStyle::kLines, {point(0, 0)}};
        report::PlotSeries tardiness_line{r.policy, report::SeriesStyle::kLines, {point(0, 0)}};
        for (const SeriesPoint& s : r.series) {
            energy_line.points.push_back(
                point(s.end_s / units.time_s, s.energy_j / units.energy_j));
            tardiness_line.points.push_back(
                point(s.end_s / units.time_s, s.tardiness_s / units.tardiness_s));
        }
        if (e.known) {  // the interval at the run's end: the figure the table gives it with
            energy_line.points.back().y_min = e.energy_j.lo / units.energy_j;
            energy_line.points.back().y_max = e.energy_j.hi / units.energy_j;
            tardiness_line.points.back().y_min = e.tardiness_s.lo / units.tardiness_s;
            tardiness_line.points.back().y_max = e.tardiness_s.hi / units.tardiness_s;
        }
        energy.series.push_back(energy_line);
        tardiness.series.push_back(tardiness_line);
        const std::vector<LayoutEvent> changes = layout_changes(r);
        if (changes.empty())
            continue;
        const std::string title = r.policy + ": layout changes";
        report::PlotSeries energy_marks{title, report::SeriesStyle::kMarkers, {}};
        report::PlotSeries tardiness_marks{title, report::SeriesStyle::kMarkers, {}};
        for (const LayoutEvent& c : changes) {
            const double x = c.at_s / units.time_s;
            const std::string text = change_text(c, units);
            energy_marks.points.push_back(point(x, value_at(energy_line.points, x), text));
            tardiness_marks.points.push_back(point(x, value_at(tardiness_line.points, x), text));
        }
        energy.series.push_back(energy_marks);
        tardiness.series.push_back(tardiness_marks);
    }
    return {energy, tardiness};
}

}  // namespace migscope::stream
