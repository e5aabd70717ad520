// The stream simulation's HTML page, built from the report's page parts and chart data.
#include "stream/stream_page.h"

#include <algorithm>

#include "core/user_text.h"
#include "report/chart_data.h"
#include "report/html.h"
#include "report/html_page.h"
#include "report/table.h"
#include "stream/stream_charts.h"

namespace migscope::stream {
namespace {

using report::html_escape;
using report::short_number;

// "1234 (1100–1400)": the figure in `scale`, with its interval when known.
std::string with_interval(double value, const plan::Bounds& b, bool known, double scale) {
    std::string text = short_number(value / scale);
    if (known) {
        text += " <span class=\"spread\">(" + short_number(b.lo / scale) + "–" +
                short_number(b.hi / scale) + ")</span>";
    }
    return text;
}

void write_comparison(const StreamPageInput& in, const PolicyComparison& compared,
                      const ChartUnits& u, std::ostream& out) {
    const auto& best = chosen_policy(compared, "", in.setup.objective);
    const std::string e = u.energy_name;
    report::HtmlTable t(
        {"policy", "energy (" + e + ")", "mean completion (" + u.time_name + ")",
         "p95 completion (" + u.time_name + ")", "tardiness (" + u.tardiness_name + ")",
         "late jobs", "busy", "layout changes",
         "E + " + short_number(in.setup.objective.tardiness_weight_w) + " W × T (" + e + ")"});
    for (const auto& [name, est] : compared.policies) {
        const StreamResult& r = est.point;
        const bool k = est.known;
        t.row({html_escape(r.policy) + (&best.second == &est ? " <b>(best)</b>" : ""),
               with_interval(r.energy_j, est.energy_j, k, u.energy_j),
               with_interval(r.mean_completion_s, est.mean_completion_s, k, u.time_s),
               with_interval(r.p95_completion_s, est.p95_completion_s, k, u.time_s),
               with_interval(r.tardiness_s, est.tardiness_s, k, u.tardiness_s),
               std::to_string(r.late_jobs), short_number(100 * r.busy_fraction) + " %",
               std::to_string(r.reconfigurations),
               with_interval(energy_tardiness_j(r, in.setup.objective.tardiness_weight_w),
                             est.energy_tardiness_j, k, u.energy_j)},
              {1, 2, 3, 4, 5, 6, 7, 8}, &best.second == &est ? "front" : "");
    }
    out << "<section id=\"policies\"><h2>Policies compared</h2>\n" << t.html();
    const bool known = !compared.policies.empty() && compared.policies.front().second.known;
    out << "<p class=\"meta\">Completion: end − arrival. Tardiness: late seconds summed over the "
           "jobs with a deadline. E + W × T: the combined objective. <b>(best)</b>: the policy "
           "that scores best on the objective ("
        << html_escape(in.setup.objective_name) << "). ";
    if (known) {
        out << "In brackets, each figure's interval: the stream simulated with every job at the "
               "slow and at the fast end of the model's known error ("
            << html_escape(user_text::as_utf8(in.setup.error_origin)) << ").";
    } else if (!compared.policies.empty()) {
        out << "No intervals: " << html_escape(compared.policies.front().second.unknown_why) << ".";
    }
    out << " The online policy changes layouts for a predicted gain over "
        << html_escape(compared.online_min_gain.text()) << " ("
        << html_escape(compared.online_min_gain_from) << ").</p></section>\n";
}

void write_changes(const PolicyComparison& compared, const ChartUnits& u, std::ostream& out) {
    out << "<section id=\"changes\"><h2>Layout changes</h2>\n";
    bool any = false;
    for (const auto& [name, est] : compared.policies) {
        const StreamResult& r = est.point;
        const std::vector<LayoutEvent> changes = layout_changes(r);
        // Where the GPUs start (each GPU's first layout), as "LAYOUT on N GPUs".
        std::vector<std::pair<std::string, size_t>> starts;
        std::vector<bool> started;
        for (const LayoutEvent& l : r.layouts) {
            if (l.gpu >= started.size())
                started.resize(l.gpu + 1, false);
            if (started[l.gpu])
                continue;
            started[l.gpu] = true;
            auto at = std::find_if(starts.begin(), starts.end(),
                                   [&](const auto& s) { return s.first == l.layout; });
            if (at == starts.end())
                starts.push_back({l.layout, 1});
            else
                ++at->second;
        }
        std::string starts_text;
        for (const auto& [layout, gpus] : starts) {
            starts_text += (starts_text.empty() ? "" : "; ") + html_escape(layout) + " on " +
                           std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
        }
        out << "<p><b>" << html_escape(r.policy) << "</b> starts with " << starts_text << "; "
            << changes.size() << (changes.size() == 1 ? " change" : " changes")
            << (changes.empty() ? "." : ":") << "</p>\n";
        if (changes.empty())
            continue;
        any = true;
        report::HtmlTable t({"time (" + u.time_name + ")", "GPU", "new layout"});
        for (size_t i = 0; i < changes.size() && i < kMaxListedChanges; ++i) {
            t.row({short_number(changes[i].at_s / u.time_s), std::to_string(changes[i].gpu),
                   html_escape(changes[i].layout)},
                  {0, 1});
        }
        out << t.html();
        if (changes.size() > kMaxListedChanges) {
            out << "<p class=\"meta\">… and " << changes.size() - kMaxListedChanges
                << " more (every one is a marker in the plots, and in <code>--format "
                   "json</code>).</p>\n";
        }
    }
    if (!any)
        out << "<p>No policy changed a layout.</p>\n";
    out << "</section>\n";
}

void write_late_jobs(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                     const PolicyComparison& compared, const ChartUnits& u, std::ostream& out) {
    out << "<section id=\"late\"><h2>The latest jobs</h2>\n<p>Per policy, its " << kListedLateJobs
        << " jobs furthest past their deadline.</p>\n";
    const std::string t_unit = " (" + u.time_name + ")";
    report::HtmlTable t({"policy", "job", "arrival" + t_unit, "deadline" + t_unit, "end" + t_unit,
                         "late by (" + u.tardiness_name + ")", "last partition"});
    size_t rows = 0;
    for (const auto& [name, est] : compared.policies) {
        const StreamResult& r = est.point;
        std::vector<std::pair<double, size_t>> late;  // (late by, stream index)
        for (size_t i = 0; i < jobs.size() && i < r.jobs.size(); ++i) {
            if (jobs[i].deadline_s && r.jobs[i].end_s > *jobs[i].deadline_s)
                late.push_back({r.jobs[i].end_s - *jobs[i].deadline_s, i});
        }
        std::stable_sort(late.begin(), late.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        for (size_t k = 0; k < late.size() && k < kListedLateJobs; ++k) {
            const size_t i = late[k].second;
            const JobOutcome& o = r.jobs[i];
            t.row({html_escape(r.policy), html_escape(problem.jobs[jobs[i].job].request.name),
                   short_number(jobs[i].arrival_s / u.time_s),
                   short_number(*jobs[i].deadline_s / u.time_s), short_number(o.end_s / u.time_s),
                   short_number(late[k].first / u.tardiness_s),
                   html_escape("GPU " + std::to_string(o.gpu) + " " + o.partition)},
                  {2, 3, 4, 5});
            ++rows;
        }
    }
    out << (rows ? t.html() : "<p>No job ended after its deadline.</p>\n") << "</section>\n";
}

}  // namespace

void write_stream_page(const StreamPageInput& in, const plan::Problem& problem,
                       const std::vector<StreamJob>& jobs, const PolicyComparison& compared,
                       std::ostream& out) {
    const ChartUnits units = chart_units(compared);
    std::vector<report::Plot> plots = stream_plots(compared, units);
    plots.erase(std::remove_if(plots.begin(), plots.end(),
                               [](const report::Plot& p) { return p.series.empty(); }),
                plots.end());
    const std::string trace_text = user_text::as_utf8(in.setup.trace_path);
    report::write_page_start(out, "migscope stream simulation: " + trace_text, plots.size());
    out << "<h1>migscope stream simulation</h1>\n<p class=\"meta\"><code>"
        << html_escape(trace_text) << "</code>"
        << (in.trace_source.empty() ? "" : " (" + html_escape(in.trace_source) + ")") << ": "
        << jobs.size() << " jobs on " << in.setup.gpus << " × " << html_escape(in.setup.gpu_model)
        << ", objective " << html_escape(in.setup.objective_name) << "; a layout change costs "
        << short_number(in.setup.reconfiguration.orchestrator_s) << " s + "
        << short_number(in.setup.reconfiguration.per_instance_s)
        << " s per instance. Simulated on the planner's model with "
        << html_escape(user_text::as_utf8(in.setup.profiles_origin)) << "; made by "
        << html_escape(in.generator) << ". Plots drawn in the page by Chart.js (embedded).</p>\n";
    write_comparison(in, compared, units, out);

    out << "<section id=\"over-time\"><h2>Over time</h2>\n";
    for (const report::Plot& p : plots) {
        const bool energy = p.name == kEnergyPlot;
        out << report::figure_html(
            "fig-" + p.name, "plot-" + p.name, p.title,
            std::string(energy ? "Energy drawn from the start: every GPU's idle power and the "
                                 "jobs' dynamic energy."
                               : "Late seconds accrued: a late job adds from its deadline on, up "
                                 "to its end.") +
                " Triangles and dashed lines: layout changes (hover for the GPU and its new "
                "layout). The bar at each line's end: the figure's interval.");
    }
    if (plots.empty())
        out << "<p>No figures over time: the simulation kept no series.</p>\n";
    out << "</section>\n";
    write_changes(compared, units, out);
    write_late_jobs(problem, jobs, compared, units, out);
    out << "<section id=\"method\"><h2>How the numbers are made</h2>\n<p>A discrete-event "
           "simulation on the planner's model (docs/streams.md): each job's speed, start-up and "
           "power on each partition from the profiles; a layout change stops the GPU's jobs, "
           "which keep their progress and pay their start-up again, and blocks the GPU for the "
           "orchestrator's and the instances' seconds at idle power. The figures are "
           "predictions, not measurements.</p></section>\n";

    nlohmann::json figures = nlohmann::json::array();
    for (const report::Plot& p : plots)
        figures.push_back(report::chart_data(p, "plot-" + p.name));
    report::write_page_end(out, figures);
}

}  // namespace migscope::stream
