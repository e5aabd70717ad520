// A sweep's plan and summary as text.
#include "runner/sweep_output.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "report/table.h"
#include "runner/comparison.h"
#include "runner/run_output.h"

namespace migscope::runner {

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
    out << "  estimate   about " << duration_text(p.estimate_s)
        << " (an estimate: " << experiment::kGpuStartupAllowance_s << " s start-up per run "
        << "and per baseline job on a GPU, " << experiment::kCpuStartupAllowance_s
        << " s on CPUs, plus windows and cool-downs"
        << (p.estimate_without_work ? "; the fixed work's own time is not included" : "") << ")\n";
    out << "  results    " << p.db_path << " (store), " << p.root << "/ (run directories)\n";
    for (const std::string& s : p.skipped)
        out << "  skipped    " << s << '\n';
}

SweepSummary::SweepSummary(const SweepPlan& plan)
    : plan_(plan),
      table_({{"#", report::Align::kRight},
              {"section"},
              {"backend"},
              {"layout"},
              {"jobs"},
              {"rep", report::Align::kRight},
              {"status"},
              {"energy", report::Align::kRight},
              {"norm. tput", report::Align::kRight},
              {"vs baseline", report::Align::kRight},
              {"run id", report::Align::kRight}}) {}

void SweepSummary::add(size_t i, const CellOutcome& out) {
    const PlannedCell& p = plan_.todo[i];
    const experiment::Cell& c = p.cell;
    if (plan_.todo.size() == 1) {
        std::ostringstream table;
        print_run_and_baseline(out.run, out.baseline, p.description, table);
        single_table_ = table.str();
    }
    std::string status = out.run.interrupted ? "interrupted" : "ok";
    size_t failed = 0;
    for (const JobResult& j : out.run.jobs)
        failed += j.status == JobStatus::kOk ? 0 : 1;
    if (failed && !out.run.interrupted)
        status = std::to_string(failed) + " failed";
    std::string change = "-";
    if (out.baseline) {
        const Comparison cmp = compare_with_baseline(out.run, *out.baseline);
        if (cmp.energy_change_pct)
            change = report::signed_change(*cmp.energy_change_pct, " % energy");
    }
    const auto& e = out.run.energy.counter_energy_j;
    const auto& norm = out.run.aggregate_normalised_throughput;
    table_.add_row({std::to_string(i + 1), c.section, partition::to_string(c.backend),
                    c.layout.empty() ? "-" : c.layout, jobs_text(c.jobs),
                    std::to_string(c.repetition), status, e ? fmt::format("{:.0f} J", *e) : "-",
                    norm ? fmt::format("{:.2f}", *norm) : "-", change,
                    out.run_id ? std::to_string(*out.run_id) : "-"});
}

void SweepSummary::print(const SweepResult& r, std::ostream& out) const {
    if (!single_table_.empty())
        out << single_table_ << '\n';
    out << "migscope run: experiment " << plan_.spec.name << ", " << duration_text(r.wall_s)
        << (r.interrupted ? ", interrupted" : "") << '\n';
    table_.print(out);
    out << "energy: the board's over the run's window (or makespan); norm. tput: the jobs' "
           "throughputs over their own alone on the whole device, summed; vs baseline: the "
           "same work one after another\n";
    out << "results store: " << plan_.db_path << " (migscope results list --db " << plan_.db_path
        << ")\n";
    out << "run directories: " << plan_.root << "/ (result.json, table.txt, trace.csv, job logs)\n";
}

}  // namespace migscope::runner
