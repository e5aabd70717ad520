// `migscope run`: jobs side by side on partitions of one GPU (or CPU cores), measured over a
// steady-state window or as the makespan of fixed work, with board energy and attribution; a
// plan file's GPUs at once (--plan); or, given an experiment spec, a sweep (cmd_sweep.h).
#include <fstream>
#include <iostream>
#include <memory>

#include "cmd_sweep.h"
#include "commands.h"
#include "core/error.h"
#include "core/user_text.h"
#include "interrupt.h"
#include "output_file.h"
#include "runner/cell.h"
#include "runner/host_output.h"
#include "runner/plan_file.h"
#include "runner/run_output.h"

namespace migscope::cli {
namespace {

struct RunOptions {
    std::string spec;      // an experiment spec: a sweep (cmd_sweep.h); empty: one run
    std::string plan;      // a plan file: its GPUs at once (runner/host_run.h)
    size_t candidate = 0;  // --plan: 0 the recommendation, k the k-th top candidate
    std::string backend;   // empty: green with a GPU, cpu without
    std::string layout;
    std::vector<size_t> assign;  // --assign: each job's layout partition
    std::string jobs;
    std::string jobs_file;
    double duration_s = 0;
    int64_t work_steps = 0;
    unsigned gpu = 0;
    runner::Measurement measurement;
    std::string run_dir;
    std::string baseline = "none";
    std::string format = "table";
    std::string output;
    std::string db;     // results store; empty: none (a sweep's default: migscope-runs/NAME.db)
    std::string label;  // kept with the stored run
    bool resume = false;
    std::vector<std::string> only;
    bool dry_run = false;
};

// The store opens before anything runs: a bad path fails now, not after the run.
std::optional<store::Store> open_store(const std::string& path) {
    std::optional<store::Store> db;
    if (!path.empty())
        db.emplace(store::Store::open(path));
    if (db && db->upgrade())
        std::cerr << "migscope run: " << store::describe(*db->upgrade(), path) << '\n';
    return db;
}

// Says what of a measured run was not kept as it should be (a run directory's file, the store:
// where the run is instead); false when anything was not.
bool kept_whole(const std::optional<runner::UnstoredRuns>& unstored,
                const std::string& run_dir_problem, const std::string& db,
                const std::string& run_dir) {
    if (!run_dir_problem.empty())
        std::cerr << "migscope run: " << user_text::escaped(run_dir_problem) << '\n';
    if (unstored)
        std::cerr << "migscope run: "
                  << user_text::escaped(runner::describe(*unstored, db, run_dir)) << '\n';
    return run_dir_problem.empty() && !unstored;
}

// `migscope run --plan FILE`: each GPU of the plan at once, as the plan places and queues jobs.
int plan_run_command(const RunOptions& o, const CLI::App& cmd) {
    for (const char* name :
         {"--backend", "--layout", "--assign", "--jobs", "--jobs-file", "--duration", "--apply"}) {
        if (cmd.count(name))
            throw input_error(std::string(name) +
                              " does not apply to --plan (the plan says "
                              "what runs where; MIG instances must exist)");
    }
    runner::HostRequest r = runner::read_plan_file(
        o.plan, {o.candidate, o.work_steps, o.gpu, o.baseline == "sequential"});
    r.run_dir =
        o.run_dir.empty() ? "migscope-runs/" + runner::local_time_stamp() + "-plan" : o.run_dir;
    r.label = o.label;
    const runner::HostMachines machines = runner::open_gpus(r);
    runner::check_host(machines, r, o.measurement.force);  // before the store is made
    std::optional<store::Store> db = open_store(o.db);
    const runner::RunHooks hooks = command_run_hooks("run");
    const runner::HostOutcome out =
        runner::run_host(machines, o.measurement, r, db ? &*db : nullptr, hooks);
    if (!out.run_ids.empty())
        std::cerr << "migscope run: stored as runs " << out.run_ids.front() << " to "
                  << out.run_ids.back() << " (one per GPU) in " << o.db << '\n';
    Output output(o.output);
    runner::host_printers().print(o.format, {out, "migscope run --plan " + o.plan},
                                  output.stream());
    if (!kept_whole(out.unstored, out.run_dir_problem, o.db, r.run_dir))
        return kExitFailure;
    if (out.interrupted() || *hooks.interrupt)
        return kExitInterrupted;
    return out.all_ok() ? kExitOk : kExitFailure;
}

int run_command(RunOptions o) {
    if (o.resume || o.dry_run || !o.only.empty())
        throw input_error(
            "--resume, --only and --dry-run apply to experiment specs (migscope run "
            "SPEC.toml)");
    if ((o.duration_s > 0) == (o.work_steps > 0))
        throw input_error("give exactly one of --duration S and --work STEPS");
    runner::CellRequest r;
    r.jobs = partition::jobs_from_options(o.jobs, o.jobs_file);
    const runner::Machine machine = runner::open_machine(o.gpu);
    if (o.backend.empty())
        o.backend = machine.gpu ? "green" : "cpu";
    r.backend = partition::parse_backend(o.backend);
    if (o.measurement.apply && !partition::traits(r.backend).needs_mig_mode)
        throw input_error("--apply applies to the mig backend only");
    r.assign = o.assign;
    r.duration_s = o.duration_s;
    r.work_steps = o.work_steps;
    r.baseline = o.baseline == "sequential";
    r.run_dir = o.run_dir.empty() ? "migscope-runs/" + runner::local_time_stamp() + "-" + o.backend
                                  : o.run_dir;
    r.label = o.label;
    // The layout is parsed once, here; what cannot run is refused before the store is opened
    // and anything starts.
    try {
        r.layout = runner::parse_request_layout(machine, r, o.layout);
        runner::require_fit(runner::check_cell(machine, r), o.measurement.force);
    } catch (const Error& e) {
        throw with_flag_names(e);
    }

    std::optional<store::Store> db = open_store(o.db);
    const runner::RunHooks hooks = command_run_hooks("run");
    const runner::CellOutcome cell =
        runner::run_cell(machine, o.measurement, r, db ? &*db : nullptr, hooks);
    if (cell.run_id) {
        std::cerr << "migscope run: stored as run " << *cell.run_id << " in " << o.db << '\n';
        if (cell.baseline_id)
            std::cerr << "migscope run: baseline stored as run " << *cell.baseline_id << '\n';
    }

    Output output(o.output);
    runner::cell_printers().print(
        o.format,
        {cell, "migscope run: " + o.backend + (o.layout.empty() ? "" : " " + o.layout), r.run_dir},
        output.stream());
    if (!kept_whole(cell.unstored, cell.run_dir_problem, o.db, r.run_dir))
        return kExitFailure;
    if (cell.interrupted() || *hooks.interrupt)
        return kExitInterrupted;
    return cell.all_ok() ? kExitOk : kExitFailure;
}

// `migscope run SPEC.toml`: the options that describe one run come from the spec instead.
int spec_command(const RunOptions& o, const CLI::App& cmd) {
    for (const char* name :
         {"--backend", "--layout", "--assign", "--jobs", "--jobs-file", "--duration", "--work",
          "--baseline", "--label", "--format", "--apply", "--plan"}) {
        if (cmd.count(name))
            throw input_error(std::string(name) +
                              " does not apply to an experiment spec (the "
                              "spec says what to run)");
    }
    SweepCommand s;
    s.sweep = {o.spec, o.db, o.resume, o.only, o.run_dir, o.dry_run};
    s.output = o.output;
    s.gpu = o.gpu;
    s.measurement = o.measurement;
    return sweep_command(s);
}

}  // namespace

// Long (over 80 lines) on purpose: the command's options, one declaration each, read top to
// bottom as its --help lists them.
void add_run_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<RunOptions>();
    runner::Measurement& m = o->measurement;
    CLI::App* cmd = app.add_subcommand(
        "run",
        "Run jobs side by side on partitions of one GPU and measure throughput and energy;\n"
        "or run the sweep an experiment spec describes (docs/experiments.md).\n"
        "Example: migscope run --backend green --layout 3g.71gb+2g.35gb+1g.18gb+1g.18gb \\\n"
        "           --jobs resnet50,bert-base,resnet18,resnet18 --duration 60\n"
        "Example: migscope run examples/quickstart.toml\n"
        "Example: migscope run examples/paper.toml --only scaling-train --db paper.db --resume");
    path_option(
        cmd->add_option("spec", o->spec,
                        "Experiment spec (TOML): run its sweep; the options naming one run's jobs, "
                        "layout, backend, duration or work and baseline then come from the spec"));
    path_option(cmd->add_option(
        "--plan", o->plan,
        "Plan file (`migscope plan --format json`, one GPU or several): run each of "
        "its GPUs at once, its GPU g on NVML GPU --gpu + g, as it places and queues "
        "the jobs (fixed work: the plan's --work, or --work here); --baseline "
        "sequential: the planner's sequential baseline on as many GPUs. Several GPUs "
        "are tested on a fake NVML only so far"));
    cmd->add_option("--candidate", o->candidate,
                    "--plan: run the plan's K-th top candidate instead of its recommendation");
    cmd->add_option("--backend", o->backend,
                    "green | mps | mig | timeslice | sequential | cpu (default: green with a GPU, "
                    "cpu without)");
    cmd->add_option("--layout", o->layout,
                    "MIG layout, one partition per job in job order (green, mps, mig), or as "
                    "--assign says");
    cmd->add_option("--assign", o->assign,
                    "Each job's partition in --layout (from 0), e.g. 0,1,0: jobs on one partition "
                    "run one after another in job order (green, mps and mig backends, --work; "
                    "cpu: as many equal core shares as it names)")
        ->delimiter(',');
    cmd->add_option("--jobs", o->jobs,
                    "Comma list of WORKLOAD[:MODE][:BATCH], e.g. resnet18,bert-base:finetune:16");
    path_option(cmd->add_option(
        "--jobs-file", o->jobs_file,
        "JSON jobs file (built-in workloads and external commands), after --jobs' jobs "
        "when both are given; see docs/runs.md"));
    cmd->add_option("--duration", o->duration_s,
                    "Steady-state window in seconds (opens when every job is steady)")
        ->check(positive_number())
        ->check(CLI::Range(0.0, experiment::kMaxDurationS));
    cmd->add_option("--work", o->work_steps,
                    "Fixed work: measured steps per job; the makespan counts")
        ->check(positive_number());
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    cmd->add_option("--warmup-steps", m.warmup_steps, "Steps each job runs before it counts")
        ->capture_default_str();
    cmd->add_flag_callback(
        "--no-cuda-graph", [o] { o->measurement.cuda_graph = false; },
        "Built-in workloads step eagerly: no CUDA graph (by default each captures its "
        "step at warm-up step 2 and replays it; docs/worker-protocol.md)");
    cmd->add_option("--steady-cv", m.steady_cv,
                    "Steady state: coefficient of variation of the job's mean step time over its "
                    "last 5 spans of >= 0.2 s of steps at most this")
        ->capture_default_str();
    cmd->add_option("--warmup-timeout", m.warmup_timeout_s,
                    "Open the window anyway after this many seconds (with a warning)")
        ->check(positive_number())
        ->capture_default_str();
    cmd->add_option("--job-timeout", m.job_timeout_s,
                    "--work: a job still running after this many seconds is timed out")
        ->check(positive_number())
        ->capture_default_str();
    cmd->add_option("--hz", m.hz, "Power sampling rate (10 to 100)")
        ->check(CLI::Range(10.0, 100.0))
        ->capture_default_str();
    cmd->add_option("--idle-probe", m.idle_probe_s,
                    "Seconds of board power sampled with no job running, before the jobs and "
                    "after them, as idle power with clocks up and deep idle (0: none)")
        ->check(CLI::Range(0.0, 60.0))
        ->capture_default_str();
    cmd->add_option("--marginal-probe", m.marginal_probe_s,
                    "Seconds the mix without each job (two jobs: each alone) first runs, after "
                    "its warm-up, so that energy is attributed by what each job adds (at most "
                    "--duration; 0: by partition size x busy seconds; docs/runs.md)")
        ->check(CLI::Range(0.0, 600.0))
        ->capture_default_str();
    cmd->add_option("--baseline", o->baseline,
                    "sequential: also run the jobs one after another on the whole GPU and compare")
        ->check(CLI::IsMember({"none", "sequential"}))
        ->capture_default_str();
    path_option(cmd->add_option(
        "--run-dir", o->run_dir,
        "Where results, the power trace and job logs go (default "
        "migscope-runs/DATE-BACKEND; with a spec: migscope-runs/NAME-DATE, a folder "
        "per run)"));
    // --plan prints the same formats (runner/host_output.h).
    format_option(cmd, o->format, runner::cell_printers().names())->capture_default_str();
    path_option(
        cmd->add_option("-o,--output", o->output, "Write the output here instead of stdout"));
    cmd->add_flag("--force", m.force,
                  "Run jobs whose known peak memory exceeds their partition's (to observe it)");
    cmd->add_flag("--apply", m.apply,
                  "mig: create the layout's MIG instances (root, MIG mode already enabled, no "
                  "other GPU processes) and destroy them afterwards; default: use existing ones");
    path_option(cmd->add_option(
        "--db", o->db,
        "Also store the run (and its baseline) in this SQLite results store, created "
        "if missing; see `migscope results` (default: none; with a spec: "
        "migscope-runs/NAME.db). A run the store cannot take (full, damaged, locked) "
        "is kept in RUN_DIR/unstored-runs.db for `migscope results import` (exit 1)"));
    cmd->add_flag("--resume", o->resume,
                  "Spec: run only the cells the results store does not hold yet (finished, with "
                  "their baseline); a cell run again replaces its unfinished attempts");
    cmd->add_option("--only", o->only,
                    "Spec: run only these sections (by name; repeat or comma-separate)")
        ->delimiter(',');
    cmd->add_flag("--dry-run", o->dry_run, "Spec: print the plan and every run; run nothing");
    cmd->add_option("--label", o->label, "Free-form label kept with the stored run (--db)");
    path_option(cmd->add_option("--worker", m.worker,
                                "migscope-worker binary (default: found beside migscope)"));
    cmd->callback([o, cmd, &action] {
        if (!o->plan.empty() && o->spec.empty())
            action = [o, cmd] { return plan_run_command(*o, *cmd); };
        else if (o->spec.empty())
            action = [o] { return run_command(*o); };
        else
            action = [o, cmd] { return spec_command(*o, *cmd); };
    });
}

}  // namespace migscope::cli
