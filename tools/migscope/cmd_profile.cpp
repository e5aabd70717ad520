// `migscope profile`: measures each job alone on each partition size (short steady-state runs
// of `migscope run`, stored in a results store); `migscope profile export` writes the planner's
// profile file from such a store.
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "core/text.h"
#include "mig/catalog.h"
#include "partition/job.h"
#include "plan/profile.h"
#include "self_run.h"
#include "store/store.h"

namespace migscope::cli {
namespace {

struct ProfileOptions {
    std::string jobs;
    std::string sizes;  // empty: every profile of the model below the full GPU
    std::string gpu_model = "h200";
    double duration_s = 10;
    unsigned reps = 1;
    unsigned gpu = 0;
    double idle_probe_s = 2;
    std::string db;
    std::string label = "profile";
    std::string run_dir;
    std::string worker;
    bool cuda_graph = true;
};

struct ExportOptions {
    std::vector<std::string> dbs;
    std::string gpu_model = "h200";
    std::string output;
};

// The partition sizes to measure: given, or every non-variant profile below the full GPU.
std::vector<std::string> sizes_of(const ProfileOptions& o, const mig::GpuModel& model) {
    std::vector<std::string> out;
    if (!o.sizes.empty()) {
        for (const std::string& s : text::split(o.sizes, ','))
            out.push_back(model.require(text::trim(s)).name);
        return out;
    }
    for (const mig::Profile& p : model.profiles) {
        if (!p.media_extensions && p.compute_slices < model.compute_slices)
            out.push_back(p.name);
    }
    return out;
}

std::string job_text(const partition::JobSpec& j) {
    return j.workload + ":" + j.mode + (j.batch ? ":" + std::to_string(*j.batch) : "");
}

int profile_command(const ProfileOptions& o) {
    const mig::GpuModel& model = mig::builtin_model(o.gpu_model);
    const std::vector<partition::JobSpec> jobs = partition::parse_job_list(o.jobs);
    const std::vector<std::string> sizes = sizes_of(o, model);
    if (o.reps == 0 || o.duration_s <= 0)
        throw input_error("--reps and --duration must be positive");
    std::string run_dir = o.run_dir;
    if (run_dir.empty()) {
        const std::time_t now = std::time(nullptr);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
        run_dir = std::string("migscope-runs/profile-") + stamp;
    }
    // Each job on the whole GPU (sequential backend), then on each size (green backend).
    struct Cell {
        const partition::JobSpec* job;
        std::string size;  // empty: whole GPU
        unsigned rep;
    };
    std::vector<Cell> cells;
    for (unsigned rep = 1; rep <= o.reps; ++rep) {
        for (const partition::JobSpec& j : jobs) {
            cells.push_back({&j, "", rep});
            for (const std::string& s : sizes)
                cells.push_back({&j, s, rep});
        }
    }
    size_t failed = 0;
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < cells.size(); ++i) {
        const Cell& c = cells[i];
        const std::string where = c.size.empty() ? "whole GPU" : c.size;
        std::cerr << "migscope profile: [" << i + 1 << "/" << cells.size() << "] "
                  << job_text(*c.job) << " on " << where << ", rep " << c.rep << ", "
                  << o.duration_s << " s\n";
        const std::string dir = run_dir + "/" + c.job->name + "-" +
                                (c.size.empty() ? "whole" : c.size) + "-" + std::to_string(c.rep);
        std::vector<std::string> args = {"run",
                                         "--jobs",
                                         job_text(*c.job),
                                         "--duration",
                                         std::to_string(o.duration_s),
                                         "--db",
                                         o.db,
                                         "--label",
                                         o.label,
                                         "--gpu",
                                         std::to_string(o.gpu),
                                         "--idle-probe",
                                         std::to_string(o.idle_probe_s),
                                         "--run-dir",
                                         dir,
                                         "--output",
                                         dir + "/table.txt"};
        if (c.size.empty())
            args.insert(args.end(), {"--backend", "sequential"});
        else
            args.insert(args.end(), {"--backend", "green", "--layout", c.size});
        if (!o.worker.empty())
            args.insert(args.end(), {"--worker", o.worker});
        if (!o.cuda_graph)
            args.push_back("--no-cuda-graph");
        const SelfRun r = run_self(args);
        if (r.exit_code == kExitOk)
            continue;
        if (r.exit_code == 130)
            return 130;
        if (r.exit_code != kExitFailure) {
            throw Error(r.exit_code == kExitBadInput ? ErrorKind::kInput : ErrorKind::kUnavailable,
                        "profile: `migscope run` stopped with exit " + std::to_string(r.exit_code) +
                            " for " + job_text(*c.job) + " on " + where + " (see above)");
        }
        ++failed;  // a job that failed (out of memory on a small partition): keep going
        std::cerr << "migscope profile: " << job_text(*c.job) << " on " << where
                  << " failed; the planner will not use that size for it\n";
    }
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "migscope profile: " << cells.size() - failed << " of " << cells.size()
              << " runs stored in " << o.db << " in " << std::lround(wall_s)
              << " s of wall time; write the planner's file with `migscope "
              << "profile export --db " << o.db << " -o profiles-" << model.key << ".json`\n";
    return failed ? kExitFailure : kExitOk;
}

int export_command(const ExportOptions& o) {
    const mig::GpuModel& model = mig::builtin_model(o.gpu_model);
    // Every store's runs together (profiles from one, calibration mixes from another); the
    // provenance names the runs used from each.
    std::vector<store::RunRecord> runs;
    std::string command = "migscope profile export", source;
    for (const std::string& path : o.dbs) {
        store::Store db = store::Store::open(path, store::OpenMode::kExisting);
        std::string ids;
        for (store::RunRecord& r : db.list_runs()) {
            if (plan::used_for_profiles(r))
                ids += (ids.empty() ? "runs " : ", ") + std::to_string(r.id);
            runs.push_back(std::move(r));
        }
        command += " --db " + path;
        source += (source.empty() ? "" : "; ") + path + ": " + (ids.empty() ? "none" : ids);
    }
    plan::ProfileSet set = plan::profiles_from_runs(runs, model);
    set.provenance.command = command + " --gpu-model " + model.key;
    set.provenance.source = source;
    const std::string text = plan::write_profiles_json(set);
    if (o.output.empty()) {
        std::cout << text;
    } else {
        std::ofstream out(o.output);
        if (!out)
            throw input_error("cannot write " + o.output);
        out << text;
        std::cerr << "migscope profile export: " << set.jobs.size() << " job profiles written to "
                  << o.output << '\n';
    }
    return kExitOk;
}

}  // namespace

