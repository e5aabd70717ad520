// One run cell: partitions, the run, its baseline, the run directory and the store.
#include "runner/cell.h"

#include <algorithm>

#include <sched.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "activity/injection.h"
#include "core/error.h"
#include "core/folders.h"
#include "core/version.h"
#include "nvml/live_catalog.h"
#include "partition/job.h"
#include "partition/mig_instances.h"
#include "partition/partitions.h"
#include "report/json_value.h"
#include "report/trace_writer.h"
#include "runner/comparison.h"
#include "runner/run_output.h"
#include "runner/worker_path.h"
#include "telemetry/nvml_power_source.h"
#include "telemetry/rapl_power_source.h"

namespace migscope::runner {
namespace {

namespace fs = std::filesystem;
using partition::BackendKind;
using partition::PartitionSource;

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
// comes from the workers' ready events (to_run_record).
store::Provenance provenance_of(const Gpu* gpu) {
    store::Provenance p;
    p.migscope_version = kVersion;
    p.migscope_commit = kGitCommit;
    p.cuda_injection = activity::injection_in_environment();  // what the workers inherit
    if (!gpu)
        return p;
    p.gpu_name = gpu->device->name().value;
    p.gpu_uuid = gpu->uuid;
    p.driver_version = gpu->session->driver_version();
    p.power_limit_w = gpu->device->power_limit_w().value;
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

// The run's whole power trace as CSV (times from the run's start), when there is one; a runtime
// error when the file cannot be written whole.
void write_trace(const RunResult& run, const std::string& path) {
    if (run.trace.empty())
        return;
    std::ostringstream out;
    report::TraceWriter writer(out, report::TraceFormat::kCsv, run.trace_origin,
                               run.trace.front().energy_j);
    writer.write_header();
    for (const telemetry::Sample& sample : run.trace)
        writer.write(sample);
    write_file(path, out.str(), "power trace");
}

// The CPU cores split into as many equal shares as `assign` names (each named at least once),
// jobs sharing one queued on it in job order, as place_jobs queues them on a layout.
std::vector<partition::Partition> assigned_cpu_partitions(const std::vector<unsigned>& cores,
                                                          const std::vector<size_t>& assign) {
    const size_t parts = *std::max_element(assign.begin(), assign.end()) + 1;
    for (size_t k = 0; k < parts; ++k) {
        if (std::find(assign.begin(), assign.end(), k) == assign.end())
            throw input_error("assign: core share " + std::to_string(k) + " has no job");
    }
    const std::vector<partition::Partition> shares = partition::cpu_partitions(cores, parts);
    std::vector<partition::Partition> out;
    std::vector<std::optional<size_t>> last_on(parts);
    for (size_t j = 0; j < assign.size(); ++j) {
        out.push_back(shares[assign[j]]);
        out.back().after_job = last_on[assign[j]];
        last_on[assign[j]] = j;
    }
    return out;
}

// The partitions of a request on this machine. For mig, each job's place and queue, named by its
// profile; sizes and devices come from the instances when they are found or made (run_cell).
std::vector<partition::Partition> partitions_of(const Machine& machine, const CellRequest& r) {
    const Gpu* gpu = machine.gpu.get();
    const size_t n = r.jobs.size();
    switch (partition::traits(r.backend).partitions) {
        case PartitionSource::kMigInstances: {
            std::vector<partition::Partition> out;
            for (const partition::JobPlace& place : partition::place_jobs(r.layout, n, r.assign)) {
                partition::Partition p;
                p.label = r.layout.parts()[place.term].profile.name;
                p.after_job = place.after_job;
                out.push_back(p);
            }
            return out;
        }
        case PartitionSource::kCpuCores:
            if (!r.assign.empty())
                return assigned_cpu_partitions(machine.cpu_cores, r.assign);
            return partition::cpu_partitions(machine.cpu_cores, n);
        case PartitionSource::kSmShares:
            return partition::layout_partitions(r.layout, gpu->model, n, gpu->uuid, r.assign);
        case PartitionSource::kWholeGpu:
            break;
    }
    return partition::whole_gpu_partitions(gpu->model, n, gpu->uuid);
}

// The partitions of a request on this machine, each with its job's start_after_s.
std::vector<partition::Partition> placed_partitions(const Machine& machine, const CellRequest& r) {
    std::vector<partition::Partition> parts = partitions_of(machine, r);
    if (r.start_after_s.empty())
        return parts;
    if (r.start_after_s.size() != r.jobs.size())
        throw input_error("start_after_s: " + std::to_string(r.start_after_s.size()) +
                          " entries for " + std::to_string(r.jobs.size()) + " jobs");
    for (size_t j = 0; j < parts.size(); ++j) {
        const double s = r.start_after_s[j];
        if (!(s >= 0) || !std::isfinite(s))
            throw input_error("start_after_s[" + std::to_string(j) +
                              "]: must be finite seconds >= 0");
        if (s > 0 && r.work_steps <= 0)
            throw input_error("start_after_s[" + std::to_string(j) +
                              "]: a later start needs fixed work (a duration window has no start "
                              "for it)");
        parts[j].start_after_s = s;
    }
    return parts;
}

// The checks of a request that need only whether it gives a layout, not the layout itself.
void check_backend(const Machine& machine, const CellRequest& r, bool layout_given) {
    const std::string backend = partition::to_string(r.backend);
    const partition::BackendTraits& t = partition::traits(r.backend);
    if (t.needs_mig_mode && r.baseline) {
        throw input_error("a sequential baseline cannot run with the " + backend +
                          " backend: the whole-GPU baseline needs MIG mode disabled (run it "
                          "separately)");
    }
    if (t.needs_gpu && !machine.gpu)
        throw unavailable_error("backend " + backend + " needs a GPU: " + machine.gpu_problem);
    if (t.takes_layout && !layout_given)
        throw input_error("backend " + backend + " needs a layout (one partition per job)");
    if (!t.takes_layout && layout_given)
        throw input_error("a layout applies to the " +
                          partition::backend_names_text(partition::takes_layout, "and") +
                          " backends, not " + backend);
    if (!r.assign.empty() && !t.takes_layout && t.partitions != PartitionSource::kCpuCores)
        throw input_error("assign places jobs on the layout's partitions: it needs a layout");
}

}  // namespace

Machine open_machine(unsigned index) {
    Machine m;
    try {
        m.gpu = open_gpu(index);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::kInput)
            throw;
        m.gpu_problem = e.what();
    }
    m.cpu_cores = allowed_cpu_cores();
    m.memory = read_memory_records(data_dir() + "/peak-memory-h200.json");
    return m;
}

void require_gpu(const Machine& machine, const std::string& what) {
    if (!machine.gpu)
        throw unavailable_error(what + " needs a GPU: " + machine.gpu_problem);
}

void require_planned_model(const Machine& machine, unsigned index, const mig::GpuModel& planned,
                           const std::string& what) {
    const mig::GpuModel& here = machine.gpu->model;
    if (here.key == planned.key)
        return;
    const std::string name = machine.gpu->device->name().value.value_or(here.description);
    throw input_error(what + ": GPU " + std::to_string(index) + " is " + name + " (" + here.key +
                      "), but the plan is for " + planned.key +
                      " (--gpu-model, and its profiles): profile this GPU (migscope profile) and "
                      "plan with --gpu-model " +
                      here.key);
}

std::string data_dir() {
    if (const char* given = std::getenv("MIGSCOPE_DATA_DIR"))
        return given;
    // Installed: PREFIX/bin/migscope reads PREFIX/share/migscope, wherever PREFIX was moved.
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
    const fs::path installed = self / ".." / "share" / "migscope";
    if (!ec && fs::is_directory(installed, ec))
        return fs::weakly_canonical(installed, ec).string();
    return MIGSCOPE_DEFAULT_DATA_DIR;  // the build tree: the source tree's data/
}

partition::Layout parse_request_layout(const Machine& machine, const CellRequest& r,
                                       std::string_view text) {
    check_backend(machine, r, !text.empty());
    if (text.empty())
        return {};
    require_gpu(machine, "a layout");  // every backend that takes a layout needs a GPU
    try {
        return partition::Layout::parse(text, machine.gpu->model);
    } catch (const Error& e) {
        throw Error(e.kind(), std::string("layout: ") + e.what());
    }
}

std::vector<std::string> check_cell(const Machine& machine, const CellRequest& r) {
    check_backend(machine, r, !r.layout.empty());
    const partition::BackendTraits& t = partition::traits(r.backend);
    if (!r.layout.empty() && machine.gpu && r.layout.model_key() != machine.gpu->model.key)
        throw input_error("layout: " + r.layout.text() + " is a layout of " + r.layout.model_key() +
                          ", but this GPU is " +
                          (machine.gpu->model.key.empty() ? machine.gpu->model.description
                                                          : machine.gpu->model.key));
    const std::vector<partition::Partition> parts = placed_partitions(machine, r);
    const bool queues = std::any_of(parts.begin(), parts.end(),
                                    [](const partition::Partition& p) { return p.after_job; });
    if (queues && r.work_steps <= 0)
        throw input_error(
            "assign puts several jobs on one partition: they queue one after "
            "another, which needs fixed work (a duration window has no end for them)");
    // Instance sizes are known at run time.
    if (parts.empty() || t.partitions == PartitionSource::kMigInstances)
        return {};
    return memory_misfits(r.jobs, parts, machine.memory);
}

std::string local_time_stamp() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", std::localtime(&now));
    return text;
}

