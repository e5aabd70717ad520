// `migscope plan`: recommends a layout and an assignment for a job set and an objective from
// measured profiles, with the baselines it beats, the top alternatives and the Pareto front;
// `--verify` runs the top candidates on the GPU and sets measured against predicted.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "core/text_file.h"
#include "core/folders.h"
#include "core/text.h"
#include "core/user_text.h"
#include "interrupt.h"
#include "mig/catalog.h"
#include "output_file.h"
#include "partition/backend_traits.h"
#include "partition/job.h"
#include "plan/objective.h"
#include "plan/search.h"
#include "plan/verify.h"
#include "report/deploy_output.h"
#include "report/plan_output.h"
#include "report/slurm_output.h"
#include "runner/memory_fit.h"
#include "runner/plan_jobs.h"
#include "runner/plan_runner.h"
#include "runner/profile_source.h"

namespace migscope::cli {
namespace {

struct PlanOptions {
    std::string jobs;
    std::string jobs_file;
    std::string work;     // steps: one for every job or one per job
    std::string weights;  // seconds of whole-GPU work: one or one per job
    std::string objective = "energy";
    std::string gpu_model = "h200";
    std::string backend = "mig";  // what the partitions are: mig instances, green contexts or mps
    size_t gpus = 1;
    std::string layout;          // a layout of the user's own, predicted beside the plan's
    std::vector<size_t> assign;  // --layout: each job's partition in it
    std::string profiles;     // JSON file or results store; default data/profiles-MODEL.json
    std::string model_error;  // residuals file, "none"; default data/model-error-MODEL.json
    std::string start_delay;  // start-delay file, "none"; default data/start-delay-MODEL.json
    double min_speed = 0;
    size_t top = 3;
    std::string method = "auto";
    std::string format = "table";
    std::string output;
    std::string image;                      // --format k8s: the Jobs' container image
    std::string job_namespace = "default";  // --format k8s: the Jobs' namespace
    std::string k8s_base_config;            // --format k8s: a ConfigMap to merge into
    std::string slurm_gres_type = "nvml";   // --format slurm: how MIG GRES types are named
    bool verify = false;
    bool apply = false;           // --verify --backend mig: make each candidate's instances
    double idle_probe_s = 2;      // --verify: idle power sampled before and after each run
    double marginal_probe_s = 3;  // --verify: each job's marginal power probe (no queues)
    unsigned gpu = 0;             // --verify: GPU index
    std::string db;               // --verify: store the runs here
    std::string run_dir;
    std::string worker;
};

// Writes a deployment's files into `folder` (made if missing): each whole, or an input error
// naming it.
void write_files(const std::string& folder, const std::vector<report::DeployFile>& files) {
    create_folder(folder, "-o");
    for (const report::DeployFile& f : files) {
        const std::filesystem::path path = std::filesystem::path(folder) / f.name;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << f.text;
        out.close();
        if (!out)
            throw input_error("cannot write " + path.string());
        if (f.executable) {
            std::error_code ec;
            std::filesystem::permissions(path,
                                         std::filesystem::perms::owner_exec |
                                             std::filesystem::perms::group_exec |
                                             std::filesystem::perms::others_exec,
                                         std::filesystem::perm_options::add, ec);
            if (ec)
                throw input_error("cannot make " + path.string() + " executable: " + ec.message());
        }
    }
}

// Runs the top candidates on this machine's GPUs (partitions of --backend, fixed work).
plan::Verification verify(const plan::Problem& p, const plan::SearchResult& r, const PlanOptions& o,
                          plan::Objective objective) {
    runner::VerifyRequest v;
    v.first_gpu = o.gpu;
    v.gpus = o.gpus;
    v.backend = partition::parse_backend(o.backend);
    if (!o.work.empty() && o.work.find(',') == std::string::npos)  // one --work for every job
        v.work_steps = static_cast<int64_t>(runner::per_job("--work", o.work, 1).front());
    v.db = o.db;
    v.run_dir = o.run_dir.empty() ? v.run_dir : o.run_dir;
    v.measurement.worker = o.worker;
    v.measurement.apply = o.apply;
    v.measurement.idle_probe_s = o.idle_probe_s;
    v.measurement.marginal_probe_s = o.marginal_probe_s;
    return runner::verify_on_gpus(p, r, objective, v, command_run_hooks("plan"));
}

// k8s and slurm write deployments (report/deploy_output.h, slurm_output.h), from the specs
// and options of their own: not formats of report::plan_printers().
bool is_deployment(const std::string& format) {
    return format == "k8s" || format == "slurm";
}

// What cannot be asked together, refused before profiles are read or anything runs.
void check_plan_options(const PlanOptions& o, const partition::BackendTraits& backend,
                        const std::vector<plan::JobRequest>& requests) {
    // Verification measures fixed work: without it, it once ran nothing and exited 0.
    if (o.verify && o.work.empty())
        throw input_error("--verify runs each candidate's fixed work: give --work STEPS");
    if (o.verify && backend.needs_mig_mode && !o.apply)
        throw input_error(
            "--verify --backend mig makes each candidate's MIG instances and destroys them "
            "afterwards: give --apply (as root, with MIG mode enabled)");
    if (o.apply && !(o.verify && backend.needs_mig_mode))
        throw input_error("--apply makes MIG instances for --verify --backend mig only");
    const bool deploys = is_deployment(o.format);
    if (deploys && backend.partitions != partition::PartitionSource::kMigInstances)
        throw input_error("--format " + o.format +
                          " deploys MIG instances (the GPU Operator's and Slurm's MIG "
                          "support): plan with --backend mig, not " +
                          o.backend);
    if (!o.assign.empty() && o.layout.empty())
        throw input_error("--assign places jobs on the partitions of --layout: give --layout");
    if (!o.layout.empty() && o.gpus != 1)
        throw input_error("--layout is one GPU's layout: plan it with --gpus 1");
    if (!o.k8s_base_config.empty() && o.format != "k8s")
        throw input_error("--k8s-base-config merges into the ConfigMap of --format k8s only");
    if (deploys && o.verify)
        throw input_error("--format " + o.format +
                          " writes deployment files; run --verify separately");
    // One file per script: a single stream of them could only be split by text that the
    // user's arguments might also hold.
    if (o.format == "slurm" && o.output.empty())
        throw input_error(
            "--format slurm writes a folder of files (gres.conf, slurm.conf lines, an sbatch "
            "script per job, submit.sh): give -o DIR");
    for (const plan::JobRequest& r : requests) {
        if (o.verify && !r.command.empty() && !backend.runs_commands)
            throw input_error("--verify: job '" + r.name +
                              "' is a command, which green contexts cannot hold (they live in "
                              "migscope's worker): give --backend mps or mig");
    }
}

// The recommendation, as the cluster runs it: a ConfigMap and Jobs (k8s) or a folder of Slurm
// files. Made before -o is opened: a refusal leaves no empty file behind.
int write_deployment(const PlanOptions& o, const plan::Problem& problem,
                     const plan::SearchResult& result) {
    // The specs again, for what the planner does not keep: data, checkpoint, LoRA rank.
    const std::vector<partition::JobSpec> specs = partition::jobs_from_options(o.jobs, o.jobs_file);
    if (o.format == "slurm") {
        report::SlurmOptions so;
        so.gres_type = o.slurm_gres_type;
        const std::vector<report::DeployFile> files =
            report::plan_slurm(problem, result.top.front(), so, specs);
        write_files(o.output, files);
        std::cerr << "migscope plan: " << files.size() << " files in " << o.output
                  << "; submit with " << (std::filesystem::path(o.output) / "submit.sh").string()
                  << " (docs/deploy.md)\n";
        return kExitOk;
    }
    report::KubernetesOptions ko;
    ko.image = o.image;
    ko.job_namespace = o.job_namespace;
    if (!o.k8s_base_config.empty()) {
        ko.base_config_text = read_text_file(o.k8s_base_config, "--k8s-base-config");
        ko.base_config_path = o.k8s_base_config;
    }
    const std::string text = report::plan_kubernetes(problem, result.top.front(), ko, specs);
    Output output(o.output);
    output.stream() << text;
    return kExitOk;
}

int plan_command(const PlanOptions& o) {
    const mig::GpuModel& model = mig::builtin_model(o.gpu_model);
    const plan::Objective objective = plan::parse_objective(o.objective);
    const std::vector<plan::JobRequest> requests =
        runner::plan_job_requests(o.jobs, o.jobs_file, o.work, o.weights);
    std::string origin;
    const partition::BackendTraits& backend =
        partition::traits(partition::parse_backend(o.backend));
    const plan::PartitionKind kind = plan::partition_kind(o.backend);
    check_plan_options(o, backend, requests);
    plan::ProfileSet set =
        runner::load_profiles(o.profiles, model, origin, {o.jobs, o.jobs_file, o.backend});
    set.start_delay = runner::load_start_delay(o.start_delay, model);
    const plan::Problem problem = plan::make_problem(requests, set, model, {o.min_speed}, kind);
    std::string error_origin;
    const std::optional<plan::ModelError> error =
        runner::load_model_error(o.model_error, model, error_origin);
    plan::SearchOptions so;
    so.error = error ? &*error : nullptr;
    so.objective = objective;
    so.gpus = o.gpus;
    so.top_k = o.top;
    so.method = o.method == "exhaustive"  ? plan::Method::kExhaustive
                : o.method == "heuristic" ? plan::Method::kHeuristic
                                          : plan::Method::kAuto;
    const auto start = std::chrono::steady_clock::now();
    plan::SearchResult result;
    try {
        if (!o.layout.empty())
            so.given = runner::given_layout(o.layout, o.assign, model, problem.jobs.size());
        result = plan::search(problem, so);
    } catch (const Error& e) {
        throw with_flag_names(e);
    }
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    if (is_deployment(o.format))
        return write_deployment(o, problem, result);
    const report::PlanReport plan{problem, result,     set,       origin,      o.objective,
                                  o.gpus,  elapsed_ms, o.backend, error_origin};
    Output output(o.output);  // before --verify's runs: an unwritable -o is refused first
    const std::string title = "migscope run, " +
                              (backend.partitions == partition::PartitionSource::kMigInstances
                                   ? std::string("MIG instances")
                                   : o.backend + " SM partitions") +
                              ", --work " + o.work;
    // The table shows the plan before --verify's runs (minutes), and their outcome after; json
    // is one document, printed after them; yaml writes the configs alone, unverified, as it did.
    const bool table_first = o.verify && o.format == "table";
    if (table_first) {
        report::plan_printers().print(o.format, {plan, nullptr, title}, output.stream());
        output.stream().flush();
    }
    std::optional<plan::Verification> verification;
    if (o.verify && o.format != "yaml")
        verification = verify(problem, result, o, objective);
    const report::PlanOutput answer{plan, verification ? &*verification : nullptr, title};
    if (table_first)
        report::print_verification_section(answer, output.stream());
    else
        report::plan_printers().print(o.format, answer, output.stream());
    return kExitOk;
}

// The printers' formats (report/plan_output.h), then the deployments this command writes itself.
std::vector<std::string> format_names() {
    std::vector<std::string> names = report::plan_printers().names();
    names.insert(names.end(), {"k8s", "slurm"});
    return names;
}

std::vector<std::string> objective_names() {
    std::vector<std::string> names;
    for (const plan::ObjectiveInfo& objective : plan::objectives())
        names.emplace_back(objective.name);
    return names;
}

}  // namespace

// Long (over 80 lines) on purpose: the command's options, one declaration each, read top to
// bottom as its --help lists them.
void add_plan_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<PlanOptions>();
    CLI::App* cmd = app.add_subcommand(
        "plan",
        "Recommend a partition layout and which job goes where, for an objective, from measured "
        "profiles (offline: the shipped data/profiles-MODEL.json, or --profiles FILE|DB).\n"
        "Example: migscope plan --jobs resnet18:32,bert-base:train:4,resnet50:32 --objective "
        "energy --work 2000");
    cmd->add_option("--jobs", o->jobs, "Comma list of WORKLOAD[:MODE][:BATCH]");
    path_option(cmd->add_option(
        "--jobs-file", o->jobs_file,
        "JSON jobs file (as `migscope run --jobs-file`): built-in jobs and your own "
        "commands, planned from the profiles `migscope profile --jobs-file` measured"));
    cmd->add_option("--work", o->work,
                    "Training steps per built-in job: one number for every job, or one per job "
                    "(1 for a command: its work is one run of it)");
    cmd->add_option("--weights", o->weights,
                    "Instead of --work: each job's work as seconds of its run alone on the whole "
                    "GPU, one for every job or one per job (default 60 each)");
    cmd->add_option("--objective", o->objective,
                    "energy (least board energy), throughput (the work over the makespan: "
                    "one after another on the whole GPU is 1), aggregate-throughput (the rate "
                    "a layout sustains for a stream of jobs like these), makespan, or edp "
                    "(energy × makespan)")
        ->check(values_named(objective_names()))
        ->capture_default_str();
    cmd->add_option("--gpu-model", o->gpu_model, "GPU model (" + mig::known_model_keys() + ")")
        ->capture_default_str();
    cmd->add_option("--gpus", o->gpus, "GPUs of that model to plan on")->capture_default_str();
    cmd->add_option(
        "--layout", o->layout,
        "A layout of your own (one GPU, e.g. 3g.71gb+2g.35gb+2x1g.18gb): predicted "
        "beside the recommendation with its interval, and whether the model can tell "
        "the two apart; the best assignment on it, or --assign's; --verify runs it too");
    cmd->add_option("--assign", o->assign,
                    "--layout: each job's partition in it (from 0), e.g. 0,1,0: jobs on one "
                    "partition run one after another in job order, as `migscope run --assign`")
        ->delimiter(',');
    cmd->add_option("--backend", o->backend,
                    "mig: partitions are MIG instances with their profiles' SMs; green: SM "
                    "partitions (green contexts), which round SMs up (H200: to multiples of 8); "
                    "mps: SM shares through MPS (any job, your commands too)")
        ->check(CLI::IsMember(partition::backend_names(partition::plans_partitions)))
        ->capture_default_str();
    path_option(
        cmd->add_option("--profiles", o->profiles,
                        "Profile file (JSON) or results store (SQLite) (default: the shipped "
                        "data/profiles-MODEL.json)"));
    cmd->add_option("--model-error", o->model_error,
                    "The model's measured residuals, for every figure's interval and the "
                    "recommendation (a file from `migscope profile residuals`, or none; default: "
                    "the shipped data/model-error-MODEL.json)");
    cmd->add_option("--start-delay", o->start_delay,
                    "The start delay of jobs starting together on green partitions (a file, or "
                    "none; default: the shipped data/start-delay-MODEL.json)");
    cmd->add_option("--min-speed", o->min_speed,
                    "Each job keeps at least this fraction of its whole-GPU speed (0 to 1)")
        ->capture_default_str();
    cmd->add_option("--top", o->top, "Alternatives to list")->capture_default_str();
    cmd->add_option("--method", o->method,
                    "auto (exhaustive on one GPU up to 9 jobs), exhaustive or heuristic")
        ->check(CLI::IsMember({"auto", "exhaustive", "heuristic"}))
        ->capture_default_str();
    cmd->add_option("--format", o->format,
                    "table, json, yaml (the top layouts as a mig-parted config), k8s (the "
                    "recommendation for NVIDIA's GPU Operator: mig-parted ConfigMap, node labels, "
                    "a Job per job; needs --image) or slurm (a folder, -o DIR: gres.conf with "
                    "AutoDetect=nvml or every device's files, slurm.conf lines, an sbatch script "
                    "per job, submit.sh); k8s and slurm: --backend mig only (docs/deploy.md)")
        ->check(CLI::IsMember(format_names()))
        ->capture_default_str();
    path_option(
        cmd->add_option("-o,--output", o->output,
                        "Write here instead of stdout (--format slurm: the folder of its files)"));
    cmd->add_option("--image", o->image,
                    "--format k8s: the container image of every Job (no default: there is no "
                    "image that holds your jobs; built-in jobs need migscope in it)");
    cmd->add_option("--namespace", o->job_namespace, "--format k8s: the Jobs' namespace")
        ->capture_default_str();
    path_option(cmd->add_option(
        "--k8s-base-config", o->k8s_base_config,
        "--format k8s: your mig-parted ConfigMap (or mig-parted file) to merge the plan's "
        "configs into, its configs kept and a name clash refused; without it NVIDIA's default "
        "configs (all-disabled, all-balanced, all-1g.18gb, ...) are kept beside the plan's"));
    cmd->add_option("--slurm-gres-type", o->slurm_gres_type,
                    "--format slurm: the MIG devices' GRES types, as slurmd names them: nvml "
                    "(Slurm 23.02.6 and later: nvidia_h200_3g.71gb), nvml-legacy (21.08 to "
                    "23.02.5: nvidia_h200_3g.70gb, the memory in GiB), or a template of text, "
                    "{gpu} (nvidia_h200), {profile} (3g.71gb) and {size} (3g.70gb), e.g. "
                    "nvidia_h200_nvl_{profile} for H200 NVL boards")
        ->capture_default_str();
    cmd->add_flag("--verify", o->verify,
                  "Run the top candidates as `migscope run` would (--backend green, mps, or mig "
                  "with --apply; --work; queued jobs through --assign) and print predicted "
                  "against measured, and how far the recommendation is from the best measured; "
                  "--gpus N: each candidate's GPUs at once, per GPU and in total (tested on a "
                  "fake NVML only so far); with --db, candidates measured there are not run "
                  "again");
    cmd->add_flag("--apply", o->apply,
                  "--verify --backend mig: create each candidate's MIG instances and destroy "
                  "them afterwards (root; MIG mode enabled; the whole-GPU baseline is not run)");
    cmd->add_option("--gpu", o->gpu, "--verify: GPU index (NVML); with --gpus N, the first of N")
        ->capture_default_str();
    cmd->add_option("--idle-probe", o->idle_probe_s,
                    "--verify: seconds of idle board power sampled before and after each run "
                    "(each job's attributed energy needs it; 0: none)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--marginal-probe", o->marginal_probe_s,
                    "--verify: seconds the mix without each job first runs, in a run without "
                    "queues, so that each job's energy is attributed by what it adds (0: by "
                    "partition size x busy seconds; docs/runs.md)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    path_option(
        cmd->add_option("--db", o->db, "--verify: also store the runs in this results store"));
    path_option(
        cmd->add_option("--run-dir", o->run_dir,
                        "--verify: where the runs' files go (default migscope-runs/plan-verify)"));
    path_option(cmd->add_option("--worker", o->worker, "--verify: migscope-worker binary"));
    cmd->callback([o, &action] { action = [o] { return plan_command(*o); }; });
}

}  // namespace migscope::cli
