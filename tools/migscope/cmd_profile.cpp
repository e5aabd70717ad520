// `migscope profile`: measures each job alone on each partition size (runner/profile_runs.h),
// stored in a results store; `migscope profile export` writes the planner's profile file from
// such a store.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "interrupt.h"
#include "mig/catalog.h"
#include "output_file.h"
#include "partition/backend_traits.h"
#include "partition/job.h"
#include "plan/profile.h"
#include "plan/residuals.h"
#include "runner/profile_runs.h"
#include "runner/profile_source.h"
#include "runner/run_output.h"
#include "runner/run_record.h"

namespace migscope::cli {
namespace {

struct ProfileOptions {
    std::string jobs;
    std::string jobs_file;
    std::string backend = "green";
    std::string sizes;  // empty: every profile of this GPU's model below the full GPU
    double duration_s = 10;
    unsigned reps = 1;
    unsigned gpu = 0;
    std::string db;
    std::string label = "profile";
    std::string run_dir;
    runner::Measurement measurement;
};

struct ResidualsOptions {
    std::string profiles;
    std::string correction_from;
    std::string start_delay;  // start-delay file, "none"; default data/start-delay-MODEL.json
    std::vector<std::string> dbs;
    std::string gpu_model = "h200";
    std::string add_to;
    std::string output;
};

struct ExportOptions {
    std::vector<std::string> dbs;
    std::string gpu_model = "h200";
    std::string output;
};

// "about 7 min", "about 40 s", with the runs whose length is not known yet.
std::string time_left_text(const runner::ProfileTimeLeft& left) {
    std::string text = left.seconds >= 120 ? fmt::format("about {:.0f} min", left.seconds / 60)
                                            : fmt::format("about {:.0f} s", left.seconds);
    if (left.unknown_command_runs > 0)
        text += fmt::format(" + {} run{} of commands not timed yet", left.unknown_command_runs,
                            left.unknown_command_runs == 1 ? "" : "s");
    return text;
}

class Printer : public runner::ProfileObserver {
  public:
    Printer(const runner::ProfileRequest& r, const runner::Measurement& m) : r_(r), m_(m) {}
    void profile_started(const std::vector<runner::ProfileCell>& cells) override {
        cells_ = cells;
        size_t commands = 0;
        for (const runner::ProfileCell& c : cells)
            commands += r_.jobs[c.job].external() ? 1 : 0;
        std::cerr << "migscope profile: " << cells.size() << " runs (" << r_.jobs.size()
                  << " jobs × " << cells.size() / r_.jobs.size() / r_.repetitions
                  << " sizes, the whole GPU included, × " << r_.repetitions << " repetitions"
                  << (commands ? fmt::format("; {} of them one run of a command each", commands)
                               : std::string())
                  << "): " << time_left_text(runner::profile_time_left(r_, cells, 0, pace_, m_))
                  << '\n';
    }
    void cell_started(size_t i, size_t count, const runner::ProfileCell& c) override {
        started_ = std::chrono::steady_clock::now();
        std::cerr << "migscope profile: [" << i + 1 << "/" << count << "] "
                  << partition::job_text(r_.jobs[c.job]) << " on " << c.where() << ", rep "
                  << c.repetition << ", "
                  << (r_.jobs[c.job].external() ? std::string("one run of its command")
                                                : fmt::format("{:g} s", r_.duration_s))
                  << "; " << time_left_text(runner::profile_time_left(r_, cells_, i, pace_, m_))
                  << " left\n";
    }
    void cell_finished(size_t, const runner::ProfileCell& c,
                       const runner::CellOutcome& out) override {
        pace_.record(r_, c,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - started_)
                         .count());
        const std::string dir = runner::profile_run_dir(r_, c);
        std::ofstream table(dir + "/table.txt");
        runner::print_run_and_baseline(out.run, out.baseline, "migscope profile: " + c.where(),
                                       table);
        if (out.all_ok())
            return;
        std::cerr << "migscope profile: " << partition::job_text(r_.jobs[c.job]) << " on "
                  << c.where() << " failed (" << runner::failed_jobs_text(out.run) << "; logs in "
                  << dir << "); the planner will not use that size for it\n";
    }

