// Plot descriptions for the report's figures, with captions naming window, method and spread.
#include "report/figures.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/text.h"
#include "report/chart_data.h"

namespace migscope::report {
namespace {

PlotPoint point(double x, const Spread& s) {
    return {x, s.median, s.min, s.max, ""};
}

std::string series_title(const ScalingSeries& s) {
    return s.mode + ", batch " + (s.batch ? std::to_string(*s.batch) : std::string("default")) +
           ", " + step_label(s.cuda_graph);
}

// Two figures per workload: throughput and energy per item against the partition's SMs.
void scaling_figures(const Findings& f, std::vector<Figure>& out) {
    std::map<std::string, std::vector<const ScalingSeries*>> by_workload;
    for (const ScalingSeries& s : f.scaling)
        by_workload[s.workload].push_back(&s);
    for (const auto& [workload, series] : by_workload) {
        const std::string unit = series.front()->item_unit;
        Figure throughput{Section::kScaling,
                          {"scaling-throughput-" + text::slug(workload),
                           workload + ": throughput against partition size",
                           "SMs of the partition",
                           unit + "/s",
                           XAxis::kNumeric,
                           {},
                           YRange::kFromZero,
                           {},
                           {},
                           true},
                          workload +
                              ": throughput alone on each partition size, median over "
                              "repetitions with min–max bars (steady-state window or fixed "
                              "work; see the table for n and the window)."};
        Figure energy = throughput;
        energy.plot.name = "scaling-energy-" + text::slug(workload);
        energy.plot.title = workload + ": energy per item against partition size";
        energy.plot.y_label = "J per item (" + unit + ")";
        energy.caption = workload +
                         ": board energy (energy counter over the window) per item, the job "
                         "alone on the GPU, median with min–max bars.";
        for (const ScalingSeries* s : series) {
            PlotSeries t{series_title(*s), SeriesStyle::kLinesPoints, {}};
            PlotSeries e = t;
            for (const ScalingPoint& p : s->points) {
                const double sms = static_cast<double>(p.sms);
                if (p.items_per_s)
                    t.points.push_back(point(sms, *p.items_per_s));
                if (p.energy_per_item_j)
                    e.points.push_back(point(sms, *p.energy_per_item_j));
            }
            throughput.plot.series.push_back(std::move(t));
            if (!e.points.empty())
                energy.plot.series.push_back(std::move(e));
        }
        out.push_back(std::move(throughput));
        if (!energy.plot.series.empty())
            out.push_back(std::move(energy));
    }
}

// Per job set: energy change and speedup bars against the baseline, and the Pareto plot.
void layout_figures(const Findings& f, std::vector<Figure>& out) {
    std::vector<std::string> job_sets;
    for (const LayoutComparison& g : f.layouts) {
        if (std::find(job_sets.begin(), job_sets.end(), g.job_set) == job_sets.end())
            job_sets.push_back(g.job_set);
    }
    for (size_t k = 0; k < job_sets.size(); ++k) {
        const std::string& set = job_sets[k];
        const std::string id = std::to_string(k + 1);
        Figure energy{Section::kLayouts,
                      {"layouts-" + id + "-energy",
                       "Energy for the same work vs sequential: " + set,
                       "",
                       "energy change (%)",
                       XAxis::kCategories,
                       {},
                       YRange::kFromZero,
                       0.0,
                       {{"median over repetitions, min–max bars", SeriesStyle::kBars, {}}}},
                      "Jobs " + set +
                          ": board energy of each layout's window against the same jobs one "
                          "after another on the whole GPU for the same work (below 0: less "
                          "energy); median with min–max bars."};
        Figure speedup = energy;
        speedup.plot.name = "layouts-" + id + "-speedup";
        speedup.plot.title = "Throughput vs sequential: " + set;
        speedup.plot.y_label = "speedup (×)";
        speedup.plot.reference_y = 1.0;
        speedup.caption = "Jobs " + set +
                          ": time the sequential baseline needs for the work the layout did, "
                          "over the layout's window (above 1: faster); median with min–max bars.";
        for (const LayoutComparison& g : f.layouts) {
            if (g.job_set != set)
                continue;
            const double x = static_cast<double>(energy.plot.categories.size());
            energy.plot.categories.push_back(comparison_label(g));
            if (g.energy_change_pct)
                energy.plot.series[0].points.push_back(point(x, *g.energy_change_pct));
            if (g.speedup)
                speedup.plot.series[0].points.push_back(point(x, *g.speedup));
        }
        speedup.plot.categories = energy.plot.categories;
        out.push_back(std::move(energy));
        out.push_back(std::move(speedup));

        Figure pareto{Section::kPareto,
                      {"pareto-" + id,
                       "Throughput and energy vs sequential: " + set,
                       "throughput relative to sequential (×)",
                       "energy for the same work relative to sequential (×)",
                       XAxis::kNumeric,
                       {},
                       YRange::kAuto,  // from zero, the points would crowd one corner
                       {},
                       {{"layouts (median)", SeriesStyle::kLabelledPoints, {}},
                        {"Pareto front", SeriesStyle::kLinesPoints, {}}}},
                      "Jobs " + set +
                          ": each layout's median speedup and energy for the same work, "
                          "both relative to the sequential baseline (1, 1); the front joins "
                          "the layouts no other layout beats on both (right and low is better)."};
        std::vector<PlotPoint> front;
        for (const ParetoPoint& p : f.pareto) {
            if (p.job_set != set)
                continue;
            const PlotPoint pp{p.relative_throughput, p.relative_energy, {}, {}, p.label};
            pareto.plot.series[0].points.push_back(pp);
            if (p.on_front)
                front.push_back(pp);
        }
        std::sort(front.begin(), front.end(),
                  [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
        for (PlotPoint& p : front)
            p.label.clear();
        pareto.plot.series[1].points = front;
        if (!pareto.plot.series[0].points.empty())
            out.push_back(std::move(pareto));
    }
}

const store::RunRecord* find_run(const std::vector<store::RunRecord>& runs, int64_t id) {
    for (const store::RunRecord& r : runs) {
        if (r.id == id)
            return &r;
    }
    return nullptr;
}

PlotSeries power_series(const store::RunRecord& run, const std::string& title) {
    PlotSeries s{title, SeriesStyle::kLines, {}};
    for (const store::TraceSample& t : run.trace) {
        if (t.power_instant_w)
            s.points.push_back({t.t_s, *t.power_instant_w, {}, {}, ""});
    }
    return s;
}

// One figure per traced layout: its latest repetition's board power and its baseline's.
void trace_figures(const Findings& f, const std::vector<store::RunRecord>& traced,
                   std::vector<Figure>& out) {
    for (size_t i = 0; i < f.layouts.size() && i < kMaxTracedLayouts; ++i) {
        const LayoutComparison& g = f.layouts[i];
        const Repetition& latest = g.repetitions.back();
        const store::RunRecord* run = find_run(traced, latest.run_id);
        const store::RunRecord* base = find_run(traced, latest.baseline_id);
        if (!run || !base)
            continue;
        Figure fig{
            Section::kTraces,
            {"power-run-" + std::to_string(run->id),
             "Board power: " + comparison_label(g) + " (run " + std::to_string(run->id) + ")",
             "time since the run's start (s)",
             "board power (W, instant)",
             XAxis::kNumeric,
             {},
             YRange::kFromZero,
             {},
             {power_series(*run, comparison_label(g) + " (run " + std::to_string(run->id) + ")"),
              power_series(*base, "sequential baseline (run " + std::to_string(base->id) + ")")}},
            "Jobs " + g.job_set + ": the whole power trace of run " + std::to_string(run->id) +
                " and of its baseline, run " + std::to_string(base->id) +
                " (idle probe, warm-up, window(s)); " + std::to_string(run->power_samples) +
                " samples in the run's window."};
        std::erase_if(fig.plot.series, [](const PlotSeries& s) { return s.points.empty(); });
        if (!fig.plot.series.empty())
            out.push_back(std::move(fig));
    }
}

}  // namespace

std::vector<int64_t> traced_run_ids(const Findings& findings) {
    std::vector<int64_t> ids;
    for (size_t i = 0; i < findings.layouts.size() && i < kMaxTracedLayouts; ++i) {
        ids.push_back(findings.layouts[i].repetitions.back().run_id);
        ids.push_back(findings.layouts[i].repetitions.back().baseline_id);
    }
    return ids;
}

std::vector<Figure> report_figures(const Findings& findings,
                                   const std::vector<store::RunRecord>& traced_runs) {
    std::vector<Figure> out;
    scaling_figures(findings, out);
    layout_figures(findings, out);
    trace_figures(findings, traced_runs, out);
    // A single point is a table row, not a plot (a workload measured only on the whole GPU).
    std::erase_if(out, [](const Figure& f) { return !worth_plotting(f.plot); });
    return out;
}

}  // namespace migscope::report
