// Printers for run results: JSON and tables over the same fields.
#include "runner/run_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "report/json_value.h"
#include "report/record_output.h"
#include "report/table.h"
#include "runner/comparison.h"

namespace migscope::runner {
namespace {

using report::cell_number;
using report::cell_si;

using nlohmann::json;
using report::Align;

// An optional value in another unit (J → kJ, s → ms).
std::optional<double> scaled(const std::optional<double>& v, double factor) {
    return v ? std::optional<double>(*v * factor) : std::nullopt;
}

}  // namespace

json run_json(const RunResult& run, const RecordContext& context) {
    // The stored record's fields (one schema with `migscope results`), without the trace
    // (trace.csv holds it), plus what only a fresh run knows: method texts and job logs.
    store::RunRecord record = to_run_record(run, context);
    record.trace.clear();
    json j = report::record_json(record);
    j.erase("id");  // assigned by a store, not here
    j["window_meaning"] = run.mode == RunMode::kDuration
                              ? "steady-state window (summed over jobs for sequential)"
                              : "makespan of the fixed work (summed over jobs for sequential)";
    j["energy"]["method"] =
        "board energy counter delta over the window(s); power trace integrated (trapezoid) as a "
        "cross-check";
    j["energy"]["duration_s"] = run.energy.duration_s;
    j["energy"]["trace_is_one_second_average"] = run.energy.trace_is_one_second_average;
    // Each measurement window on the wall clock, so other recorders (an exporter's scrapes) can
    // be read over the same seconds.
    j["windows_unix_s"] = json::array();
    for (const auto& [open_s, close_s] : run.windows_s)
        j["windows_unix_s"].push_back(
            {run.trace_origin_unix_s + open_s, run.trace_origin_unix_s + close_s});
    for (size_t k = 0; k < run.jobs.size(); ++k) {
        j["jobs"][k]["stderr_log"] = run.jobs[k].stderr_path;
        if (const auto after = run.jobs[k].partition.after_job)
            j["jobs"][k]["after_job"] = *after;  // queued on that job's partition
        j["jobs"][k]["without_power_w"] = report::maybe(run.jobs[k].without_power_w);
        j["jobs"][k]["without_sm_clock_mhz"] = report::maybe(run.jobs[k].without_sm_clock_mhz);
        if (!run.jobs[k].without_items_per_s.empty()) {
            json speeds = json::array();  // by job index, null for this job
            for (const auto& items_per_s : run.jobs[k].without_items_per_s)
                speeds.push_back(report::maybe(items_per_s));
            j["jobs"][k]["without_items_per_s"] = speeds;
        }
    }
    const auto idle_state = [](const std::optional<telemetry::IdlePower>& p) -> json {
        if (!p)
            return nullptr;
        return {{"mean_w", p->mean_w},
                {"min_w", p->min_w},
                {"max_w", p->max_w},
                {"samples", p->samples}};
    };
    j["idle"] = {{"clocks_up", idle_state(run.idle.clocks_up)},
                 {"deep", idle_state(run.idle.deep)},
                 {"no_clock", idle_state(run.idle.no_clock)},
                 {"clock_threshold_mhz", run.idle.clock_threshold_mhz},
                 {"used", run.idle.static_power() ? json(to_string(run.idle.static_power()->first))
                                                  : json(nullptr)}};
    return j;
}

void print_run_table(const RunResult& run, const std::string& title, std::ostream& out) {
    out << title << '\n';
    // The stored fields, with each queued job's partition naming the job it follows.
    store::RunRecord record = to_run_record(run, RecordContext{});
    for (size_t k = 0; k < run.jobs.size(); ++k) {
        if (const auto after = run.jobs[k].partition.after_job)
            record.jobs[k].partition += " after " + run.jobs.at(*after).spec.name;
    }
    report::print_job_table(record.jobs, out);
    const auto& e = run.energy;
    out << fmt::format("  {:<12} {:.2f} s{}",
                       run.mode == RunMode::kDuration ? "window" : "makespan", run.window_s,
                       partition::traits(run.backend).one_job_at_a_time
                           ? " (the jobs' own windows, summed)"
                           : "")
        << '\n';
    out << "  energy       " << cell_number(scaled(e.counter_energy_j, 1e-3), 2, "kJ")
        << " (board counter)   trace " << cell_number(scaled(e.trace_energy_j, 1e-3), 2, "kJ")
        << " (" << e.power_samples << " samples, disagreement "
        << cell_number(e.disagreement_pct, 2, "%") << ")\n";
    out << "  power        " << cell_number(e.average_power_w, 0, "W") << " average, idle "
        << cell_number(run.idle_power_w, 0, "W") << "; SM clock "
        << cell_number(run.sm_clock_mhz, 0, "MHz") << " (median in the window)\n";
    if (const std::string idle = run.idle.describe(); !idle.empty())
        out << "  idle         " << idle << " (before and after the jobs)\n";
    for (const JobResult& r : run.jobs) {
        if (!r.without_power_w)
            continue;
        out << "  probe        without " << r.spec.name << ": "
            << cell_number(r.without_power_w, 0, "W") << " board power";
        if (r.without_sm_clock_mhz)
            out << ", SM clock " << cell_number(r.without_sm_clock_mhz, 0, "MHz");
        for (size_t k = 0; k < r.without_items_per_s.size() && k < run.jobs.size(); ++k) {
            if (const auto& items_per_s = r.without_items_per_s[k])
                out << "; " << run.jobs[k].spec.name << " " << cell_si(items_per_s) << " "
                    << run.jobs[k].item_unit.value_or("items") << "/s";
        }
        out << '\n';
    }
    if (run.aggregate_normalised_throughput)
        out << "  aggregate normalised throughput "
            << cell_number(run.aggregate_normalised_throughput, 2)
            << " (the jobs' work at their speeds alone on the whole device, over the "
            << (run.mode == RunMode::kDuration ? "window" : "makespan") << ")\n";
    if (!run.attribution_method.empty())
        out << "  attribution  " << run.attribution_method << '\n';
    // How the built-in workloads stepped: replayed CUDA graphs or eagerly (worker-protocol.md).
    std::map<std::string, std::string> jobs_by_step_mode;
    for (const JobResult& r : run.jobs) {
        if (r.step_mode) {
            std::string& names = jobs_by_step_mode[*r.step_mode];
            names += (names.empty() ? "" : ", ") + r.spec.name;
        }
    }
    if (!jobs_by_step_mode.empty()) {
        out << "  steps       ";
        for (const auto& [mode, names] : jobs_by_step_mode)
            out << ' ' << mode << " (" << names << ')';
        out << '\n';
    }
    for (const std::string& w : run.warnings)
        out << "  warning: " << w << '\n';
    for (const std::string& w : e.warnings)
        out << "  warning: " << w << '\n';
    if (run.interrupted)
        out << "  interrupted: partial results\n";
}

json comparison_json(const Comparison& c) {
    return {{"method",
             "the partitioned run's work (each job's items) priced at each job's own "
             "throughput and energy per item alone on the whole device"},
            {"run_energy_j", report::maybe(c.run_energy_j)},
            {"baseline_energy_j", report::maybe(c.baseline_energy_j)},
            {"energy_change_pct", report::maybe(c.energy_change_pct)},
            {"run_time_s", report::maybe(c.run_time_s)},
            {"baseline_time_s", report::maybe(c.baseline_time_s)},
            {"speedup", report::maybe(c.speedup)}};
}

void print_comparison(const RunResult& run, const RunResult& base, std::ostream& out) {
    const auto change = [](std::optional<double> a, std::optional<double> b) -> std::string {
        if (!a || !b || *b == 0)
            return "-";
        return report::signed_change(100.0 * (*a - *b) / *b);
    };
    const Comparison c = compare_with_baseline(run, base);
    out << "Against the sequential baseline, for the same work (each job's items, priced at its "
           "own throughput and energy per item alone on the whole device):\n";
    out << "  energy   " << cell_number(c.run_energy_j, 0, "J") << " side by side vs "
        << cell_number(c.baseline_energy_j, 0, "J") << " one after another  ("
        << (c.energy_change_pct ? report::signed_change(*c.energy_change_pct) : "-") << ")\n";
    out << "  time     " << cell_number(c.run_time_s, 1, "s") << " vs "
        << cell_number(c.baseline_time_s, 1, "s") << "  (speedup " << cell_number(c.speedup, 2)
        << "x)\n";
    for (const JobResult& r : run.jobs) {
        for (const JobResult& b : base.jobs) {
            if (b.spec.name != r.spec.name)
                continue;
            out << "  " << r.spec.name << ": throughput " << cell_si(r.items_per_s) << " vs "
                << cell_si(b.items_per_s) << " alone; energy per item "
                << cell_number(scaled(r.energy_per_item_j, 1e3), 2, "mJ") << " vs "
                << cell_number(scaled(b.energy_per_item_j, 1e3), 2, "mJ") << " ("
                << change(r.energy_per_item_j, b.energy_per_item_j) << ")\n";
        }
    }
    if (run.aggregate_normalised_throughput)
        out << "  aggregate normalised throughput "
            << cell_number(run.aggregate_normalised_throughput, 2)
            << " (the sequential baseline is 1.00 by definition)\n";
    // No repetitions here: how much the rates moved in their windows is the figures' error.
    std::optional<double> widest_pct;
    for (const RunResult* r : {&run, &base}) {
        for (const JobResult& j : r->jobs) {
            if (j.items_per_s_spread_pct)
                widest_pct = std::max(widest_pct.value_or(0.0), *j.items_per_s_spread_pct);
        }
    }
    if (widest_pct)
        out << "  noise    the jobs' rates moved up to " << cell_number(widest_pct, 1, "%")
            << " within their windows (the ± columns): read differences smaller than that as "
               "noise\n";
}

void print_run_and_baseline(const RunResult& run, const std::optional<RunResult>& baseline,
                            const std::string& title, std::ostream& out) {
    print_run_table(run, title, out);
    if (!baseline)
        return;
    out << '\n';
    print_run_table(*baseline, "baseline: sequential", out);
    out << '\n';
    print_comparison(run, *baseline, out);
}

std::string failed_jobs_text(const RunResult& run) {
    std::string text;
    for (const JobResult& j : run.jobs) {
        if (j.status != JobStatus::kOk)
            text += (text.empty() ? "" : "; ") + to_string(j.status) +
                    (j.message.empty() ? "" : ": " + j.message);
    }
    return text;
}

const Printers<CellOutput>& cell_printers() {
    static const Printers<CellOutput> printers(
        "run", {{"table",
                 [](const CellOutput& c, std::ostream& out) {
                     print_run_and_baseline(c.cell.run, c.cell.baseline, c.title, out);
                     out << "results, trace and job logs: " << c.run_dir << '\n';
                 }},
                {"json", [](const CellOutput& c, std::ostream& out) {
                     out << report::utf8_dump(c.cell.doc, 2) << '\n';
                 }}});
    return printers;
}

}  // namespace migscope::runner