  private:
    const runner::ProfileRequest& r_;
    const runner::Measurement& m_;
    std::vector<runner::ProfileCell> cells_;
    runner::ProfilePace pace_;
    std::chrono::steady_clock::time_point started_;
};

int profile_command(const ProfileOptions& o) {
    runner::ProfileRequest r;
    r.jobs = partition::jobs_from_options(o.jobs, o.jobs_file);
    r.backend = partition::parse_backend(o.backend);
    for (const std::string& s : text::split(o.sizes, ','))
        if (!text::trim(s).empty())
            r.sizes.push_back(text::trim(s));
    r.duration_s = o.duration_s;
    r.repetitions = o.reps;
    r.label = o.label;
    r.run_dir =
        o.run_dir.empty() ? "migscope-runs/profile-" + runner::local_time_stamp() : o.run_dir;
    const runner::Machine machine = runner::open_machine(o.gpu);
    const runner::RunHooks hooks = command_run_hooks("profile");
    Printer printer(r, o.measurement);
    const runner::ProfileResult result =
        runner::run_profile(r, machine, o.measurement, o.db, hooks, printer);
    if (result.interrupted)
        return kExitInterrupted;
    std::cerr << "migscope profile: " << result.runs - result.failed << " of " << result.runs
              << " runs stored in " << o.db << " in " << std::lround(result.wall_s)
              << " s of wall time; write the planner's file with `migscope "
              << "profile export --db " << o.db << " -o profiles-" << machine.gpu->model.key
              << ".json`\n";
    return result.failed ? kExitFailure : kExitOk;
}

int export_command(const ExportOptions& o) {
    const mig::GpuModel& model = mig::builtin_model(o.gpu_model);
    std::vector<std::string> unused;
    const plan::ProfileSet set = plan::profiles_from_stores(o.dbs, model, &unused);
    for (const std::string& line : unused)
        std::cerr << "migscope profile export: warning: not profiled from " << user_text::escaped(line)
                  << '\n';
    Output(o.output).stream() << plan::write_profiles_json(set);
    if (!o.output.empty())
        std::cerr << "migscope profile export: " << set.jobs.size() << " job profiles written to "
                  << o.output << '\n';
    return kExitOk;
}

int residuals_command(const ResidualsOptions& o) {
    const mig::GpuModel& model = mig::builtin_model(o.gpu_model);
    std::string origin;
    plan::ProfileSet profiles = runner::load_profiles(o.profiles, model, origin);
    if (!o.correction_from.empty()) {
        profiles.correction = plan::read_profiles_file(o.correction_from).correction;
        origin += " (corrections of " + o.correction_from + ")";
    }
    profiles.start_delay = runner::load_start_delay(o.start_delay, model);
    if (!profiles.start_delay.origin.empty())
        origin += " (start delay of " + profiles.start_delay.origin + ")";
    plan::ModelError error;
    if (!o.add_to.empty())
        error = plan::read_model_error_file(o.add_to);
    plan::add_store_residuals(error, profiles, origin, o.dbs, model);
    error.created_at = runner::utc_now_iso8601();
    Output(o.output).stream() << plan::write_model_error_json(error);  // after --add-to is read
    for (const std::string& line : error.sources)
        std::cerr << "migscope profile residuals: " << line << '\n';
    std::cerr << "migscope profile residuals: " << error.residuals.size() << " residuals"
              << (o.output.empty() ? "" : " written to " + o.output) << '\n';
    return kExitOk;
}

}  // namespace

