// The Markdown report: verdict, layouts against one after another, scaling, from the findings.
#include "report/markdown.h"

#include <functional>
#include <set>

#include "report/table.h"

namespace migscope::report {
namespace {

const std::string kMissing = "–";

// "median (n 3: min – max)"; "–" when nothing was measured.
std::string spread_text(const std::optional<Spread>& s,
                        const std::function<std::string(double)>& format = short_number) {
    if (!s)
        return kMissing;
    return format(s->median) + " " + spread_range_text(*s, format);
}

std::string percent_text(double v) {
    return signed_change(v);
}

// "0.21×"; "–" when missing.
std::string ratio_text(std::optional<double> ratio) {
    return ratio ? times_text(*ratio) : kMissing;
}

std::string kilojoules(double j) {
    return short_number(j / 1000);
}

void table_row(const std::vector<std::string>& cells, std::ostream& out) {
    out << '|';
    for (const std::string& c : cells)
        out << ' ' << c << " |";
    out << '\n';
}

// The header row and its alignment row; `numeric` columns (by index) are right-aligned.
void table_head(const std::vector<std::string>& headers, const std::set<size_t>& numeric,
                std::ostream& out) {
    table_row(headers, out);
    out << '|';
    for (size_t i = 0; i < headers.size(); ++i)
        out << (numeric.count(i) ? "---:|" : "---|");
    out << '\n';
}

// One verdict's cell, worded as the HTML page words it.
std::string verdict_cell(const std::optional<Verdict>& verdict, bool on_cpu) {
    if (!verdict)
        return kMissing;
    const Verdict& v = *verdict;
    const std::string answer = "**" + verdict_answer(v, on_cpu) + "**";
    if (!v.figure) {
        return answer + ": " +
               (v.objective == Objective::kThroughput ? "no speedup" : "no energy") +
               " measured (" + markdown_escape(v.missing) + ")";
    }
    const std::string figure = v.objective == Objective::kThroughput
                                   ? spread_text(v.figure, times_text)
                                   : spread_text(v.figure, percent_text) + " energy";
    const std::string layout = markdown_escape(v.best_layout);
    const std::string unclear = v.clear || v.tie ? "" : " *not clear*";
    if (on_cpu) {
        return answer +
               (v.partition ? " on split cores: " + figure : " (side by side: " + figure + ")") +
               unclear;
    }
    if (v.partition && !v.tie)
        return answer + " as " + layout + ": " + figure + unclear;
    return answer + " (best layout " + layout + ": " + figure + ")" + unclear;
}

// The answer first: a row per job set and kind of measurement, a cell per objective.
void write_verdicts(const Findings& f, std::ostream& out) {
    out << "## Verdict\n\n";
    if (f.verdicts.empty()) {
        out << "No verdict: no stored run has a sequential baseline to compare with.\n\n";
        return;
    }
    const VerdictSummary summary = summarise_verdicts(f);
    table_head({"jobs", "measured as", "for the most throughput", "for the most energy savings"},
               {}, out);
    for (const VerdictRow& row : summary.rows) {
        table_row({"**" + markdown_escape(row.job_set) + "**",
                   std::string(row.fixed_work ? "fixed work" : "steady windows") +
                       (row.on_cpu ? ", CPU cores" : ""),
                   verdict_cell(row.throughput, row.on_cpu), verdict_cell(row.energy, row.on_cpu)},
                  out);
    }
    out << '\n' << verdict_note(summary) << "\n\n";
}

void write_layouts(const Findings& f, std::ostream& out) {
    out << "## Layouts against the same jobs one after another\n\n";
    if (f.layouts.empty()) {
        out << "No run with a sequential baseline.\n\n";
        return;
    }
    table_head({"jobs", "layout", "work", "runs (baselines)", "energy change", "speedup",
                "energy (kJ)", "one after another, same work (kJ)", "window (s)",
                "power (W): run / one after another", "SM clock (MHz): run / one after another"},
               {4, 5, 6, 7, 8, 9, 10}, out);
    for (const LayoutComparison& g : f.layouts) {
        std::string ids;
        for (const Repetition& r : g.repetitions)
            ids += (ids.empty() ? "" : ", ") + std::to_string(r.run_id) + " (" +
                   std::to_string(r.baseline_id) + ")";
        table_row({markdown_escape(g.job_set), markdown_escape(g.backend + " " + g.layout),
                   markdown_escape(g.run_mode == "work" ? "fixed: " + g.work : g.work), ids,
                   spread_text(g.energy_change_pct, percent_text),
                   spread_text(g.speedup, times_text), spread_text(g.run_energy_j, kilojoules),
                   spread_text(g.baseline_energy_j, kilojoules), spread_text(g.window_s),
                   spread_text(g.run_power_w) + " / " + spread_text(g.baseline_power_w),
                   spread_text(g.run_sm_clock_mhz) + " / " + spread_text(g.baseline_sm_clock_mhz)},
                  out);
    }
    out << '\n';
}

void write_scaling(const Findings& f, std::ostream& out) {
    out << "## Each job alone on each partition size\n\n";
    if (f.scaling.empty()) {
        out << "No single-job or sequential runs.\n\n";
        return;
    }
    table_head({"workload", "mode", "batch", "steps", "SMs", "partition", "backend", "runs",
                "throughput (items/s)", "energy per item (J)", "speed of whole GPU's",
                "energy per item of whole GPU's"},
               {2, 4, 8, 9, 10, 11}, out);
    for (const ScalingSeries& s : f.scaling) {
        for (const ScalingPoint& p : s.points) {
            std::string ids;
            for (int64_t id : p.run_ids)
                ids += (ids.empty() ? "" : ", ") + std::to_string(id);
            table_row(
                {markdown_escape(s.workload), markdown_escape(s.mode),
                 s.batch ? std::to_string(*s.batch) : "default", step_label(s.cuda_graph),
                 std::to_string(p.sms), markdown_escape(p.partition), markdown_escape(p.backend),
                 ids, spread_text(p.items_per_s) + " " + markdown_escape(s.item_unit) + "/s",
                 spread_text(p.energy_per_item_j), ratio_text(p.speed_of_whole),
                 ratio_text(p.energy_per_item_of_whole)},
                out);
        }
    }
    out << '\n';
}

}  // namespace

std::string markdown_escape(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '\\':
            case '`':
            case '*':
            case '_':
            case '[':
            case ']':
            case '<':
            case '>':
            case '|':
            case '~':
            case '&':
            case '#':
            case '!':
                out += '\\';
                out += c;
                break;
            case '\n':
            case '\r':
                out += ' ';
                break;
            default:
                out += c;
        }
    }
    return out;
}

void write_markdown(const Findings& findings, const std::string& source,
                    const std::string& generator, std::ostream& out) {
    out << "*Drawn by " << markdown_escape(generator) << " (`migscope report --format markdown`) "
        << "from the results store " << markdown_escape(source)
        << ". Each figure: the median over repetitions, with n and the min – max range; energy "
           "is the board's counter over the window (or makespan); \"one after another\" prices "
           "the same work at each job's own speed and energy per item alone on the whole GPU.*"
           "\n\n";
    write_verdicts(findings, out);
    write_layouts(findings, out);
    write_scaling(findings, out);
}

}  // namespace migscope::report
