// Printers for host runs: JSON and tables over the GPUs' runs and the host's totals.
#include "runner/host_output.h"

#include <fmt/format.h>

#include "report/json_value.h"
#include "report/table.h"
#include "runner/run_output.h"

namespace migscope::runner {
namespace {

using nlohmann::json;
using report::Align;

std::string kj(const std::optional<double>& j) {
    return j ? fmt::format("{:.2f}", *j / 1e3) : "-";
}

std::string ok_jobs(const RunResult& run) {
    size_t ok = 0;
    for (const JobResult& j : run.jobs)
        ok += j.status == JobStatus::kOk ? 1 : 0;
    return std::to_string(ok) + "/" + std::to_string(run.jobs.size());
}

// A change in percent of `base`, when both are known.
json change_pct(const std::optional<double>& value, const std::optional<double>& base) {
    if (!value || !base || !(*base > 0))
        return nullptr;
    return 100 * (*value - *base) / *base;
}

void print_phase(const HostPhase& phase, const std::string& title, std::ostream& out) {
    for (const GpuOutcome& g : phase.gpus) {
        print_run_table(g.run,
                        title + ", GPU " + std::to_string(g.gpu) + ": " +
                            partition::to_string(g.run.backend) +
                            (g.run.layout.empty() ? "" : " " + g.run.layout),
                        out);
        out << '\n';
    }
    const bool work = phase.total.mode == report::HostMode::kWork;
    report::TextTable t({{"GPU", Align::kRight},
                         {"backend", Align::kLeft},
                         {"layout", Align::kLeft},
                         {work ? "makespan s" : "window s", Align::kRight},
                         {"energy kJ", Align::kRight},
                         {"jobs ok", Align::kRight},
                         {"status", Align::kLeft}});
    for (const GpuOutcome& g : phase.gpus) {
        t.add_row({std::to_string(g.gpu), partition::to_string(g.run.backend),
                   g.run.layout.empty() ? "whole GPU" : g.run.layout,
                   fmt::format("{:.2f}", g.run.window_s), kj(g.run.energy.counter_energy_j),
                   ok_jobs(g.run), g.failed() ? "failed: " + g.failure : "ok"});
    }
    const HostTotals& total = phase.total;
    t.add_row({"host", "", "", fmt::format("{:.2f}", total.window_s), kj(total.energy_j), "", ""});
    out << title << ", " << phase.gpus.size() << " GPUs:\n";
    t.print(out);
    if (work && total.energy_j)
        out << fmt::format(
            "  host energy: {} kJ measured over each GPU's own makespan + {} kJ idle of GPUs "
            "done sooner, until the slowest (each at its measured idle power)\n",
            kj(total.measured_energy_j), kj(total.idle_tail_j));
    for (const std::string& w : total.warnings)
        out << "  warning: " << w << '\n';
}

}  // namespace

json host_phase_json(const HostPhase& phase) {
    const HostTotals& t = phase.total;
    json gpus = json::array();
    for (const GpuOutcome& g : phase.gpus) {
        gpus.push_back({{"gpu", g.gpu},
                        {"uuid", g.uuid},
                        {"status", g.failed() ? "failed" : "ok"},
                        {"failure", g.failure},
                        {"run", run_json(g.run, g.context)}});
    }
    return {{"gpus", phase.gpus.size()},
            {"mode", t.mode == report::HostMode::kWork ? "work" : "duration"},
            {"window_s", t.window_s},
            {"window_meaning", t.mode == report::HostMode::kWork
                                   ? "the slowest GPU's makespan"
                                   : "the longest GPU window (each GPU measured in its own)"},
            {"energy_j", report::maybe(t.energy_j)},
            {"measured_energy_j", t.measured_energy_j},
            {"idle_tail_j", t.idle_tail_j},
            {"energy_method",
             "sum of each GPU's board energy counter over its own window; fixed work: plus each "
             "GPU done before the slowest at its measured idle power until then"},
            {"all_ok", phase.all_ok()},
            {"warnings", t.warnings},
            {"per_gpu", gpus}};
}

json host_json(const HostOutcome& o) {
    json doc = {{"run", host_phase_json(o.run)}};
    if (o.baseline) {
        doc["baseline"] = host_phase_json(*o.baseline);
        doc["comparison"] = {
            {"energy_change_pct", change_pct(o.run.total.energy_j, o.baseline->total.energy_j)},
            {"window_change_pct", change_pct(o.run.total.window_s, o.baseline->total.window_s)}};
    }
    return doc;
}

void print_host(const HostOutcome& o, const std::string& title, std::ostream& out) {
    print_phase(o.run, title, out);
    if (!o.baseline)
        return;
    out << '\n';
    print_phase(*o.baseline, "sequential baseline", out);
    const json c = host_json(o)["comparison"];
    out << "\nAgainst the sequential baseline on the same GPUs: energy "
        << (c["energy_change_pct"].is_null()
                ? std::string("not comparable")
                : report::signed_change(c["energy_change_pct"].get<double>(), "%"))
        << ", " << (o.run.total.mode == report::HostMode::kWork ? "makespan " : "window ")
        << (c["window_change_pct"].is_null()
                ? std::string("not comparable")
                : report::signed_change(c["window_change_pct"].get<double>(), "%"))
        << '\n';
}

const Printers<HostOutput>& host_printers() {
    static const Printers<HostOutput> printers(
        "run --plan", {{"table", [](const HostOutput& h,
                                    std::ostream& out) { print_host(h.outcome, h.title, out); }},
                       {"json", [](const HostOutput& h, std::ostream& out) {
                            out << report::utf8_dump(h.outcome.doc, 2) << '\n';
                        }}});
    return printers;
}

}  // namespace migscope::runner