void add_profile_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<ProfileOptions>();
    CLI::App* cmd = app.add_subcommand(
        "profile",
        "Measure each job alone on each partition size for the planner (short steady-state runs "
        "of `migscope run`: green backend per size, sequential on the whole GPU), stored in "
        "--db; `profile export` writes the planner's profile file from the store.");
    cmd->add_option("--jobs", o->jobs, "Comma list of WORKLOAD[:MODE][:BATCH]");
    cmd->add_option("--sizes", o->sizes,
                    "Comma list of MIG profiles to measure on (default: every profile of the "
                    "model below the full GPU)");
    cmd->add_option("--gpu-model", o->gpu_model, "GPU model whose profiles are the sizes")
        ->capture_default_str();
    cmd->add_option("--duration", o->duration_s, "Steady-state window of each run, seconds")
        ->capture_default_str();
    cmd->add_option("--reps", o->reps, "Repetitions of every (job, size)")->capture_default_str();
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    cmd->add_option("--idle-probe", o->idle_probe_s,
                    "Seconds of idle board power sampled before each run (the planner needs it)")
        ->capture_default_str();
    cmd->add_option("--db", o->db, "Results store the runs go to (created if missing)");
    cmd->add_option("--label", o->label, "Label kept with every run")->capture_default_str();
    cmd->add_option("--run-dir", o->run_dir,
                    "Where each run's files go (default migscope-runs/profile-DATE)");
    cmd->add_option("--worker", o->worker,
                    "migscope-worker binary (default: found beside migscope)");
    cmd->add_flag_callback(
        "--no-cuda-graph", [o] { o->cuda_graph = false; },
        "Profile eager steps: no CUDA graph (by default every job replays its step as "
        "a CUDA graph, as migscope run does)");

    auto e = std::make_shared<ExportOptions>();
    CLI::App* exp = cmd->add_subcommand(
        "export",
        "Write the planner's profile file (JSON, format migscope-profiles v1) from a results "
        "store: medians of single-job runs, corrections from runs of several jobs");
    exp->add_option("--db", e->dbs,
                    "Results store written by `migscope profile` or `run --db`; repeat it to "
                    "take profiles from one store and calibration mixes from another")
        ->required();
    exp->add_option("--gpu-model", e->gpu_model, "GPU model of the runs")->capture_default_str();
    exp->add_option("-o,--output", e->output, "Write here instead of stdout");
    exp->callback([e, &action] { action = [e] { return export_command(*e); }; });

    cmd->callback([o, cmd, exp, &action] {
        if (cmd->got_subcommand(exp))
            return;
        if (o->jobs.empty() || o->db.empty())
            throw input_error("profile: give --jobs and --db (or `profile export --db FILE`)");
        action = [o] { return profile_command(*o); };
    });
}

}  // namespace migscope::cli
