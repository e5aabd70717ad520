// A run over several GPUs of one host: a run cell per GPU on its own thread, per-GPU energy and
// the host total, failed GPUs kept apart from the others.
#include "runner/host_run.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/folders.h"
#include "core/version.h"
#include "nvml/nvml_api.h"
#include "report/json_value.h"
#include "runner/host_output.h"

namespace migscope::runner {
namespace {

std::string gpu_name(unsigned gpu) {
    return "GPU " + std::to_string(gpu);
}

// The GPU has fallen off the bus: NVML answers "GPU is lost" for it.
bool gpu_lost(const Machine& machine) {
    return machine.gpu && machine.gpu->device->energy_j().code == nvml::api::kErrorGpuIsLost;
}

// A run that never came to be: each job failed with the GPU.
RunResult failed_run(const CellRequest& r, unsigned gpu, const std::string& failure) {
    RunResult run;
    run.backend = r.backend;
    run.mode = r.duration_s > 0 ? RunMode::kDuration : RunMode::kWork;
    run.layout = r.layout.text();
    for (const partition::JobSpec& spec : r.jobs) {
        JobResult j;
        j.spec = spec;
        j.partition.label = gpu_name(gpu);
        j.status = JobStatus::kGpuFailed;
        j.message = failure;
        run.jobs.push_back(std::move(j));
    }
    run.warnings.push_back(failure);
    return run;
}

// Each GPU's cell on its own thread; a GPU that fails (its run throws, or NVML loses it during
// the run) keeps what it measured and gives its unfinished jobs the status "gpu failed".
HostPhase run_phase(const HostMachines& machines, const Measurement& m,
                    const std::vector<GpuCell>& cells, const std::string& dir,
                    const HostRequest& request, store::RunRole role, const RunHooks& hooks) {
    HostPhase phase;
    phase.gpus.resize(cells.size());
    std::mutex progress_mutex;
    std::vector<RunHooks> gpu_hooks(cells.size(), hooks);
    for (size_t i = 0; i < cells.size(); ++i) {
        const std::string prefix = gpu_name(cells[i].gpu) + ": ";
        if (hooks.progress) {
            gpu_hooks[i].progress = [&, prefix](const std::string& line) {
                std::lock_guard<std::mutex> lock(progress_mutex);
                hooks.progress(prefix + line);
            };
        }
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < cells.size(); ++i) {
        threads.emplace_back([&, i] {
            const unsigned g = cells[i].gpu;
            const Machine& machine = machines.at(g);
            GpuOutcome& o = phase.gpus[i];
            o.gpu = g;
            o.uuid = machine.gpu ? machine.gpu->uuid : "";
            CellRequest r = cells[i].cell;
            r.baseline = false;
            r.run_dir = dir + "/gpu-" + std::to_string(g);
            r.label = request.label;
            r.experiment = request.experiment;
            r.cell_key = request.cell_key;
            try {
                CellOutcome cell = run_cell(machine, m, r, nullptr, gpu_hooks[i]);
                o.run = std::move(cell.run);
                o.context = std::move(cell.context);
                if (gpu_lost(machine)) {
                    o.failure = gpu_name(g) + " (" + o.uuid +
                                ") was lost during the run (NVML: GPU is lost)";
                    for (JobResult& j : o.run.jobs) {
                        if (j.status == JobStatus::kOk)
                            continue;  // ended before the GPU was lost
                        j.message = o.failure + (j.message.empty() ? "" : ": " + j.message);
                        j.status = JobStatus::kGpuFailed;
                    }
                    o.run.warnings.push_back(o.failure);
                }
            } catch (const std::exception& e) {  // this GPU's failure; the others run on
                o.failure = gpu_name(g) + " (" + o.uuid + ") failed: " + e.what();
                o.run = failed_run(r, g, o.failure);
                o.context.started_at = utc_now_iso8601();
                o.context.provenance.migscope_version = kVersion;
                o.context.provenance.migscope_commit = kGitCommit;
                o.context.provenance.gpu_uuid = o.uuid;
                o.context.label = r.label;
                o.context.experiment = r.experiment;
                o.context.cell_key = r.cell_key;
            }
            o.context.role = role;
            if (!o.failure.empty() && gpu_hooks[i].progress)
                gpu_hooks[i].progress(o.failure);
        });
    }
    for (std::thread& t : threads)
        t.join();
    phase.total = host_totals(phase.gpus);
    return phase;
}

// The phase's GPU rows, as store_cell stores them (parent_id set there).
std::vector<store::RunRecord> phase_rows(const HostPhase& phase) {
    std::vector<store::RunRecord> rows;
    for (const GpuOutcome& g : phase.gpus) {
        store::RunRecord row = to_run_record(g.run, g.context);
        row.gpu_index = g.gpu;
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

HostMachines open_gpus(const std::vector<unsigned>& indices) {
    HostMachines machines;
    for (unsigned g : indices) {
        if (machines.count(g))
            continue;
        Machine m = open_machine(g);
        if (!m.gpu)
            throw unavailable_error(gpu_name(g) + ": " + m.gpu_problem);
        machines.emplace(g, std::move(m));
    }
    return machines;
}

HostMachines open_gpus(unsigned first, size_t count) {
    std::vector<unsigned> indices;
    for (size_t g = 0; g < count; ++g)
        indices.push_back(first + static_cast<unsigned>(g));
    return open_gpus(indices);
}

HostMachines open_gpus(const HostRequest& request) {
    std::vector<unsigned> indices;
    for (const std::vector<GpuCell>* cells : {&request.gpus, &request.baseline}) {
        for (const GpuCell& c : *cells)
            indices.push_back(c.gpu);
    }
    return open_gpus(indices);
}

HostTotals host_totals(const std::vector<GpuOutcome>& gpus) {
    std::vector<report::HostGpu> figures;
    for (const GpuOutcome& g : gpus) {
        report::HostGpu f;
        f.gpu = g.gpu;
        f.window_s = g.run.window_s;
        f.energy_j = g.run.energy.counter_energy_j;
        f.idle_power_w = g.run.idle_power_w;
        f.failed = g.failed();
        f.jobs = static_cast<int64_t>(g.run.jobs.size());
        for (const JobResult& j : g.run.jobs)
            f.jobs_ok += j.status == JobStatus::kOk ? 1 : 0;
        figures.push_back(f);
    }
    return report::host_totals(!gpus.empty() && gpus.front().run.mode == RunMode::kWork
                                   ? report::HostMode::kWork
                                   : report::HostMode::kDuration,
                               figures);
}

bool HostPhase::interrupted() const {
    return std::any_of(gpus.begin(), gpus.end(),
                       [](const GpuOutcome& g) { return g.run.interrupted; });
}

bool HostPhase::all_ok() const {
    for (const GpuOutcome& g : gpus) {
        if (g.failed())
            return false;
        for (const JobResult& j : g.run.jobs) {
            if (j.status != JobStatus::kOk)
                return false;
        }
    }
    return true;
}

void check_host(const HostMachines& machines, const HostRequest& r, bool force) {
    if (r.gpus.empty())
        throw input_error("a host run needs at least one GPU");
    for (const std::vector<GpuCell>* cells : {&r.gpus, &r.baseline}) {
        std::set<unsigned> seen;
        for (const GpuCell& c : *cells) {
            const std::string name = gpu_name(c.gpu);
            if (!seen.insert(c.gpu).second)
                throw input_error(name + " is given twice: one cell per GPU");
            const auto it = machines.find(c.gpu);
            if (it == machines.end() || !it->second.gpu)
                throw unavailable_error(name + " is not open (no such GPU?)");
            const Machine& machine = it->second;
            const partition::BackendTraits& t = partition::traits(c.cell.backend);
            if (!t.needs_gpu)
                throw input_error(name + ": a host run places jobs on GPUs, not the " +
                                  std::string(t.name) + " backend");
            try {
                require_fit(check_cell(machine, c.cell), force);
            } catch (const Error& e) {
                throw Error(e.kind(), name + ": " + e.what());
            }
            const nvml::Reading<nvml::MigMode> mig = machine.gpu->device->mig_mode();
            if (!mig.value)
                continue;  // MIG unsupported or unreadable: the run will tell
            const bool enabled = mig.value->current_enabled;
            if (t.needs_mig_mode && !enabled)
                throw input_error(name + ": its part runs on MIG instances (" +
                                  c.cell.layout.text() + "), but MIG mode is disabled on it");
            if (!t.needs_mig_mode && enabled)
                throw input_error(
                    name + ": MIG mode is enabled on it, but its part (" +
                    partition::to_string(c.cell.backend) +
                    (c.cell.layout.empty() ? ", the whole GPU" : ", " + c.cell.layout.text()) +
                    ") needs the whole GPU: disable MIG mode on it");
        }
    }
}

HostOutcome run_host(const HostMachines& machines, const Measurement& m, const HostRequest& r,
                     store::Store* db, const RunHooks& hooks) {
    check_host(machines, r, m.force);
    create_folder(r.run_dir, "run directory");
    HostOutcome out;
    out.run = run_phase(machines, m, r.gpus, r.run_dir, r, store::RunRole::kRun, hooks);
    if (!r.baseline.empty() && !out.run.interrupted()) {
        if (hooks.progress)
            hooks.progress("baseline: the jobs one after another on the whole GPU, on " +
                           std::to_string(r.baseline.size()) + " GPUs at once");
        out.baseline = run_phase(machines, m, r.baseline, r.run_dir + "/baseline", r,
                                 store::RunRole::kBaseline, hooks);
    }
    out.doc = host_json(out);
    try {
        write_file(r.run_dir + "/result.json", report::utf8_dump(out.doc, 2) + '\n', "result.json");
    } catch (const Error& e) {
        out.run_dir_problem = e.what();
    }
    if (db) {
        // The run and its baseline are two transactions, as a one-GPU cell's.
        CellRows rows;
        rows.host = true;
        rows.run = phase_rows(out.run);
        if (out.baseline)
            rows.baseline = phase_rows(*out.baseline);
        const StoredIds ids = store_cell(*db, rows, r.earlier, r.run_dir, out.unstored);
        out.run_ids = ids.run;
        out.baseline_ids = ids.baseline;
    }
    return out;
}

}  // namespace migscope::runner
