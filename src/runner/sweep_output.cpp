// A sweep's plan and summary as text (a row per GPU for cells of several GPUs).
#include "runner/sweep_output.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "report/table.h"
#include "runner/comparison.h"
#include "runner/host_output.h"
#include "runner/run_output.h"

namespace migscope::runner {
namespace {

bool has_host_cells(const SweepPlan& plan) {
    return plan.max_gpus > 1;
}

// The summary's columns: "GPU" after "rep" when some cell runs on several GPUs.
std::vector<report::TextTable::Column> summary_columns(const SweepPlan& plan) {
    std::vector<report::TextTable::Column> c = {{"#", report::Align::kRight},
                                                {"section"},
                                                {"backend"},
                                                {"layout"},
                                                {"jobs"},
                                                {"rep", report::Align::kRight},
                                                {"status"},
                                                {"energy", report::Align::kRight},
                                                {"norm. tput", report::Align::kRight},
                                                {"vs baseline", report::Align::kRight},
                                                {"run id", report::Align::kRight}};
    if (has_host_cells(plan))
        c.insert(c.begin() + 6, {"GPU", report::Align::kRight});
    return c;
}

// "ok", "2 failed", "interrupted".
std::string status_text(const RunResult& run) {
    size_t failed = 0;
    for (const JobResult& j : run.jobs)
        failed += j.status == JobStatus::kOk ? 0 : 1;
    if (run.interrupted)
        return "interrupted";
    return failed ? std::to_string(failed) + " failed" : "ok";
}

std::string energy_text(const std::optional<double>& energy_j) {
    return energy_j ? fmt::format("{:.0f} J", *energy_j) : "-";
}

// "12" or "12-14": a host run's GPU rows have consecutive ids.
std::string ids_text(const std::vector<int64_t>& ids) {
    if (ids.empty())
        return "-";
    return ids.size() == 1 ? std::to_string(ids.front())
                           : std::to_string(ids.front()) + "-" + std::to_string(ids.back());
}

}  // namespace

std::string duration_text(double s) {
    const long total = std::lround(std::max(0.0, s));
    if (total < 60)
        return std::to_string(total) + " s";
    if (total < 3600)
        return fmt::format("{} min {:02} s", total / 60, total % 60);
    return fmt::format("{} h {:02} min", total / 3600, total % 3600 / 60);
}

void print_sweep_plan(const SweepPlan& p, const std::string& spec_path, bool resume,
                      std::ostream& out) {
    out << "migscope run: experiment " << p.spec.name << " (" << spec_path << "), layouts for "
        << p.model.key << ", "
        << (!p.for_gpu_host.empty() ? p.for_gpu_host
            : p.on_gpu              ? "on the GPU"
                                    : "no GPU here: on the CPU")
        << '\n';
    out << "  cells      " << p.selected_cells << " selected of " << p.all_cells;
    if (!p.skipped.empty())
        out << ", " << p.skipped.size() << " skipped (jobs known not to fit; --force runs them)";
    if (resume)
        out << ", " << p.already_stored << " already stored (--resume skips them)";
    else if (p.already_stored)
        out << "; " << p.already_stored << " already stored, run again (--resume skips them)";
    out << '\n';
    out << "  to run     " << p.todo.size() << " runs"
        << (p.baselines ? " + " + std::to_string(p.baselines) + " sequential baselines" : "")
        << '\n';
    if (has_host_cells(p)) {
        out << "  GPUs       from GPU " << p.first_gpu << " (--gpu): cells of gpus = N run on N "
            << "GPUs at once, each the cell's layout and jobs (and its baseline); the most is "
            << p.max_gpus << '\n';
    }
    out << "  estimate   about " << duration_text(p.estimate_s)
        << " (an estimate: " << experiment::kGpuMixStartupAllowance_s
        << " s start-up per run of several jobs on a GPU, " << experiment::kGpuJobStartupAllowance_s
        << " s per run of one job and per baseline job, " << experiment::kCpuStartupAllowance_s
        << " s on CPUs, plus windows and cool-downs"
        << (p.estimate_without_work ? "; the fixed work's own time is not included" : "") << ")\n";
    out << "  results    " << p.db_path << " (store), " << p.root << "/ (run directories)\n";
    for (const std::string& s : p.skipped)
        out << "  skipped    " << s << '\n';
}

std::string stored_text(const SweepCellOutcome& o) {
    if (o.unstored())
        return "not stored: kept in " + o.unstored()->file;
    if (o.host) {
        const HostOutcome& h = *o.host;
        return "stored as runs " + ids_text(h.run_ids) + " (GPUs " +
               std::to_string(h.run.gpus.front().gpu) + "-" +
               std::to_string(h.run.gpus.back().gpu) + ")" +
               (h.baseline_ids.empty() ? "" : ", baselines " + ids_text(h.baseline_ids));
    }
    const CellOutcome& c = *o.cell;
    return "stored as run " + (c.run_id ? std::to_string(*c.run_id) : "-") +
           (c.baseline_id ? ", baseline " + std::to_string(*c.baseline_id) : "");
}

void print_cell(const PlannedCell& p, const SweepCellOutcome& o, std::ostream& out) {
    if (o.host)
        print_host(*o.host, p.description, out);
    else
        print_run_and_baseline(o.cell->run, o.cell->baseline, p.description, out);
}

SweepSummary::SweepSummary(const SweepPlan& plan)
    : plan_(plan), gpu_column_(has_host_cells(plan)), table_(summary_columns(plan)) {}

void SweepSummary::add(size_t i, const SweepCellOutcome& o) {
    const PlannedCell& p = plan_.todo[i];
    const experiment::Cell& c = p.cell;
    if (plan_.todo.size() == 1) {
        std::ostringstream table;
        print_cell(p, o, table);
        single_table_ = table.str();
    }
    if (o.host) {
        add_host(i, *o.host);
        return;
    }
    const CellOutcome& out = *o.cell;
    const std::string status = status_text(out.run);
    std::string change = "-";
    if (out.baseline) {
        const Comparison cmp = compare_with_baseline(out.run, *out.baseline);
        if (cmp.energy_change_pct)
            change = report::signed_change(*cmp.energy_change_pct, " % energy");
    }
    const auto& norm = out.run.aggregate_normalised_throughput;
    std::vector<std::string> row = {std::to_string(i + 1),
                                    c.section,
                                    partition::to_string(c.backend),
                                    c.layout.empty() ? "-" : c.layout.text(),
                                    jobs_text(c.jobs),
                                    std::to_string(c.repetition),
                                    status,
                                    energy_text(out.run.energy.counter_energy_j),
                                    norm ? fmt::format("{:.2f}", *norm) : "-",
                                    change,
                                    out.run_id ? std::to_string(*out.run_id) : "-"};
    if (gpu_column_)
        row.insert(row.begin() + 6, "-");
    table_.add_row(std::move(row));
}

// A row per GPU (its status, energy and row id), then the host's: the total energy and the
// change of the total against the baseline's on the same GPUs.
void SweepSummary::add_host(size_t i, const HostOutcome& h) {
    const experiment::Cell& c = plan_.todo[i].cell;
    const auto row = [&](const std::string& gpu, const std::string& status,
                         const std::optional<double>& energy_j, const std::string& change,
                         const std::string& id) {
        table_.add_row({std::to_string(i + 1), c.section, partition::to_string(c.backend),
                        c.layout.empty() ? "-" : c.layout.text(), jobs_text(c.jobs),
                        std::to_string(c.repetition), gpu, status, energy_text(energy_j), "-",
                        change, id});
    };
    for (size_t g = 0; g < h.run.gpus.size(); ++g) {
        const GpuOutcome& gpu = h.run.gpus[g];
        row(std::to_string(gpu.gpu), gpu.failed() ? "gpu failed" : status_text(gpu.run),
            gpu.run.energy.counter_energy_j, "-",
            g < h.run_ids.size() ? std::to_string(h.run_ids[g]) : "-");
    }
    std::string change = "-";
    if (h.doc.contains("comparison") && h.doc["comparison"].contains("energy_change_pct") &&
        h.doc["comparison"]["energy_change_pct"].is_number())
        change = report::signed_change(h.doc["comparison"]["energy_change_pct"].get<double>(),
                                       " % energy");
    row("all",
        h.all_ok()        ? "ok"
        : h.interrupted() ? "interrupted"
                          : "not all ok",
        h.run.total.energy_j, change, ids_text(h.run_ids));
}

void SweepSummary::print(const SweepResult& r, std::ostream& out) const {
    if (!single_table_.empty())
        out << single_table_ << '\n';
    out << "migscope run: experiment " << plan_.spec.name << ", " << duration_text(r.wall_s)
        << (r.interrupted ? ", interrupted" : "") << '\n';
    table_.print(out);
    if (gpu_column_)
        out << "GPU: a cell of several GPUs has a row per GPU (its board's energy) and a row "
               "'all' (the host's total: a GPU done sooner is charged its idle power until the "
               "slowest is done)\n";
    out << "energy: the board's over the run's window (or makespan); norm. tput: the jobs' "
           "work at their speeds alone on the whole device, over the window (1.00: one after "
           "another); vs baseline: the "
           "same work one after another\n";
    out << "results store: " << plan_.db_path << " (migscope results list --db " << plan_.db_path
        << ")\n";
    out << "run directories: " << plan_.root << "/ (result.json, table.txt, trace.csv, job logs)\n";
}

}  // namespace migscope::runner
