// The self-contained HTML report: sections of findings, figures and tables, inline CSS and SVG.
#include "report/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "core/user_text.h"
#include "partition/backend_traits.h"
#include "report/chart_data.h"
#include "report/host_total.h"
#include "report/html_page.h"
#include "report/run_text.h"
#include "report/table.h"
#include "telemetry/idle_baseline.h"

namespace migscope::report {
namespace {

// A stored run on CPU cores (its energy from RAPL, where readable), not a GPU.
bool on_cpu_cores(const store::RunRecord& r) {
    const partition::BackendTraits* b = partition::find_backend(r.backend);
    return b && !b->needs_gpu;
}

// The page's canvas for a figure: its plot's name is a slug already; "plot-" keeps it apart.
std::string canvas_id(const Figure& f) {
    return "plot-" + f.plot.name;
}

using Table = HtmlTable;

const std::string kMissing = "<span class=\"na\">–</span>";

std::string percent(double v) {
    return signed_change(v);
}

// "median (n 3: min–max)"; "–" when nothing was measured.
std::string spread_html(const std::optional<Spread>& s,
                        const std::function<std::string(double)>& format = short_number) {
    if (!s)
        return kMissing;
    return format(s->median) + " <span class=\"spread\">" +
           html_escape(spread_range_text(*s, format)) + "</span>";
}

std::string optional_html(const std::optional<double>& v) {
    return v ? short_number(*v) : kMissing;
}

// "0.21×"; "–" when missing.
std::string ratio_html(const std::optional<double>& ratio) {
    return ratio ? times_text(*ratio) : kMissing;
}

// Run ids in the order given, consecutive ones as ranges: "1–2, 4–29, 31".
std::string ids_text(const std::vector<int64_t>& ids) {
    std::string text;
    for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
            ++j;
        text += (text.empty() ? "" : ", ") + std::to_string(ids[i]) +
                (j > i ? "–" + std::to_string(ids[j]) : "");
        i = j + 1;
    }
    return text;
}

std::string notes_html(const std::vector<std::string>& notes) {
    std::string text;
    for (const std::string& n : notes)
        text += (text.empty() ? "" : "<br>") + html_escape(n);
    return text;
}

// Each figure: a canvas that plots.js draws on, its caption and the exported files if any.
void write_figures(const ReportInput& in, Section section, std::ostream& out) {
    for (const ReportFigure& f : in.figures) {
        if (f.figure.section != section)
            continue;
        std::string links;
        if (!f.svg_link.empty()) {
            links = "<a href=\"" + html_escape(f.svg_link) + "\">SVG</a> · <a href=\"" +
                    html_escape(f.png_link) + "\">PNG</a>";
        }
        out << figure_html("fig-" + f.figure.plot.name, canvas_id(f.figure), f.figure.plot.title,
                           f.figure.caption, links);
    }
}

// One verdict's cell: the answer, its layout and its figure. On CPU cores the jobs share the
// cores side by side: there is no layout to name.
std::string verdict_cell(const std::optional<Verdict>& verdict, bool on_cpu) {
    if (!verdict)
        return kMissing;
    const Verdict& v = *verdict;
    const std::string answer = "<b>" + verdict_answer(v, on_cpu) + "</b>";
    if (!v.figure) {
        return answer + ": " +
               (v.objective == Objective::kThroughput ? "no speedup" : "no energy") +
               " measured (" + html_escape(v.missing) + ")";
    }
    const std::string figure = v.objective == Objective::kThroughput
                                   ? spread_html(v.figure, times_text)
                                   : spread_html(v.figure, percent) + " energy";
    const std::string layout = html_escape(v.best_layout);
    const std::string unclear = v.clear || v.tie ? "" : " <i>not clear</i>";
    if (on_cpu)
        return answer +
               (v.partition ? " on split cores: " + figure : " (side by side: " + figure + ")") +
               unclear;
    if (v.partition && !v.tie)
        return answer + " as <b>" + layout + "</b>: " + figure + unclear;
    return answer + " (best layout " + layout + ": " + figure + ")" + unclear;
}

// The answer first: one row per job set and kind of measurement (steady windows, fixed work),
// its verdict for throughput and for energy; how the figures are made is said once below.
void write_verdict(const ReportInput& in, std::ostream& out) {
    out << "<section id=\"verdict\"><h2>Verdict</h2>\n";
    if (in.findings.verdicts.empty()) {
        out << "<p>No verdict: no stored run has a sequential baseline to compare with (<code>"
               "migscope run --baseline sequential --db FILE</code>), so nothing says whether "
               "partitioning pays.</p></section>\n";
        return;
    }
    const VerdictSummary summary = summarise_verdicts(in.findings);
    Table table({"jobs", "measured as", "for the most throughput", "for the most energy savings"});
    for (const VerdictRow& row : summary.rows) {
        table.row({"<b>" + html_escape(row.job_set) + "</b>",
                   std::string(row.fixed_work ? "fixed work" : "steady windows") +
                       (row.on_cpu ? ", CPU cores" : ""),
                   verdict_cell(row.throughput, row.on_cpu), verdict_cell(row.energy, row.on_cpu)});
    }
    std::string note = html_escape(verdict_note(summary));
    const size_t at = note.find("not clear");
    if (at != std::string::npos)
        note.replace(at, 9, "<i>not clear</i>");
    out << table.html() << "<p class=\"note\">" << note << "</p></section>\n";
}

// What the page cannot show, and why: the runs' own reasons.
void write_missing(const ReportInput& in, std::ostream& out) {
    std::vector<std::string> items;
    // Runs by the reason they give (their warnings), each reason said once with its runs.
    using RunsByReason = std::vector<std::pair<std::string, std::vector<int64_t>>>;
    RunsByReason no_energy, no_trace;
    size_t no_energy_runs = 0, no_trace_runs = 0;
    bool cpu_without_energy = false;
    const auto add = [](RunsByReason& to, const std::string& why, int64_t id) {
        auto at = std::find_if(to.begin(), to.end(), [&](const auto& e) { return e.first == why; });
        if (at == to.end())
            to.push_back({why, {id}});
        else
            at->second.push_back(id);
    };
    for (const store::RunRecord& r : in.runs) {
        std::string why;
        for (const std::string& w : r.warnings)
            why += (why.empty() ? "" : "; ") + w;
        if (!r.counter_energy_j) {
            add(no_energy, why, r.id);
            ++no_energy_runs;
            cpu_without_energy = cpu_without_energy || on_cpu_cores(r);
        }
        if (r.power_samples == 0) {
            add(no_trace, why, r.id);
            ++no_trace_runs;
        }
    }
    const auto list = [](const RunsByReason& reasons) {
        std::string text;
        for (size_t i = 0; i < reasons.size() && i < 10; ++i) {
            const std::vector<int64_t>& ids = reasons[i].second;
            const std::string runs = (ids.size() == 1 ? "run " : "runs ") + ids_text(ids);
            text += (i ? "; " : "") + html_escape(runs) +
                    (reasons[i].first.empty() ? "" : " (" + html_escape(reasons[i].first) + ")");
        }
        if (reasons.size() > 10)
            text += " and " + std::to_string(reasons.size() - 10) + " more reasons";
        return text;
    };
    if (!no_energy.empty()) {
        items.push_back("<b>Energy</b> (energy changes, energy per item, the Pareto front) for " +
                        std::to_string(no_energy_runs) + " of " + std::to_string(in.runs.size()) +
                        " runs: no board energy was measured: " + list(no_energy) + "." +
                        (cpu_without_energy
                             ? " On a CPU, energy comes from RAPL counters (Linux powercap), "
                               "which current kernels let only root read and virtual machines "
                               "often lack."
                             : ""));
    }
    if (!no_trace.empty()) {
        items.push_back("<b>Power traces</b> for " + std::to_string(no_trace_runs) + " of " +
                        std::to_string(in.runs.size()) +
                        " runs: no power samples were stored: " + list(no_trace) + ".");
    }
    if (in.findings.verdicts.empty() && !in.runs.empty()) {
        items.push_back(
            "<b>Layouts against the baseline</b>: no run has a sequential baseline "
            "(<code>--baseline sequential</code>).");
    }
    const bool on_cpu = std::any_of(in.runs.begin(), in.runs.end(), on_cpu_cores);
    if (in.findings.scaling.empty() && on_cpu) {
        items.push_back(
            "<b>Scaling with partition size</b>: the runs used CPU cores, not SMs; "
            "scaling plots need runs on a GPU's partitions.");
    }
    if (items.empty())
        return;
    out << "<section id=\"missing\"><h2>What this report cannot show</h2>\n<ul>\n";
    for (const std::string& i : items)
        out << "<li>" << i << "</li>\n";
    out << "</ul></section>\n";
}

void write_summary(const ReportInput& in, std::ostream& out) {
    const bool all_graphs = every_job_stepped_as_graph(in.findings);  // said in the verdict
    out << "<section id=\"findings\"><h2>Findings</h2>\n<ul>\n";
    bool any = false;
    for (const LayoutComparison& g : in.findings.layouts) {
        if (!g.energy_change_pct && !g.speedup)
            continue;
        any = true;
        out << "<li>Jobs <b>" << html_escape(shown_job_set(g.job_set, all_graphs)) << "</b> on <b>"
            << html_escape(comparison_label(g)) << "</b> against one after another on "
            << whole_device(job_set_on_cpu(in.findings, g.job_set))
            << ", for the same work: energy " << spread_html(g.energy_change_pct, percent)
            << ", throughput " << spread_html(g.speedup, times_text) << ".</li>\n";
    }
    for (const ParetoPoint& p : in.findings.pareto) {
        if (p.on_front && p.label != "sequential baseline") {
            out << "<li>On the throughput–energy Pareto front of <b>"
                << html_escape(shown_job_set(p.job_set, all_graphs))
                << "</b>: " << html_escape(p.label) << " (median "
                << times_text(p.relative_throughput) << " throughput, "
                << times_text(p.relative_energy) << " energy).</li>\n";
        }
    }
    for (const ScalingSeries& s : in.findings.scaling) {
        const ScalingPoint* best = nullptr;
        for (const ScalingPoint& p : s.points) {
            if (p.energy_per_item_j &&
                (!best || p.energy_per_item_j->median < best->energy_per_item_j->median))
                best = &p;
        }
        if (!best)
            continue;
        any = true;
        out << "<li><b>" << html_escape(s.workload) << "</b> ("
            << html_escape(s.mode + ", " + step_label(s.cuda_graph)) << "): least energy per item ("
            << html_escape(s.item_unit) << ") alone on " << best->sms << " SMs ("
            << html_escape(best->backend + " " + best->partition)
            << "): " << spread_html(best->energy_per_item_j) << " J.</li>\n";
    }
    if (!any)
        out << "<li>No stored run has a figure to report yet.</li>\n";
    out << "</ul></section>\n";
}

// Which idle state each run's static power came from (telemetry/idle_baseline.h), and the deep
// idle the probes saw: the H200 idles at ~130 W with its clock up and ~80 W once it dropped.
void write_idle_states(const ReportInput& in, std::ostream& out) {
    struct State {
        std::vector<int64_t> ids;
        std::vector<double> watts;
    };
    std::map<std::string, State> states;  // by state text
    State deep;
    for (const store::RunRecord& r : in.runs) {
        if (r.idle_power_w) {
            State& s = states[telemetry::state_text(r.idle_state.value_or(""))];
            s.ids.push_back(r.id);
            s.watts.push_back(*r.idle_power_w);
        }
        if (r.deep_idle_power_w) {
            deep.ids.push_back(r.id);
            deep.watts.push_back(*r.deep_idle_power_w);
        }
    }
    const auto range = [](const State& s) {
        const auto [lo, hi] = std::minmax_element(s.watts.begin(), s.watts.end());
        return fmt::format("{:.0f}–{:.0f} W", *lo, *hi);
    };
    for (const auto& [text, s] : states) {
        out << "<li><b>Idle power</b> split among the jobs (by partition size): "
            << html_escape(text) << ", " << range(s) << " (runs " << ids_text(s.ids) << ")</li>\n";
    }
    if (!deep.ids.empty()) {
        out << "<li><b>Deep idle</b> (SM clock down, seen in the idle probes): " << range(deep)
            << " (runs " << ids_text(deep.ids) << ")</li>\n";
    }
}

void write_method(const ReportInput& in, std::ostream& out) {
    // Each way of attributing energy once, with how many runs used it: the runs' own numbers
    // (idle power, samples) are in their rows, so here they read "…".
    static const std::regex kNumber("[0-9]+(\\.[0-9]+)?");
    std::vector<std::pair<std::string, size_t>> methods;  // first seen first
    for (const store::RunRecord& r : in.runs) {
        if (r.attribution_method.empty())
            continue;
        const std::string method = std::regex_replace(r.attribution_method, kNumber, "…");
        auto at = std::find_if(methods.begin(), methods.end(),
                               [&](const auto& m) { return m.first == method; });
        if (at == methods.end())
            methods.push_back({method, 1});
        else
            ++at->second;
    }
    const bool sm_shares = std::any_of(in.runs.begin(), in.runs.end(), [](const auto& r) {
        const partition::BackendTraits* b = partition::find_backend(r.backend);
        return b && b->partitions == partition::PartitionSource::kSmShares;
    });
    out << "<section id=\"method\"><h2>How the numbers are made</h2>\n";
    if (sm_shares) {
        out << "<p class=\"caveat\"><b>SM partitions emulate MIG.</b> Runs on the "
               "<code>green</code> (CUDA green contexts) and <code>mps</code> backends give each "
               "job the SM count of a MIG profile and cap its memory, but there is no L2-cache or "
               "memory-bandwidth isolation: jobs disturb each other more than on real MIG "
               "instances.</p>\n";
    }
    out << "<ul><li><b>Energy</b>: the board energy counter's delta over the measurement "
           "window (steady-state window, or the makespan of fixed work); the integrated power "
           "trace is a cross-check (its disagreement is in the tables).</li>\n"
        << "<li><b>Throughput</b>: items in the window over the job's summed step times, in the "
           "workload's unit.</li>\n"
        << "<li><b>Against the sequential baseline</b>: the work each job did in the layout's "
           "window is priced at its own throughput and energy per item alone on the whole GPU; "
           "energy change = (layout − baseline) / baseline, speedup = baseline time / layout "
           "time.</li>\n"
        << "<li><b>Spread</b>: every figure is the median over repetitions, with n and the "
           "min – max range. A value that was not measured is shown as "
        << kMissing << " with the reason, never as 0.</li>\n";
    for (const auto& [method, runs] : methods) {
        out << "<li><b>Attribution</b> (" << runs << (runs == 1 ? " run" : " runs")
            << "): " << html_escape(method) << "</li>\n";
    }
    write_idle_states(in, out);
    out << "</ul></section>\n";
}

void write_scaling(const ReportInput& in, std::ostream& out) {
    out << "<section id=\"scaling\"><h2>Scaling with partition size</h2>\n"
        << "<p>Each job alone: single-job runs on one partition, and each job of a sequential "
           "run on the whole GPU. Energy per item is the board's energy over the window divided "
           "by the job's items, idle partitions included.</p>\n";
    write_figures(in, Section::kScaling, out);
    if (in.findings.scaling.empty()) {
        out << "<p>No single-job or sequential runs.</p></section>\n";
        return;
    }
    Table t({"workload", "mode", "batch", "SMs", "partition", "backend", "runs",
             "throughput (items/s)", "energy per item (J)", "speed of whole GPU's",
             "energy per item of whole GPU's", "measured (s)", "notes"});
    for (const ScalingSeries& s : in.findings.scaling) {
        for (const ScalingPoint& p : s.points) {
            t.row({html_escape(s.workload), html_escape(s.mode + ", " + step_label(s.cuda_graph)),
                   s.batch ? std::to_string(*s.batch) : "default", std::to_string(p.sms),
                   html_escape(p.partition), html_escape(p.backend), ids_text(p.run_ids),
                   spread_html(p.items_per_s) + " " + html_escape(s.item_unit) + "/s",
                   spread_html(p.energy_per_item_j), ratio_html(p.speed_of_whole),
                   ratio_html(p.energy_per_item_of_whole), spread_html(p.measured_s),
                   notes_html(p.notes)},
                  {3, 7, 8, 9, 10, 11});
        }
    }
    out << t.html() << "<p class=\"meta\">measured: the job's seconds in steps inside its window."
        << "</p></section>\n";
}

void write_layouts(const ReportInput& in, std::ostream& out) {
    out << "<section id=\"layouts\"><h2>Layouts against the sequential baseline</h2>\n";
    write_figures(in, Section::kLayouts, out);
    if (in.findings.layouts.empty()) {
        out << "<p>No run with a sequential baseline (<code>migscope run --baseline "
               "sequential --db</code>).</p></section>\n";
        return;
    }
    Table t({"jobs", "backend", "layout", "mode", "runs (baselines)", "energy change", "speedup",
             "energy (J)", "baseline energy, same work (J)", "window (s)",
             "average power (W): run / baseline", "SM clock (MHz): run / baseline",
             "counter vs trace (%)", "attribution", "notes"});
    const bool all_graphs = every_job_stepped_as_graph(in.findings);  // said in the verdict
    for (const LayoutComparison& g : in.findings.layouts) {
        std::string ids;
        for (const Repetition& r : g.repetitions) {
            ids += (ids.empty() ? "" : ", ") + std::to_string(r.run_id) + " (" +
                   std::to_string(r.baseline_id) + ")";
        }
        t.row(
            {html_escape(shown_job_set(g.job_set, all_graphs)), html_escape(g.backend),
             html_escape(g.layout),
             html_escape(g.run_mode == "work" ? "fixed work: " + g.work : g.run_mode), ids,
             spread_html(g.energy_change_pct, percent), spread_html(g.speedup, times_text),
             spread_html(g.run_energy_j), spread_html(g.baseline_energy_j), spread_html(g.window_s),
             spread_html(g.run_power_w) + " / " + spread_html(g.baseline_power_w),
             spread_html(g.run_sm_clock_mhz) + " / " + spread_html(g.baseline_sm_clock_mhz),
             spread_html(g.disagreement_pct), html_escape(g.attribution_method),
             notes_html(g.notes)},
            {5, 6, 7, 8, 9, 10, 11, 12});
    }
    out << t.html() << "</section>\n";
}

void write_pareto(const ReportInput& in, std::ostream& out) {
    out << "<section id=\"pareto\"><h2>Throughput–energy Pareto front</h2>\n";
    write_figures(in, Section::kPareto, out);
    if (in.findings.pareto.empty()) {
        out << "<p>No layout with both a speedup and an energy change.</p></section>\n";
        return;
    }
    Table t({"jobs", "layout", "throughput vs sequential (median)",
             "energy vs sequential, same work (median)", "on the front"});
    const bool all_graphs = every_job_stepped_as_graph(in.findings);  // said in the verdict
    for (const ParetoPoint& p : in.findings.pareto) {
        t.row({html_escape(shown_job_set(p.job_set, all_graphs)), html_escape(p.label),
               times_text(p.relative_throughput), times_text(p.relative_energy),
               p.on_front ? "yes" : "no"},
              {2, 3}, p.on_front ? "front" : "");
    }
    out << t.html() << "</section>\n";
}

void write_traces(const ReportInput& in, std::ostream& out) {
    out << "<section id=\"traces\"><h2>Power traces</h2>\n<p>The latest repetition of each "
           "layout (at most "
        << kMaxTracedLayouts << ") next to its sequential baseline.</p>\n";
    write_figures(in, Section::kTraces, out);
    out << "</section>\n";
}

void write_runs(const ReportInput& in, std::ostream& out) {
    out << "<section id=\"runs\"><h2>Runs</h2>\n";
    Table t({"id", "started (UTC)", "role", "backend", "layout", "mode", "jobs", "window (s)",
             "energy (J, counter)", "trace energy (J)", "samples", "disagreement (%)",
             "average power (W)", "status", "label", "warnings"});
    // A host run's total (report/host_total.h) follows its last GPU row.
    const HostRuns hosts = host_runs(in.runs);
    for (const store::RunRecord& r : in.runs) {
        std::string jobs;
        for (const store::JobRecord& j : r.jobs)
            jobs += (jobs.empty() ? "" : "<br>") + html_escape(j.name + " on " + j.partition);
        t.row({std::to_string(r.id), html_escape(r.started_at), html_escape(role_text(r)),
               html_escape(r.backend), r.layout ? html_escape(*r.layout) : "–", html_escape(r.mode),
               jobs, short_number(r.window_s), optional_html(r.counter_energy_j),
               optional_html(r.trace_energy_j), std::to_string(r.power_samples),
               optional_html(r.disagreement_pct), optional_html(r.average_power_w),
               html_escape(status_summary(r)), html_escape(r.label), notes_html(r.warnings)},
              {0, 7, 8, 9, 10, 11, 12});
        if (const auto* host = host_run_ending_at(hosts, r)) {
            const auto& [host_id, rows] = *host;
            const HostTotals total = host_totals(rows);
            t.row(
                {"", "", html_escape(host_total_role(host_id, total)), "", "", html_escape(r.mode),
                 std::to_string(total.jobs) + " jobs (summed)", short_number(total.window_s),
                 optional_html(total.energy_j), kMissing, "", kMissing, kMissing,
                 html_escape(status_summary(rows)), "", html_escape(host_total_note(total))},
                {0, 7, 8, 9, 10, 11, 12}, "host");
        }
    }
    out << t.html() << "</section>\n";
}

void write_provenance(const ReportInput& in, std::ostream& out) {
    // Runs grouped by where they came from.
    std::map<std::vector<std::string>, std::vector<int64_t>> groups;
    for (const store::RunRecord& r : in.runs) {
        const store::Provenance& p = r.provenance;
        groups[{p.migscope_version, p.migscope_commit, p.gpu_name.value_or("–"),
                p.gpu_uuid.value_or("–"), p.driver_version.value_or("–"),
                p.cuda_driver_version.value_or("–"), p.torch_version.value_or("–"),
                p.mig_mode.value_or("–"),
                p.power_limit_w ? short_number(*p.power_limit_w) + " W" : "–"}]
            .push_back(r.id);
    }
    out << "<section id=\"provenance\"><h2>Provenance</h2>\n";
    Table t({"runs", "migscope", "commit", "GPU", "GPU UUID", "driver", "CUDA", "torch", "MIG mode",
             "power limit"});
    for (const auto& [fields, ids] : groups) {
        std::vector<std::string> cells = {ids_text(ids)};
        for (const std::string& f : fields)
            cells.push_back(html_escape(f));
        t.row(cells);
    }
    out << t.html() << "</section>\n";
}

}  // namespace

