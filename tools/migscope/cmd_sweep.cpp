// `migscope run SPEC.toml`: the sweep's plan (runner/sweep.h), its progress with an ETA on
// stderr, and the summary table of the runs.
#include "cmd_sweep.h"

#include <unistd.h>

#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/error.h"
#include "core/folders.h"
#include "core/user_text.h"
#include "interrupt.h"
#include "output_file.h"
#include "runner/sweep_output.h"

namespace migscope::cli {
namespace {

namespace fs = std::filesystem;
using runner::duration_text;

// Progress on stderr (a bar and a cool-down countdown on a terminal), each run's table kept in
// its directory, a summary row per run.
class Printer : public runner::SweepObserver {
  public:
    explicit Printer(const runner::SweepPlan& plan)
        : summary(plan), plan_(plan), tty_(isatty(STDERR_FILENO)) {}

    runner::SweepSummary summary;  // printed at the end

    void cell_started(size_t i, double elapsed_s, double eta_s) override {
        std::cerr << "migscope run: " << bar(i) << "run " << i + 1 << " of " << plan_.todo.size()
                  << " (" << plan_.todo[i].description << "); elapsed " << duration_text(elapsed_s)
                  << ", ETA " << duration_text(eta_s) << '\n';
    }

    void cell_finished(size_t i, const runner::SweepCellOutcome& out) override {
        const runner::PlannedCell& p = plan_.todo[i];
        std::cerr << "migscope run: " << runner::stored_text(out) << "; " << p.run_dir << '\n';
        std::ofstream table(p.run_dir + "/table.txt");
        runner::print_cell(p, out, table);
        summary.add(i, out);
    }

    void cooling_down(double left_s) override {
        if (tty_)
            std::cerr << "\r\033[Kmigscope run: cooling down, " << duration_text(left_s) << "\r"
                      << std::flush;
    }

  private:
    // "[######----] " on a terminal; nothing in a log.
    std::string bar(size_t done) const {
        const size_t total = plan_.todo.size();
        if (!tty_ || total == 0)
            return "";
        const size_t width = 20, filled = width * done / total;
        return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] ";
    }

    const runner::SweepPlan& plan_;
    bool tty_;
};

}  // namespace

int sweep_command(const SweepCommand& o) {
    const runner::Machine machine = runner::open_machine(o.gpu);
    runner::SweepOptions options = o.sweep;
    options.gpu = o.gpu;  // a cell of several GPUs starts at --gpu
    const runner::SweepPlan plan = runner::plan_sweep(options, machine, o.measurement.force);
    if (o.sweep.dry_run) {
        runner::print_sweep_plan(plan, o.sweep.spec_path, o.sweep.resume, std::cout);
        for (size_t i = 0; i < plan.todo.size(); ++i)
            std::cout << fmt::format("  {:>4}  {}\n", i + 1, plan.todo[i].description);
        return kExitOk;
    }
    runner::print_sweep_plan(plan, o.sweep.spec_path, o.sweep.resume, std::cerr);
    Output output(o.output);  // an unwritable -o fails before anything runs
    if (fs::path(plan.db_path).has_parent_path())
        create_folder(fs::path(plan.db_path).parent_path().string(), "results store folder");
    store::Store db = store::Store::open(plan.db_path, store::OpenMode::kCreate);
    if (db.upgrade())
        std::cerr << "migscope run: " << store::describe(*db.upgrade(), plan.db_path) << '\n';

    const runner::RunHooks hooks = command_run_hooks("run");
    Printer printer(plan);
    const runner::SweepResult result =
        runner::run_sweep(plan, machine, o.measurement, db, hooks, printer);
    printer.summary.print(result, output.stream());
    for (const std::string& problem : result.problems)
        std::cerr << "migscope run: " << user_text::escaped(problem) << '\n';
    if (result.unstored) {
        std::cerr << "migscope run: stopped: import the kept runs, then run again with --resume "
                     "to do the rest\n";
        return kExitFailure;
    }
    if (!result.problems.empty())
        return kExitFailure;
    if (result.interrupted) {
        std::cerr << "migscope run: interrupted; finished runs are stored: run again with "
                     "--resume to do the rest\n";
        return kExitInterrupted;
    }
    return result.all_ok ? kExitOk : kExitFailure;
}

}  // namespace migscope::cli