void require_fit(const std::vector<std::string>& misfits, bool force) {
    if (misfits.empty() || force)
        return;
    std::string text;
    for (const std::string& line : misfits)
        text += (text.empty() ? "" : "; ") + line;
    throw input_error(text + " (--force runs it anyway, to observe the failure)");
}

bool CellOutcome::all_ok() const {
    for (const JobResult& j : run.jobs) {
        if (j.status != JobStatus::kOk)
            return false;
    }
    return true;
}

namespace {

// Refuses an unknown built-in workload before anything starts: it would start a worker only to
// fail.
void check_builtin_workloads(const Measurement& m, const CellRequest& r) {
    if (!builtin_worker(m.worker))
        return;
    for (const partition::JobSpec& j : r.jobs) {
        if (!j.external())
            partition::check_builtin_workload(j.workload, "job '" + j.name + "'");
    }
}

// The cell's MIG instances, created (--apply) or found, with each job's partition set to its
// instance; none for a backend that does not run on MIG instances.
std::optional<partition::MigInstances> realise_instances(
    const Gpu* gpu, const Measurement& m, const CellRequest& r,
    std::vector<partition::Partition>& partitions) {
    if (partition::traits(r.backend).partitions != PartitionSource::kMigInstances)
        return std::nullopt;
    // Profile ids as this driver reports them, where it does.
    mig::GpuModel model = gpu->model;
    if (auto live = nvml::read_live_model(*gpu->device))
        model = live->model;
    std::optional<partition::MigInstances> mig_instances;
    mig_instances.emplace(partition::realise_mig_layout(
        *gpu->device, model, r.layout.terms(),
        m.apply ? partition::ApplyMode::kApply : partition::ApplyMode::kUseExisting));
    const std::vector<partition::MigInstance>& instances = mig_instances->instances();
    const std::vector<partition::JobPlace> places =
        partition::place_jobs(r.layout, r.jobs.size(), r.assign);
    for (size_t j = 0; j < partitions.size(); ++j) {  // each job on its partition's instance
        const partition::MigInstance& i = instances.at(places[j].term);
        partition::Partition& p = partitions[j];
        p.label = i.profile;
        p.sms = i.sm_count;
        p.memory_gib = static_cast<double>(i.memory_bytes) / (1024.0 * 1024 * 1024);
        p.device = i.uuid;
    }
    return mig_instances;
}

// The backend's energy meter: the CPU package (RAPL; none, said, where it cannot be read) or
// the GPU's board.
std::unique_ptr<telemetry::PowerSource> open_power_source(const Gpu* gpu, const CellRequest& r,
                                                          const RunHooks& hooks) {
    if (partition::traits(r.backend).energy != partition::EnergyMeter::kCpuPackage)
        return std::make_unique<telemetry::NvmlPowerSource>(*gpu->device);
    try {
        return std::make_unique<telemetry::RaplPowerSource>();
    } catch (const Error& e) {
        if (hooks.progress)
            hooks.progress(std::string("CPU energy not measured: ") + e.what());
    }
    return nullptr;
}

// The run's settings from the measurement's and the cell's (partitions and directory apart).
RunSpec run_spec_of(const Measurement& m, const CellRequest& r, const Gpu* gpu) {
    RunSpec spec;
    spec.jobs = r.jobs;
    spec.mode = r.duration_s > 0 ? RunMode::kDuration : RunMode::kWork;
    spec.duration_s = r.duration_s;
    spec.work_steps = r.work_steps;
    spec.warmup_steps = m.warmup_steps;
    spec.cuda_graph = m.cuda_graph;
    spec.steady.max_cv = m.steady_cv;
    spec.warmup_timeout_s = m.warmup_timeout_s;
    spec.job_timeout_s = m.job_timeout_s;
    spec.sample_hz = m.hz;
    if (gpu)
        spec.device_sms = gpu->model.sm_count;
    spec.idle_probe_s = m.idle_probe_s;
    spec.marginal_probe_s = m.marginal_probe_s;
    if (spec.mode == RunMode::kDuration)
        spec.marginal_probe_s = std::min(spec.marginal_probe_s, spec.duration_s);
    return spec;
}

// Everything measured, kept in the run directory whatever is printed: result.json and the
// traces. A file that cannot be written (a full disk) is said, after the run is stored.
void write_run_dir(const CellRequest& r, CellOutcome& out) {
    out.doc = {{"run", run_json(out.run, out.context)}};
    if (out.baseline) {
        out.doc["baseline"] = run_json(*out.baseline, out.baseline_context);
        out.doc["comparison"] = comparison_json(compare_with_baseline(out.run, *out.baseline));
    }
    try {
        write_file(r.run_dir + "/result.json", report::utf8_dump(out.doc, 2) + '\n', "result.json");
        write_trace(out.run, r.run_dir + "/trace.csv");
        if (out.baseline)
            write_trace(*out.baseline, r.run_dir + "/baseline/trace.csv");
    } catch (const Error& e) {
        out.run_dir_problem = e.what();
    }
}

// The run and its baseline into the store, as two transactions: a crash between them keeps the
// run.
void store_outcome(store::Store& db, const CellRequest& r, CellOutcome& out) {
    CellRows rows;
    rows.run.push_back(to_run_record(out.run, out.context));
    if (out.baseline)
        rows.baseline.push_back(to_run_record(*out.baseline, out.baseline_context));
    const StoredIds ids = store_cell(db, rows, r.earlier, r.run_dir, out.unstored);
    if (!ids.run.empty())
        out.run_id = ids.run.front();
    if (!ids.baseline.empty())
        out.baseline_id = ids.baseline.front();
}

}  // namespace

