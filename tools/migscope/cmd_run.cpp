// `migscope run`: jobs side by side on partitions of one GPU (or CPU cores), measured over a
// steady-state window or as the makespan of fixed work, with board energy and attribution.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "core/version.h"
#include "mig/catalog.h"
#include "mig/layout.h"
#include "nvml/live_catalog.h"
#include "nvml/session.h"
#include "partition/backend.h"
#include "partition/mig_instances.h"
#include "partition/partitions.h"
#include "report/trace_writer.h"
#include "run_output.h"
#include "runner/memory_fit.h"
#include "runner/run.h"
#include "runner/run_record.h"
#include "store/store.h"
#include "telemetry/nvml_power_source.h"
#include "telemetry/rapl_power_source.h"
#include "worker_path.h"

namespace migscope::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
    std::string backend;  // empty: green with a GPU, cpu without
    std::string layout;
    std::string jobs;
    std::string jobs_file;
    double duration_s = 0;
    int64_t work_steps = 0;
    unsigned gpu = 0;
    unsigned warmup_steps = 3;
    double steady_cv = 0.10;
    double warmup_timeout_s = 300;
    double job_timeout_s = 3600;
    double hz = 10;
    double idle_probe_s = 2;
    std::string run_dir;
    std::string baseline = "none";
    std::string format = "table";
    std::string output;
    std::string worker;
    std::string db;     // results store; empty: none
    std::string label;  // kept with the stored run
    bool apply = false;
    bool force = false;
};

std::atomic<bool> g_interrupted{false};
void on_signal(int) {
    g_interrupted = true;
}

std::string default_run_dir(const std::string& backend) {
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
    return "migscope-runs/" + std::string(stamp) + "-" + backend;
}

std::vector<unsigned> allowed_cpu_cores() {
    cpu_set_t set;
    std::vector<unsigned> cores;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &set))
                cores.push_back(c);
        }
    }
    return cores;
}

struct Gpu {
    std::optional<nvml::Session> session;
    std::optional<nvml::Device> device;
    std::string uuid;
    mig::GpuModel model;
};

std::unique_ptr<Gpu> open_gpu(unsigned index) {
    auto owner = std::make_unique<Gpu>();
    Gpu& g = *owner;
    g.session.emplace(nvml::Session::open());
    g.device.emplace(g.session->device(index));
    const auto uuid = g.device->uuid().value;
    if (!uuid)
        throw unavailable_error("GPU " + std::to_string(index) + ": NVML gives no UUID");
    g.uuid = *uuid;
    const auto name = g.device->name().value.value_or("");
    if (const mig::GpuModel* builtin = mig::match_builtin_by_device_name(name))
        g.model = *builtin;
    else if (auto live = nvml::read_live_model(*g.device))
        g.model = live->model;
    if (!g.model.sm_count)
        throw unavailable_error("GPU " + name + ": SM count unknown (not in the built-in catalog)");
    return owner;
}

// What the stored run records about where it ran. The CLI does not link torch: torch_version
// stays empty (NULL) here.
store::Provenance provenance_of(const Gpu* gpu) {
    store::Provenance p;
    p.migscope_version = kVersion;
    p.migscope_commit = kGitCommit;
    if (!gpu)
        return p;
    p.gpu_name = gpu->device->name().value;
    p.gpu_uuid = gpu->uuid;
    p.driver_version = gpu->session->driver_version();
    if (const std::optional<int> cuda = gpu->session->cuda_driver_version())
        p.cuda_driver_version =
            std::to_string(*cuda / 1000) + "." + std::to_string(*cuda % 1000 / 10);
    const nvml::Reading<nvml::MigMode> mig = gpu->device->mig_mode();
    if (mig.value)
        p.mig_mode = mig.value->current_enabled ? "enabled" : "disabled";
    else if (!mig.supported())
        p.mig_mode = "unsupported";
    return p;
}

// The run's whole power trace as CSV (times from the run's start), when there is one.
void write_trace(const runner::RunResult& run, const std::string& path) {
    if (run.trace.empty())
        return;
    std::ofstream out(path);
    report::TraceWriter writer(out, report::TraceFormat::kCsv, run.trace_origin,
                               run.trace.front().energy_j);
    writer.write_header();
    for (const telemetry::Sample& sample : run.trace)
        writer.write(sample);
}