std::string html_escape(const std::string& text) {
    std::string out;
    for (char c : user_text::as_utf8(text)) {  // a stored name that is not UTF-8: \xNN
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

void write_html(const ReportInput& in, std::ostream& out) {
    std::string span;
    if (!in.runs.empty()) {
        span = ", " + in.runs.front().started_at + " to " + in.runs.back().started_at;
    }
    write_page_start(out, "migscope report: " + in.source, in.figures.size());
    out << "<h1>migscope report</h1>\n<p class=\"meta\">" << in.runs.size() << " runs from <code>"
        << html_escape(in.source) << "</code>" << html_escape(span) << "; made by "
        << html_escape(in.generator) << ". Plots drawn in the page by Chart.js (embedded). "
        << html_escape(in.export_note) << "</p>\n";
    write_verdict(in, out);
    write_missing(in, out);
    write_summary(in, out);
    write_method(in, out);
    write_scaling(in, out);
    write_layouts(in, out);
    write_pareto(in, out);
    write_traces(in, out);
    write_runs(in, out);
    write_provenance(in, out);
    nlohmann::json figures = nlohmann::json::array();
    for (const ReportFigure& f : in.figures)
        figures.push_back(chart_data(f.figure.plot, canvas_id(f.figure)));
    write_page_end(out, figures);
}

}  // namespace migscope::report