// Long (over 80 lines) on purpose: the command's options, one declaration each, read top to
// bottom as its --help lists them.
void add_profile_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<ProfileOptions>();
    CLI::App* cmd = app.add_subcommand(
        "profile",
        "Measure each job alone on each partition size for the planner, stored in --db: built-in "
        "jobs over a short steady-state window, your own commands (--jobs-file) once to their "
        "end; sizes on --backend, the whole GPU sequential. `profile export` writes the "
        "planner's profile file from the store.");
    cmd->add_option("--jobs", o->jobs, "Comma list of WORKLOAD[:MODE][:BATCH]");
    path_option(cmd->add_option(
        "--jobs-file", o->jobs_file,
        "JSON jobs file (as `migscope run --jobs-file`): built-in workloads and your "
        "own commands, each run once to its end per size (give --backend mps)"));
    cmd->add_option("--backend", o->backend,
                    "What the partition sizes are: green (SM partitions in migscope's worker; "
                    "built-in jobs only), mps (SM partitions through MPS; any job) or mig "
                    "(MIG instances, made with --apply)")
        ->check(CLI::IsMember(partition::backend_names(partition::plans_partitions)))
        ->capture_default_str();
    cmd->add_option("--sizes", o->sizes,
                    "Comma list of MIG profiles to measure on (default: every profile of this "
                    "GPU's model below the full GPU)");
    cmd->add_option("--duration", o->duration_s, "Steady-state window of each run, seconds")
        ->capture_default_str();
    cmd->add_option("--reps", o->reps, "Repetitions of every (job, size)")->capture_default_str();
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    cmd->add_option("--idle-probe", o->measurement.idle_probe_s,
                    "Seconds of idle board power sampled before each run (the planner needs it)")
        ->capture_default_str();
    path_option(
        cmd->add_option("--db", o->db, "Results store the runs go to (created if missing)"));
    cmd->add_option("--label", o->label, "Label kept with every run")->capture_default_str();
    path_option(cmd->add_option("--run-dir", o->run_dir,
                                "Where each run's files go (default migscope-runs/profile-DATE)"));
    cmd->add_flag("--apply", o->measurement.apply,
                  "mig: create each size's instance and destroy it afterwards");
    path_option(cmd->add_option("--worker", o->measurement.worker,
                                "migscope-worker binary (default: found beside migscope)"));
    cmd->add_flag_callback(
        "--no-cuda-graph", [o] { o->measurement.cuda_graph = false; },
        "Profile eager steps: no CUDA graph (by default every job replays its step as "
        "a CUDA graph, as migscope run does)");

    auto e = std::make_shared<ExportOptions>();
    CLI::App* exp = cmd->add_subcommand(
        "export",
        "Write the planner's profile file (JSON, format migscope-profiles v1) from a results "
        "store: medians of single-job runs, corrections from runs of several jobs");
    path_option(
        exp->add_option("--db", e->dbs,
                        "Results store written by `migscope profile` or `run --db`; repeat it to "
                        "take profiles from one store and calibration mixes from another"))
        ->required();
    exp->add_option("--gpu-model", e->gpu_model, "GPU model of the runs")->capture_default_str();
    path_option(exp->add_option("-o,--output", e->output, "Write here instead of stdout"));
    exp->callback([e, &action] { action = [e] { return export_command(*e); }; });

    auto res = std::make_shared<ResidualsOptions>();
    CLI::App* resid = cmd->add_subcommand(
        "residuals",
        "Write the model's residuals (JSON, format migscope-model-error v1): every run of "
        "several jobs, sequential baseline and fixed-work run in the stores, predicted from "
        "--profiles and set against what it measured; `migscope plan --model-error` makes its "
        "intervals from them (docs/planner.md, \"How sure\")");
    path_option(resid->add_option(
                    "--profiles", res->profiles,
                    "The profiles of the build that measured the stores' runs: a profile file "
                    "or a results store"))
        ->required();
    path_option(
        resid->add_option("--correction-from", res->correction_from,
                          "Take the interference corrections from this profile file instead (the "
                          "planner's of the time, when --profiles is a store whose own mixes would "
                          "calibrate them in-sample)"));
    resid->add_option("--start-delay", res->start_delay,
                      "The start delay of jobs starting together on green partitions (a file, or "
                      "none; default: the shipped data/start-delay-MODEL.json)");
    path_option(resid->add_option("--db", res->dbs, "Results store whose runs to use; repeat it"))
        ->required();
    resid->add_option("--gpu-model", res->gpu_model, "GPU model of the runs")
        ->capture_default_str();
    path_option(resid->add_option(
        "--add-to", res->add_to,
        "A residuals file to add to: its residuals from these stores are replaced, "
        "the others kept (stores measured with other profiles)"));
    path_option(resid->add_option("-o,--output", res->output, "Write here instead of stdout"));
    resid->callback([res, &action] { action = [res] { return residuals_command(*res); }; });

    cmd->callback([o, cmd, exp, resid, &action] {
        if (cmd->got_subcommand(exp) || cmd->got_subcommand(resid))
            return;
        if ((o->jobs.empty() && o->jobs_file.empty()) || o->db.empty())
            throw input_error(
                "profile: give --jobs or --jobs-file, and --db (or `profile export --db FILE`)");
        action = [o] { return profile_command(*o); };
    });
}

}  // namespace migscope::cli