int run_command(RunOptions o) {
    if ((o.duration_s > 0) == (o.work_steps > 0))
        throw input_error("give exactly one of --duration S and --work STEPS");
    if (o.jobs.empty() == o.jobs_file.empty())
        throw input_error("give exactly one of --jobs and --jobs-file");
    std::vector<partition::JobSpec> jobs =
        o.jobs.empty() ? partition::read_jobs_file(o.jobs_file) : partition::parse_job_list(o.jobs);

    // The GPU, when there is one; without one the cpu backend is the default.
    std::unique_ptr<Gpu> gpu;
    std::string gpu_problem;
    try {
        gpu = open_gpu(o.gpu);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kInput)
            throw;
        gpu_problem = e.what();
    }
    if (o.backend.empty())
        o.backend = gpu ? "green" : "cpu";
    const partition::BackendKind kind = partition::parse_backend(o.backend);
    if (o.apply && kind != partition::BackendKind::kMig)
        throw input_error("--apply applies to the mig backend only");
    if (kind == partition::BackendKind::kMig && o.baseline == "sequential") {
        throw input_error(
            "--baseline sequential cannot run with the mig backend: the whole-GPU "
            "baseline needs MIG mode disabled (run it separately)");
    }
    if (kind != partition::BackendKind::kCpu && !gpu)
        throw unavailable_error("--backend " + o.backend + " needs a GPU: " + gpu_problem);
    if (partition::uses_layout(kind) && o.layout.empty())
        throw input_error("--backend " + o.backend + " needs --layout (one partition per job)");
    if (!partition::uses_layout(kind) && !o.layout.empty())
        throw input_error("--layout applies to the green, mps and mig backends, not " + o.backend);

    std::vector<partition::Partition> partitions;
    std::optional<partition::MigInstances> mig_instances;
    if (kind == partition::BackendKind::kMig) {
        // Profile ids as this driver reports them, where it does.
        mig::GpuModel model = gpu->model;
        if (auto live = nvml::read_live_model(*gpu->device))
            model = live->model;
        const auto terms = mig::parse_layout(o.layout, model);
        if (terms.size() != jobs.size()) {
            throw input_error("the layout has " + std::to_string(terms.size()) +
                              " partitions for " + std::to_string(jobs.size()) +
                              " jobs: give one partition per job");
        }
        mig_instances.emplace(partition::realise_mig_layout(
            *gpu->device, model, terms,
            o.apply ? partition::ApplyMode::kApply : partition::ApplyMode::kUseExisting));
        for (const partition::MigInstance& m : mig_instances->instances()) {
            partition::Partition p;
            p.label = m.profile;
            p.sms = m.sm_count;
            p.memory_gib = static_cast<double>(m.memory_bytes) / (1024.0 * 1024 * 1024);
            p.device = m.uuid;
            partitions.push_back(p);
        }
    } else if (kind == partition::BackendKind::kCpu)
        partitions = partition::cpu_partitions(allowed_cpu_cores(), jobs.size());
    else if (partition::uses_layout(kind))
        partitions = partition::layout_partitions(mig::parse_layout(o.layout, gpu->model),
                                                  gpu->model, jobs.size(), gpu->uuid);
    else
        partitions = partition::whole_gpu_partitions(gpu->model, jobs.size(), gpu->uuid);

    // Refuse jobs that are known not to fit their partition's memory, before anything starts.
    const char* data_dir = std::getenv("MIGSCOPE_DATA_DIR");
    const std::vector<std::string> misfits = runner::memory_misfits(
        jobs, partitions,
        runner::read_memory_records(std::string(data_dir ? data_dir : MIGSCOPE_DEFAULT_DATA_DIR) +
                                    "/peak-memory-h200.json"));
    std::string misfit_text;
    for (const std::string& m : misfits)
        misfit_text += (misfit_text.empty() ? "" : "; ") + m;
    if (!misfits.empty() && !o.force)
        throw input_error(misfit_text + " (--force runs it anyway, to observe the failure)");

    // The store opens before anything runs: a bad path fails now, not after the run.
    std::optional<store::Store> db;
    if (!o.db.empty())
        db.emplace(store::Store::open(o.db));

    if (o.run_dir.empty())
        o.run_dir = default_run_dir(o.backend);
    fs::create_directories(o.run_dir);

    std::unique_ptr<telemetry::PowerSource> power;
    if (kind == partition::BackendKind::kCpu) {
        try {
            power = std::make_unique<telemetry::RaplPowerSource>();
        } catch (const Error& e) {
            std::cerr << "migscope run: CPU energy not measured: " << e.what() << '\n';
        }
    } else {
        power = std::make_unique<telemetry::NvmlPowerSource>(*gpu->device);
    }

    runner::RunSpec spec;
    spec.jobs = jobs;
    spec.partitions = partitions;
    spec.layout = o.layout;
    spec.mode = o.duration_s > 0 ? runner::RunMode::kDuration : runner::RunMode::kWork;
    spec.duration_s = o.duration_s;
    spec.work_steps = o.work_steps;
    spec.warmup_steps = o.warmup_steps;
    spec.steady.max_cv = o.steady_cv;
    spec.warmup_timeout_s = o.warmup_timeout_s;
    spec.job_timeout_s = o.job_timeout_s;
    spec.sample_hz = o.hz;
    if (gpu)
        spec.device_sms = gpu->model.sm_count;
    spec.idle_probe_s = o.idle_probe_s;
    spec.run_dir = o.run_dir;

    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    runner::RunHooks hooks;
    hooks.progress = [](const std::string& line) { std::cerr << "migscope run: " << line << '\n'; };
    hooks.interrupt = &g_interrupted;

    partition::BackendOptions bo;
    bo.worker_path = find_worker(o.worker);
    bo.device_sms = gpu && gpu->model.sm_count ? *gpu->model.sm_count : 0;
    const std::string device = gpu ? gpu->uuid : "";

    auto execute = [&](partition::BackendKind k, const std::vector<partition::Partition>& parts,
                       const std::string& layout, const std::string& dir) {
        fs::create_directories(dir);
        partition::BackendOptions options = bo;
        options.run_dir = fs::absolute(dir).string();
        auto backend = partition::make_backend(k, options, device);
        runner::RunSpec s = spec;
        s.partitions = parts;
        s.layout = layout;
        runner::RunResult r = runner::execute_run(s, *backend, power.get(), hooks);
        for (const std::string& problem : backend->release())
            r.warnings.push_back(problem);
        return r;
    };

    const std::string started_at = runner::utc_now_iso8601();
    runner::RunResult result = execute(kind, partitions, o.layout, o.run_dir);
    for (const std::string& m : misfits)
        result.warnings.push_back("run with --force: " + m);
    if (mig_instances) {
        for (const std::string& problem : mig_instances->release())
            result.warnings.push_back(problem);
    }
    std::optional<runner::RunResult> baseline;
    std::string baseline_started_at;
    if (o.baseline == "sequential" && kind != partition::BackendKind::kSequential &&
        !result.interrupted) {
        std::cerr << "migscope run: baseline: the same jobs one after another on the whole "
                  << (gpu ? "GPU" : "CPU") << '\n';
        const std::vector<partition::Partition> whole =
            gpu ? partition::whole_gpu_partitions(gpu->model, jobs.size(), device)
                : std::vector<partition::Partition>(
                      jobs.size(), partition::cpu_partitions(allowed_cpu_cores(), 1).front());
        baseline_started_at = runner::utc_now_iso8601();
        baseline = execute(partition::BackendKind::kSequential, whole, "", o.run_dir + "/baseline");
        runner::normalise_throughput(result, baseline->jobs);
        runner::normalise_throughput(*baseline, baseline->jobs);
    }

    // Everything measured is kept in the run directory, whatever is printed.
    runner::RecordContext context{started_at, provenance_of(gpu.get()), store::RunRole::kRun,
                                  std::nullopt, o.label};
    runner::RecordContext baseline_context = context;
    baseline_context.started_at = baseline_started_at;
    baseline_context.role = store::RunRole::kBaseline;
    nlohmann::json doc = {{"run", run_json(result, context)}};
    if (baseline) {
        doc["baseline"] = run_json(*baseline, baseline_context);
        doc["comparison"] = comparison_json(runner::compare_with_baseline(result, *baseline));
    }
    std::ofstream(o.run_dir + "/result.json") << doc.dump(2) << '\n';
    write_trace(result, o.run_dir + "/trace.csv");
    if (baseline)
        write_trace(*baseline, o.run_dir + "/baseline/trace.csv");
    if (db) {
        // The run and its baseline are two transactions: a crash between them keeps the run.
        const int64_t id = db->add_run(runner::to_run_record(result, context));
        std::cerr << "migscope run: stored as run " << id << " in " << o.db << '\n';
        if (baseline) {
            baseline_context.parent_id = id;
            const int64_t base_id = db->add_run(runner::to_run_record(*baseline, baseline_context));
            std::cerr << "migscope run: baseline stored as run " << base_id << '\n';
        }
    }

    std::ostream* out = &std::cout;
    std::ofstream file;
    if (!o.output.empty()) {
        file.open(o.output);
        if (!file)
            throw input_error("cannot write " + o.output);
        out = &file;
    }
    if (o.format == "json") {
        *out << doc.dump(2) << '\n';
    } else {
        print_run_table(
            result, "migscope run: " + o.backend + (o.layout.empty() ? "" : " " + o.layout), *out);
        if (baseline) {
            *out << '\n';
            print_run_table(*baseline, "baseline: sequential", *out);
            *out << '\n';
            print_comparison(result, *baseline, *out);
        }
        *out << "results, trace and job logs: " << o.run_dir << '\n';
    }
    bool all_ok = true;
    for (const runner::JobResult& r : result.jobs)
        all_ok = all_ok && r.status == runner::JobStatus::kOk;
    if (result.interrupted)
        return 130;
    return all_ok ? kExitOk : kExitFailure;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand(
        "run",
        "Run jobs side by side on partitions of one GPU and measure throughput and energy.\n"
        "Example: migscope run --backend green --layout 3g.71gb+2g.35gb+1g.18gb+1g.18gb \\\n"
        "           --jobs resnet50,bert-base,resnet18,resnet18 --duration 60");
    cmd->add_option("--backend", o->backend,
                    "green | mps | mig | timeslice | sequential | cpu (default: green with a GPU, "
                    "cpu without)");
    cmd->add_option("--layout", o->layout,
                    "MIG layout, one partition per job in job order (green, mps, mig)");
    cmd->add_option("--jobs", o->jobs,
                    "Comma list of WORKLOAD[:MODE][:BATCH], e.g. resnet18,bert-base:finetune:16");
    cmd->add_option("--jobs-file", o->jobs_file,
                    "JSON jobs file (built-in workloads and external commands); see docs/runs.md");
    cmd->add_option("--duration", o->duration_s,
                    "Steady-state window in seconds (opens when every job is steady)");
    cmd->add_option("--work", o->work_steps,
                    "Fixed work: measured steps per job; the makespan counts");
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    cmd->add_option("--warmup-steps", o->warmup_steps, "Steps each job runs before it counts")
        ->capture_default_str();
    cmd->add_option("--steady-cv", o->steady_cv,
                    "Steady state: coefficient of variation of the last 5 step times at most this")
        ->capture_default_str();
    cmd->add_option("--warmup-timeout", o->warmup_timeout_s,
                    "Open the window anyway after this many seconds (with a warning)")
        ->capture_default_str();
    cmd->add_option("--job-timeout", o->job_timeout_s,
                    "--work: a job still running after this many seconds is timed out")
        ->capture_default_str();
    cmd->add_option("--hz", o->hz, "Power sampling rate (10 to 100)")
        ->check(CLI::Range(10.0, 100.0))
        ->capture_default_str();
    cmd->add_option("--idle-probe", o->idle_probe_s,
                    "Seconds of board power sampled before starting, as idle power (0: none)")
        ->capture_default_str();
    cmd->add_option("--baseline", o->baseline,
                    "sequential: also run the jobs one after another on the whole GPU and compare")
        ->check(CLI::IsMember({"none", "sequential"}))
        ->capture_default_str();
    cmd->add_option("--run-dir", o->run_dir,
                    "Where results, the power trace and job logs go (default "
                    "migscope-runs/DATE-BACKEND)");
    cmd->add_option("--format", o->format, "table or json")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->add_option("-o,--output", o->output, "Write the output here instead of stdout");
    cmd->add_flag("--force", o->force,
                  "Run jobs whose known peak memory exceeds their partition's (to observe it)");
    cmd->add_flag("--apply", o->apply,
                  "mig: create the layout's MIG instances (root, MIG mode already enabled, no "
                  "other GPU processes) and destroy them afterwards; default: use existing ones");
    cmd->add_option("--db", o->db,
                    "Also store the run (and its baseline) in this SQLite results store, created "
                    "if missing; see `migscope results` (default: none)");
    cmd->add_option("--label", o->label, "Free-form label kept with the stored run (--db)");
    cmd->add_option("--worker", o->worker,
                    "migscope-worker binary (default: found beside migscope)");
    cmd->callback([o, &action] { action = [o] { return run_command(*o); }; });
}

}  // namespace migscope::cli
