// The sweep of an experiment spec: check every cell, print the plan, run what is missing, one
// transaction per finished run, and summarise.
#include "sweep.h"

#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "experiment/expand.h"
#include "output_file.h"
#include "report/table.h"
#include "run_output.h"
#include "runner/comparison.h"

namespace migscope::cli {
namespace {

namespace fs = std::filesystem;
using experiment::Cell;
using Clock = std::chrono::steady_clock;

// 42 s, 5 min 10 s, 2 h 05 min.
std::string duration_text(double s) {
    const long total = std::lround(std::max(0.0, s));
    if (total < 60)
        return std::to_string(total) + " s";
    if (total < 3600)
        return fmt::format("{} min {:02} s", total / 60, total % 60);
    return fmt::format("{} h {:02} min", total / 3600, total % 3600 / 60);
}

// "resnet18:32,bert-base:finetune:4" (with each job's own steps under matched work).
std::string jobs_text(const std::vector<partition::JobSpec>& jobs) {
    std::string out;
    for (const partition::JobSpec& j : jobs) {
        std::string t = j.external() ? j.name : j.workload;
        if (j.mode == "finetune")
            t += ":finetune";
        if (j.batch)
            t += ":" + std::to_string(*j.batch);
        if (j.steps)
            t += "(" + std::to_string(*j.steps) + " steps)";
        out += (out.empty() ? "" : ",") + t;
    }
    return out;
}

std::string describe(const Cell& c) {
    return c.section + ": " + partition::to_string(c.backend) +
           (c.layout.empty() ? "" : " " + c.layout) + ", " + jobs_text(c.jobs) + ", " +
           (c.duration_s > 0 ? fmt::format("{:g} s window", c.duration_s)
                             : fmt::format("{} steps", c.work_steps)) +
           (c.baseline ? " + baseline" : "") + ", repetition " + std::to_string(c.repetition) +
           "/" + std::to_string(c.repetitions);
}

CellRequest request_of(const Cell& c, const std::string& experiment) {
    CellRequest r;
    r.backend = c.backend;
    r.layout = c.layout;
    r.jobs = c.jobs;
    r.duration_s = c.duration_s;
    r.work_steps = c.work_steps;
    r.baseline = c.baseline;
    r.label = c.section;
    r.experiment = experiment;
    r.cell_key = c.key;
    return r;
}

// The GPU model the layouts are checked against: the spec's, which must be this GPU's when
// there is one; else this GPU's; else (no GPU: a dry run or CPU sections) the H200's.
mig::GpuModel model_for(const experiment::Spec& spec, const Machine& machine) {
    if (!spec.gpu.empty()) {
        if (machine.gpu && machine.gpu->model.key != spec.gpu) {
            throw input_error("the spec is for " + spec.gpu + " but GPU 0 is " +
                              (machine.gpu->model.key.empty() ? machine.gpu->model.description
                                                              : machine.gpu->model.key));
        }
        return mig::builtin_model(spec.gpu);
    }
    return machine.gpu ? machine.gpu->model : mig::builtin_model("h200");
}

struct Planned {
    Cell cell;
    experiment::Estimate estimate;
};

// Sleeps, waking early on an interrupt; on a terminal, a countdown on one line.
void cool_down(double seconds, const std::atomic<bool>& interrupted, bool tty) {
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (!interrupted && Clock::now() < end) {
        if (tty) {
            const double left = std::chrono::duration<double>(end - Clock::now()).count();
            std::cerr << "\r\033[Kmigscope run: cooling down, " << duration_text(left)
                      << std::flush;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (tty)
        std::cerr << "\r\033[K" << std::flush;
}

// "[######----]" on a terminal; nothing in a log.
std::string bar(size_t done, size_t total, bool tty) {
    if (!tty || total == 0)
        return "";
    const size_t width = 20, filled = width * done / total;
    return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] ";
}

}  // namespace

int run_sweep(const SweepOptions& o) {
    const experiment::Spec spec = experiment::read_spec(o.spec_path);
    const Machine machine = open_machine(o.gpu);
    const mig::GpuModel model = model_for(spec, machine);
    const std::vector<Cell> all = experiment::expand(spec, model);
    const std::vector<Cell> selected =
        experiment::select_cells(spec, all, o.only, machine.gpu != nullptr);
    if (selected.empty()) {
        throw input_error(o.spec_path + ": no cell to run on this machine (" +
                          (machine.gpu ? "every section selected has on = \"cpu\""
                                       : "no GPU here, and every section selected has on = "
                                         "\"gpu\": " +
                                             machine.gpu_problem) +
                          ")");
    }

    // Every cell checked on this machine before anything runs; known memory misfits skipped.
    std::vector<Cell> runnable;
    std::vector<std::string> skipped;
    for (const Cell& c : selected) {
        std::vector<std::string> misfits;
        try {
            misfits = check_cell(machine, request_of(c, spec.name));
        } catch (const Error& e) {
            throw Error(e.kind(), describe(c) + ": " + e.what());
        }
        if (misfits.empty() || o.measurement.force)
            runnable.push_back(c);
        else
            skipped.push_back(describe(c) + ": " + misfits.front());
    }

    // The store: resume skips the cells it holds, finished and with their baseline.
    const std::string db_path = o.db.empty() ? "migscope-runs/" + spec.name + ".db" : o.db;
    if (!o.dry_run && fs::path(db_path).has_parent_path())
        fs::create_directories(fs::path(db_path).parent_path());
    std::optional<store::Store> db;
    if (!o.dry_run || fs::exists(db_path))
        db.emplace(store::Store::open(
            db_path, o.dry_run ? store::OpenMode::kExisting : store::OpenMode::kCreate));
    std::map<std::string, bool> stored;  // cell key -> with its baseline
    if (db) {
        for (const store::StoredCell& s : db->stored_cells(spec.name))
            stored[s.cell_key] = stored[s.cell_key] || s.has_baseline;
    }
    std::vector<Planned> todo;
    size_t already = 0;
    for (const Cell& c : runnable) {
        const auto s = stored.find(c.key);
        const bool done = s != stored.end() && (!c.baseline || s->second);
        already += done ? 1 : 0;
        if (!(o.resume && done))
            todo.push_back({c, experiment::estimate(c)});
    }

    // The plan.
    const std::string root =
        o.run_dir.empty() ? "migscope-runs/" + spec.name + "-" + local_time_stamp() : o.run_dir;
    std::ostream& plan = o.dry_run ? std::cout : std::cerr;
    double total_s = 0;
    size_t baselines = 0;
    bool without_work = false;
    for (const Planned& p : todo) {
        total_s += p.estimate.seconds;
        baselines += p.cell.baseline ? 1 : 0;
        without_work = without_work || p.estimate.without_work;
    }
    plan << "migscope run: experiment " << spec.name << " (" << o.spec_path << "), layouts for "
         << model.key << ", " << (machine.gpu ? "on the GPU" : "no GPU here: on the CPU") << '\n';
    plan << "  cells      " << selected.size() << " selected of " << all.size();
    if (!skipped.empty())
        plan << ", " << skipped.size() << " skipped (jobs known not to fit; --force runs them)";
    if (o.resume)
        plan << ", " << already << " already stored (--resume skips them)";
    else if (already)
        plan << "; " << already << " already stored, run again (--resume skips them)";
    plan << '\n';
    plan << "  to run     " << todo.size() << " runs"
         << (baselines ? " + " + std::to_string(baselines) + " sequential baselines" : "") << '\n';
    plan << "  estimate   about " << duration_text(total_s)
         << " (an estimate: " << experiment::kGpuStartupAllowance_s << " s start-up per run "
         << "and per baseline job on a GPU, " << experiment::kCpuStartupAllowance_s
         << " s on CPUs, plus windows and cool-downs"
         << (without_work ? "; the fixed work's own time is not included" : "") << ")\n";
    plan << "  results    " << db_path << " (store), " << root << "/ (run directories)\n";
    for (const std::string& s : skipped)
        plan << "  skipped    " << s << '\n';
    if (o.dry_run) {
        for (size_t i = 0; i < todo.size(); ++i)
            plan << fmt::format("  {:>4}  {}\n", i + 1, describe(todo[i].cell));
        return kExitOk;
    }

    // The runs.
    const bool tty = isatty(STDERR_FILENO);
    const std::atomic<bool>* interrupted = install_interrupt_handler();
    runner::RunHooks hooks;
    hooks.progress = [](const std::string& line) { std::cerr << "migscope run: " << line << '\n'; };
    hooks.interrupt = interrupted;
    report::TextTable summary({{"#", report::Align::kRight},
                               {"section"},
                               {"backend"},
                               {"layout"},
                               {"jobs"},
                               {"rep", report::Align::kRight},
                               {"status"},
                               {"energy", report::Align::kRight},
                               {"norm. tput", report::Align::kRight},
                               {"vs baseline", report::Align::kRight},
                               {"run id", report::Align::kRight}});
    const auto started = Clock::now();
    double estimated_done_s = 0, estimated_left_s = total_s;
    bool all_ok = true, stopped = false;
    std::string single_table;  // a sweep of one run (the quickstart) shows its full table
    for (size_t i = 0; i < todo.size() && !*interrupted; ++i) {
        const Cell& c = todo[i].cell;
        const double elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
        // The estimate of what is left, corrected by how the estimate fared so far.
        const double eta_s = estimated_done_s > 0 ? estimated_left_s * elapsed_s / estimated_done_s
                                                  : estimated_left_s;
        std::cerr << "migscope run: " << bar(i, todo.size(), tty) << "run " << i + 1 << " of "
                  << todo.size() << " (" << describe(c) << "); elapsed " << duration_text(elapsed_s)
                  << ", ETA " << duration_text(eta_s) << '\n';

        CellRequest r = request_of(c, spec.name);
        r.run_dir = fmt::format("{}/{:03}-{}-{}{}-r{}", root, i + 1, c.section,
                                partition::to_string(c.backend),
                                c.layout.empty() ? "" : "-" + c.layout, c.repetition);
        const CellOutcome out = run_cell(machine, o.measurement, r, &*db, hooks);
        hooks.progress("stored as run " + std::to_string(*out.run_id) +
                       (out.baseline_id ? ", baseline " + std::to_string(*out.baseline_id) : "") +
                       "; " + r.run_dir);
        std::ostringstream table;
        print_run_and_baseline(out.run, out.baseline, describe(c), table);
        std::ofstream(r.run_dir + "/table.txt") << table.str();
        if (todo.size() == 1)
            single_table = table.str();

        std::string status = out.run.interrupted ? "interrupted" : "ok";
        size_t failed = 0;
        for (const runner::JobResult& j : out.run.jobs)
            failed += j.status == runner::JobStatus::kOk ? 0 : 1;
        if (failed && !out.run.interrupted)
            status = std::to_string(failed) + " failed";
        all_ok = all_ok && out.all_ok();
        std::string change = "-";
        if (out.baseline) {
            const runner::Comparison cmp = runner::compare_with_baseline(out.run, *out.baseline);
            if (cmp.energy_change_pct)
                change = fmt::format("{:+.1f} % energy", *cmp.energy_change_pct);
        }
        const auto& e = out.run.energy.counter_energy_j;
        const auto& norm = out.run.aggregate_normalised_throughput;
        summary.add_row(
            {std::to_string(i + 1), c.section, partition::to_string(c.backend),
             c.layout.empty() ? "-" : c.layout, jobs_text(c.jobs), std::to_string(c.repetition),
             status, e ? fmt::format("{:.0f} J", *e) : "-",
             norm ? fmt::format("{:.2f}", *norm) : "-", change, std::to_string(*out.run_id)});
        estimated_done_s += todo[i].estimate.seconds;
        estimated_left_s -= todo[i].estimate.seconds;
        if (out.run.interrupted) {
            stopped = true;
            break;
        }
        if (i + 1 < todo.size() && c.cooldown_s > 0)
            cool_down(c.cooldown_s, *interrupted, tty);
    }
    stopped = stopped || *interrupted;

    Output output(o.output);
    std::ostream* out = &output.stream();
    if (!single_table.empty())
        *out << single_table << '\n';
    *out << "migscope run: experiment " << spec.name << ", "
         << duration_text(std::chrono::duration<double>(Clock::now() - started).count())
         << (stopped ? ", interrupted" : "") << '\n';
    summary.print(*out);
    *out << "energy: the board's over the run's window (or makespan); norm. tput: the jobs' "
            "throughputs over their own alone on the whole device, summed; vs baseline: the same "
            "work one after another\n";
    *out << "results store: " << db_path << " (migscope results list --db " << db_path << ")\n";
    *out << "run directories: " << root << "/ (result.json, table.txt, trace.csv, job logs)\n";
    if (stopped) {
        std::cerr << "migscope run: interrupted; finished runs are stored: run again with "
                     "--resume to do the rest\n";
        return kExitInterrupted;
    }
    return all_ok ? kExitOk : kExitFailure;
}

}  // namespace migscope::cli