CellOutcome run_cell(const Machine& machine, const Measurement& m, const CellRequest& r,
                     store::Store* db, const RunHooks& hooks) {
    check_builtin_workloads(m, r);
    const std::vector<std::string> misfits = check_cell(machine, r);
    require_fit(misfits, m.force);

    create_folder(r.run_dir, "run directory");  // before anything is made on the GPU

    const Gpu* gpu = machine.gpu.get();
    std::vector<partition::Partition> partitions = placed_partitions(machine, r);
    std::optional<partition::MigInstances> mig_instances = realise_instances(gpu, m, r, partitions);
    std::unique_ptr<telemetry::PowerSource> power = open_power_source(gpu, r, hooks);
    const RunSpec spec = run_spec_of(m, r, gpu);

    partition::BackendOptions bo;
    bo.worker_path = find_worker(m.worker);
    bo.device_sms = gpu && gpu->model.sm_count ? *gpu->model.sm_count : 0;
    const std::string device = gpu ? gpu->uuid : "";

    auto execute = [&](BackendKind k, const std::vector<partition::Partition>& parts,
                       const std::string& layout, const std::string& dir) {
        create_folder(dir, "run directory");
        partition::BackendOptions options = bo;
        options.run_dir = fs::absolute(dir).string();
        auto backend = partition::make_backend(k, options, device);
        RunSpec s = spec;
        s.partitions = parts;
        s.layout = layout;
        s.run_dir = dir;
        RunResult result = execute_run(s, *backend, power.get(), hooks);
        for (const std::string& problem : backend->release())
            result.warnings.push_back(problem);
        return result;
    };

    CellOutcome out;
    RecordContext context{
        utc_now_iso8601(), provenance_of(gpu), store::RunRole::kRun, std::nullopt, r.label,
        r.experiment,      r.cell_key};
    out.run = execute(r.backend, partitions, r.layout.text(), r.run_dir);
    for (const std::string& line : misfits)
        out.run.warnings.push_back("run with --force: " + line);
    if (mig_instances) {
        for (const std::string& problem : mig_instances->release())
            out.run.warnings.push_back(problem);
    }
    RecordContext baseline_context = context;
    baseline_context.role = store::RunRole::kBaseline;
    if (r.baseline && partition::traits(r.backend).plan_role != partition::PlanRole::kBaseline &&
        !out.run.interrupted) {
        if (hooks.progress)
            hooks.progress(std::string("baseline: the same jobs one after another on the whole ") +
                           (gpu ? "GPU" : "CPU"));
        const std::vector<partition::Partition> whole =
            gpu ? partition::whole_gpu_partitions(gpu->model, r.jobs.size(), device)
                : std::vector<partition::Partition>(
                      r.jobs.size(), partition::cpu_partitions(machine.cpu_cores, 1).front());
        baseline_context.started_at = utc_now_iso8601();
        out.baseline = execute(partition::baseline_backend(), whole, "", r.run_dir + "/baseline");
        normalise_throughput(out.run, out.baseline->jobs);
        normalise_throughput(*out.baseline, out.baseline->jobs);
    }
    out.context = context;
    out.baseline_context = baseline_context;
    write_run_dir(r, out);
    if (db)
        store_outcome(*db, r, out);
    return out;
}

}  // namespace migscope::runner
