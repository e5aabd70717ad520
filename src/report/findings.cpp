// Findings from stored runs: grouping, spreads over repetitions and the Pareto front.
#include "report/findings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/statistics.h"
#include "partition/backend_traits.h"
#include "report/table.h"

namespace migscope::report {
namespace {

void add_note(std::vector<std::string>& notes, const std::string& note) {
    if (std::find(notes.begin(), notes.end(), note) == notes.end())
        notes.push_back(note);
}

void add_if(std::vector<double>& values, const std::optional<double>& v) {
    if (v)
        values.push_back(*v);
}

// Keeps the widest of the jobs' within-window rate spreads in `widest`.
void widen(std::optional<double>& widest, const store::JobRecord& job) {
    if (job.items_per_s_spread_pct)
        widest = std::max(widest.value_or(0.0), *job.items_per_s_spread_pct);
}

// "run 7: <its warnings>", or what is missing when the run gave no reason.
std::string missing_note(const store::RunRecord& run, const std::string& what) {
    std::string note = "run " + std::to_string(run.id) + ": " + what;
    for (size_t i = 0; i < run.warnings.size(); ++i)
        note += (i == 0 ? " (" : "; ") + run.warnings[i];
    return note + (run.warnings.empty() ? "" : ")");
}

// Raw values of one scaling point before their spreads are taken.
struct PointValues {
    ScalingPoint point;
    std::vector<double> items_per_s, energy_per_item_j, measured_s;
    std::optional<double> widest_rate_spread_pct;
};

struct SeriesValues {
    ScalingSeries series;
    std::map<std::pair<int64_t, std::string>, PointValues> points;  // (SMs, backend)
};

using SeriesKey = std::tuple<std::string, std::string, std::optional<int64_t>, bool>;

// Sets each point's speed_of_whole and energy_per_item_of_whole against the series' point on
// `whole_sms` with the most runs.
void relate_to_whole_gpu(ScalingSeries& series, int64_t whole_sms) {
    const ScalingPoint* whole = nullptr;
    for (const ScalingPoint& p : series.points) {
        if (p.sms == whole_sms && p.items_per_s &&
            (!whole || p.items_per_s->n > whole->items_per_s->n))
            whole = &p;
    }
    if (!whole || whole->items_per_s->median <= 0)
        return;
    const Spread items = *whole->items_per_s;
    const std::optional<Spread> energy = whole->energy_per_item_j;
    for (ScalingPoint& p : series.points) {
        if (p.items_per_s)
            p.speed_of_whole = p.items_per_s->median / items.median;
        if (p.energy_per_item_j && energy && energy->median > 0)
            p.energy_per_item_of_whole = p.energy_per_item_j->median / energy->median;
    }
}

std::vector<ScalingSeries> scaling_series(const std::vector<store::RunRecord>& runs) {
    std::map<SeriesKey, SeriesValues> all;
    int64_t whole_sms = 0;  // the SMs of the store's "whole GPU" jobs
    for (const store::RunRecord& run : runs) {
        // A job ran alone when it is the run's only job or its backend runs one job at a time.
        const partition::BackendTraits* backend = partition::find_backend(run.backend);
        if (run.jobs.size() != 1 && !(backend && backend->one_job_at_a_time))
            continue;
        for (const store::JobRecord& job : run.jobs) {
            const std::optional<int64_t> sms = job.sms ? job.sms : job.sms_requested;
            if (job.status != "ok" || !job.items_per_s || !sms)
                continue;
            if (job.partition == "whole GPU")
                whole_sms = std::max(whole_sms, *sms);
            const std::string workload = job.workload.value_or(job.name);
            const bool graph = replayed_cuda_graph(job);
            SeriesValues& s = all[{workload, job.mode, job.batch, graph}];
            s.series.workload = workload;
            s.series.mode = job.mode;
            s.series.batch = job.batch;
            s.series.cuda_graph = graph;
            if (s.series.item_unit.empty())
                s.series.item_unit = job.item_unit.value_or("items");
            PointValues& p = s.points[{*sms, run.backend}];
            p.point.sms = *sms;
            p.point.backend = run.backend;
            p.point.partition = job.partition;
            if (p.point.run_ids.empty() || p.point.run_ids.back() != run.id)
                p.point.run_ids.push_back(run.id);  // once for a job set holding it twice
            p.items_per_s.push_back(*job.items_per_s);
            widen(p.widest_rate_spread_pct, job);
            p.measured_s.push_back(job.busy_s);
            if (job.energy_per_item_j)
                p.energy_per_item_j.push_back(*job.energy_per_item_j);
            else
                add_note(p.point.notes, missing_note(run, "no energy per item"));
        }
    }
    std::vector<ScalingSeries> series;
    for (auto& [key, s] : all) {
        for (auto& [point_key, p] : s.points) {
            p.point.items_per_s = spread_of(p.items_per_s);
            if (p.point.items_per_s)
                p.point.items_per_s->within_window_pct = p.widest_rate_spread_pct;
            p.point.energy_per_item_j = spread_of(p.energy_per_item_j);
            p.point.measured_s = spread_of(p.measured_s);
            s.series.points.push_back(std::move(p.point));
        }
        relate_to_whole_gpu(s.series, whole_sms);
        series.push_back(std::move(s.series));
    }
    return series;
}

std::string job_set_of(const store::RunRecord& run) {
    std::vector<std::string> keys;
    for (const store::JobRecord& j : run.jobs)
        keys.push_back(job_key(j));
    std::sort(keys.begin(), keys.end());
    std::string text;
    for (const std::string& k : keys)
        text += (text.empty() ? "" : " + ") + k;
    return text;
}

// (parent id, GPU) → its latest baseline. A run over several GPUs has a row per GPU and so does
// its baseline, whose rows name the run's first row: GPU g's run is compared with GPU g's
// baseline, and each GPU's pair counts as a repetition of the layout.
using Parent = std::pair<int64_t, std::optional<int64_t>>;
std::map<Parent, const store::RunRecord*> latest_baselines(
    const std::vector<store::RunRecord>& runs) {
    std::map<Parent, const store::RunRecord*> baseline_of;
    for (const store::RunRecord& r : runs) {
        if (r.role != store::RunRole::kBaseline || !r.parent_id)
            continue;
        const store::RunRecord*& b = baseline_of[{*r.parent_id, r.gpu_index}];
        if (!b || b->id < r.id)
            b = &r;
    }
    return baseline_of;
}

// "window" for a run of a measurement window, "400/250 steps" for fixed work.
std::string work_of(const store::RunRecord& run) {
    if (run.mode != "work")
        return "window";
    std::string work;
    for (const store::JobRecord& j : run.jobs)
        work += (work.empty() ? "" : "/") + std::to_string(j.steps);
    return work + " steps";
}

// A layout's spreads over its repetitions: energy change, speed-up, energies, window, power and
// clock on both sides.
void summarize_repetitions(LayoutComparison& g,
                           const std::map<int64_t, const store::RunRecord*>& run_by_id) {
    std::vector<double> change, speedup, run_j, base_j, window;
    std::vector<double> run_w, base_w, run_mhz, base_mhz;
    std::optional<double> widest_rate_spread_pct;  // of both sides' jobs
    for (const Repetition& r : g.repetitions) {
        const Comparison& c = r.comparison;
        const store::RunRecord& run = *run_by_id.at(r.run_id);
        const store::RunRecord& base = *run_by_id.at(r.baseline_id);
        for (const store::RunRecord* side : {&run, &base}) {
            for (const store::JobRecord& job : side->jobs)
                widen(widest_rate_spread_pct, job);
        }
        add_if(run_w, run.average_power_w);
        add_if(base_w, base.average_power_w);
        add_if(run_mhz, run.sm_clock_mhz);
        add_if(base_mhz, base.sm_clock_mhz);
        if (c.energy_change_pct) {
            change.push_back(*c.energy_change_pct);
            run_j.push_back(*c.run_energy_j);
            base_j.push_back(*c.baseline_energy_j);
        }
        if (c.speedup)
            speedup.push_back(*c.speedup);
        if (c.run_time_s)
            window.push_back(*c.run_time_s);
    }
    g.energy_change_pct = spread_of(change);
    g.speedup = spread_of(speedup);
    if (g.speedup)
        g.speedup->within_window_pct = widest_rate_spread_pct;
    g.run_energy_j = spread_of(run_j);
    g.baseline_energy_j = spread_of(base_j);
    g.window_s = spread_of(window);
    g.run_power_w = spread_of(run_w);
    g.baseline_power_w = spread_of(base_w);
    g.run_sm_clock_mhz = spread_of(run_mhz);
    g.baseline_sm_clock_mhz = spread_of(base_mhz);
}

std::vector<LayoutComparison> layout_comparisons(const std::vector<store::RunRecord>& runs) {
    const std::map<Parent, const store::RunRecord*> baseline_of = latest_baselines(runs);
    std::map<int64_t, const store::RunRecord*> run_by_id;
    for (const store::RunRecord& r : runs)
        run_by_id[r.id] = &r;
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    std::map<Key, LayoutComparison> groups;
    std::map<Key, std::vector<double>> disagreements;
    for (const store::RunRecord& run : runs) {
        auto base = baseline_of.find({run.host_run_id.value_or(run.id), run.gpu_index});
        if (run.role != store::RunRole::kRun || base == baseline_of.end())
            continue;
        const std::string job_set = job_set_of(run);
        const std::string layout = run.layout.value_or("–");
        const std::string work = work_of(run);
        const Key key{job_set, run.backend, layout, run.mode + ":" + work};
        LayoutComparison& g = groups[key];
        if (run.disagreement_pct)
            disagreements[key].push_back(*run.disagreement_pct);
        g.backend = run.backend;
        g.layout = layout;
        g.run_mode = run.mode;
        g.work = work;
        g.job_set = job_set;
        g.attribution_method = run.attribution_method;
        const Comparison c = compare_with_baseline(run, *base->second);
        g.repetitions.push_back({run.id, base->second->id, c});
        if (!c.speedup) {
            add_note(g.notes, missing_note(run,
                                           "no same-work comparison: a job lacks its "
                                           "throughput or energy per item on either side"));
        } else if (!c.energy_change_pct) {
            add_note(g.notes,
                     missing_note(run, "no energy comparison: no board energy on one side"));
        }
    }
    std::vector<LayoutComparison> out;
    for (auto& [key, g] : groups) {
        summarize_repetitions(g, run_by_id);
        g.disagreement_pct = spread_of(disagreements[key]);
        out.push_back(std::move(g));
    }
    return out;
}

// Per job set: the baseline at (1, 1), then every layout with both medians; marks the front.
std::vector<ParetoPoint> pareto_points(const std::vector<LayoutComparison>& layouts) {
    std::vector<ParetoPoint> points;
    for (const LayoutComparison& g : layouts) {
        if (!g.speedup || !g.energy_change_pct)
            continue;
        const bool first_of_set = std::none_of(
            points.begin(), points.end(), [&](const auto& p) { return p.job_set == g.job_set; });
        if (first_of_set)
            points.push_back({g.job_set, "sequential baseline", 1.0, 1.0, false});
        points.push_back({g.job_set, comparison_label(g), g.speedup->median,
                          1.0 + g.energy_change_pct->median / 100.0, false});
    }
    for (ParetoPoint& p : points) {
        p.on_front = std::none_of(points.begin(), points.end(), [&](const ParetoPoint& q) {
            return q.job_set == p.job_set && q.relative_throughput >= p.relative_throughput &&
                   q.relative_energy <= p.relative_energy &&
                   (q.relative_throughput > p.relative_throughput ||
                    q.relative_energy < p.relative_energy);
        });
    }
    return points;
}

// The job set's layout with the best median figure for `objective` among its steady-window or
// its fixed-work comparisons, against one after another.
Verdict verdict_for(const std::string& job_set, bool fixed_work, Objective objective,
                    const std::vector<LayoutComparison>& layouts) {
    const bool throughput = objective == Objective::kThroughput;
    const auto figure = [&](const LayoutComparison& c) {
        return throughput ? c.speedup : c.energy_change_pct;
    };
    // Better: a higher speedup, a lower (more negative) energy change.
    const auto better = [&](double a, double b) { return throughput ? a > b : a < b; };
    Verdict v;
    v.job_set = job_set;
    v.objective = objective;
    v.fixed_work = fixed_work;
    std::vector<std::string> notes;
    for (const LayoutComparison& c : layouts) {
        if (c.job_set != job_set || (c.run_mode == "work") != fixed_work)
            continue;
        const std::optional<Spread> f = figure(c);
        if (!f) {
            for (const std::string& n : c.notes)
                add_note(notes, n);
        } else if (!v.figure || better(f->median, v.figure->median)) {
            v.figure = f;
            v.best_layout = comparison_label(c);
        }
    }
    if (!v.figure) {
        for (size_t i = 0; i < notes.size(); ++i)
            v.missing += (i ? "; " : "") + notes[i];
        if (v.missing.empty())
            v.missing = throughput ? "no throughput measured" : "no energy measured";
        return v;
    }
    const double even = throughput ? 1.0 : 0.0;
    // A median that prints as even (1.00×, +0.0 %) is no difference.
    v.tie = std::abs(v.figure->median - even) < (throughput ? 0.005 : 0.05);
    v.partition = !v.tie && better(v.figure->median, even);
    // Clear: every repetition is on the median's side of one after another.
    const double worst = throughput ? v.figure->min : v.figure->max;
    const double best = throughput ? v.figure->max : v.figure->min;
    v.clear = !v.tie && (v.partition ? better(worst, even) : !better(best, even));
    // One repetition has no range: a speed-up inside its jobs' rate spreads is not clear.
    const std::optional<double> noise_pct = v.figure->within_window_pct;
    if (v.clear && v.figure->n == 1 && noise_pct)
        v.clear = std::abs(v.figure->median - even) * 100 > *noise_pct;
    return v;
}

// For each job set (in the layouts' order), from its steady windows, then from its fixed work
// (where it has them): its throughput verdict, then its energy verdict.
std::vector<Verdict> layout_verdicts(const std::vector<LayoutComparison>& layouts) {
    std::vector<Verdict> out;
    std::set<std::string> seen;
    for (const LayoutComparison& g : layouts) {
        if (!seen.insert(g.job_set).second)
            continue;
        for (const bool fixed_work : {false, true}) {
            const bool measured = std::any_of(layouts.begin(), layouts.end(), [&](const auto& c) {
                return c.job_set == g.job_set && (c.run_mode == "work") == fixed_work;
            });
            if (!measured)
                continue;
            out.push_back(verdict_for(g.job_set, fixed_work, Objective::kThroughput, layouts));
            out.push_back(verdict_for(g.job_set, fixed_work, Objective::kEnergy, layouts));
        }
    }
    return out;
}

}  // namespace

bool every_job_stepped_as_graph(const Findings& f) {
    const auto count_of = [](const std::string& text, const std::string& part) {
        size_t n = 0;
        for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
            ++n;
        return n;
    };
    return !f.layouts.empty() &&
           std::all_of(f.layouts.begin(), f.layouts.end(), [&](const LayoutComparison& c) {
               return count_of(c.job_set, " (CUDA graph)") == count_of(c.job_set, " + ") + 1;
           });
}

std::string shown_job_set(const std::string& job_set, bool every_job_graph) {
    static const std::string kGraph = " (CUDA graph)";
    std::string out = job_set;
    if (every_job_graph) {
        for (size_t at = out.find(kGraph); at != std::string::npos; at = out.find(kGraph, at))
            out.erase(at, kGraph.size());
    }
    return out;
}

bool job_set_on_cpu(const Findings& f, const std::string& job_set) {
    return std::any_of(f.layouts.begin(), f.layouts.end(), [&](const LayoutComparison& c) {
        const partition::BackendTraits* b = partition::find_backend(c.backend);
        return c.job_set == job_set && b && !b->needs_gpu;
    });
}

VerdictSummary summarise_verdicts(const Findings& f) {
    VerdictSummary s;
    s.every_job_graph = every_job_stepped_as_graph(f);
    // The verdicts come per job set and kind of measurement, throughput then energy.
    for (size_t i = 0; i < f.verdicts.size();) {
        const Verdict& first = f.verdicts[i];
        VerdictRow row;
        row.job_set = shown_job_set(first.job_set, s.every_job_graph);
        row.fixed_work = first.fixed_work;
        row.on_cpu = job_set_on_cpu(f, first.job_set);
        for (; i < f.verdicts.size() && f.verdicts[i].job_set == first.job_set &&
               f.verdicts[i].fixed_work == first.fixed_work;
             ++i) {
            (f.verdicts[i].objective == Objective::kThroughput ? row.throughput : row.energy) =
                f.verdicts[i];
        }
        (row.on_cpu ? s.on_cpu : s.on_gpu) = true;
        s.rows.push_back(std::move(row));
    }
    return s;
}

std::string verdict_answer(const Verdict& v, bool on_cpu) {
    if (!v.figure)
        return "no verdict";
    if (v.tie)
        return "no difference";
    if (on_cpu)
        return v.partition ? "side by side" : "one after another";
    return v.partition ? "partition" : "do not partition";
}

const char* whole_device(bool on_cpu) {
    return on_cpu ? "all the CPU cores" : "the whole GPU";
}

std::string verdict_note(const VerdictSummary& s) {
    const std::string device = s.on_cpu && s.on_gpu
                                   ? "the whole GPU (all the CPU cores for CPU runs)"
                                   : whole_device(s.on_cpu);
    return "Each figure is the best layout's against the same jobs one after another on " + device +
           ", for the same work: its speedup, or its change in energy. Steady windows give the "
           "rate for a stream of such jobs; fixed work, all of it done. The median over "
           "repetitions, with n and the range; not clear: the range reaches the other side, or, "
           "for one repetition's speedup, its distance from 1.00× is inside the jobs' rate "
           "spread within their windows (± %)." +
           (s.every_job_graph ? " Every job stepped as a CUDA graph." : "");
}

std::string spread_range_text(const Spread& s, const std::function<std::string(double)>& format) {
    std::string text = "(n " + std::to_string(s.n);
    if (s.n > 1)
        text += ": " + format(s.min) + " – " + format(s.max);
    if (s.within_window_pct)
        text += ", ±" + cell_number(s.within_window_pct, 1, "%") + " within the window";
    return text + ")";
}

std::optional<Spread> spread_of(const std::vector<double>& values) {
    if (values.empty())
        return std::nullopt;
    const auto [min, max] = std::minmax_element(values.begin(), values.end());
    return Spread{static_cast<int>(values.size()), *percentile(values, 0.5), *min, *max,
                  std::nullopt};
}

std::string comparison_label(const LayoutComparison& g) {
    const std::string where = g.layout == "–" ? g.backend : g.backend + " " + g.layout;
    return where + (g.run_mode == "work" ? ", " + g.work : "");
}

std::string job_key(const store::JobRecord& job) {
    return job.workload.value_or(job.name) + ":" + job.mode + ":" +
           (job.batch ? std::to_string(*job.batch) : std::string("default")) + " (" +
           step_label(replayed_cuda_graph(job)) + ")";
}

std::string step_label(bool cuda_graph) {
    return cuda_graph ? "CUDA graph" : "eager";
}

bool replayed_cuda_graph(const store::JobRecord& job) {
    return store::step_mode_of(job) == "cuda-graph";
}

Findings analyse(const std::vector<store::RunRecord>& runs) {
    Findings f;
    f.scaling = scaling_series(runs);
    f.layouts = layout_comparisons(runs);
    f.pareto = pareto_points(f.layouts);
    f.verdicts = layout_verdicts(f.layouts);
    return f;
}

}  // namespace migscope::report
