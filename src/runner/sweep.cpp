// The sweep of an experiment spec: check every cell, plan what is missing, run it (on one GPU
// or several at once), one transaction per finished run.
#include "runner/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "core/error.h"
#include "core/file_lock.h"
#include "core/text.h"

namespace migscope::runner {
namespace {

namespace fs = std::filesystem;
using experiment::Cell;

// Cell key -> its stored runs, for the experiment's cells in a store.
using StoredCells = std::map<std::string, std::vector<store::StoredCell>>;

StoredCells stored_cells(store::Store& db, const std::string& experiment) {
    StoredCells stored;
    for (store::StoredCell& s : db.stored_cells(experiment))
        stored[s.cell_key].push_back(std::move(s));
    return stored;
}

// Finished: a run of it stored, with the rows of all its GPUs and none of them failed, and with
// its baseline when it has one.
bool is_stored(const Cell& c, const StoredCells& stored) {
    const auto s = stored.find(c.key);
    if (s == stored.end())
        return false;
    return std::any_of(s->second.begin(), s->second.end(), [&](const store::StoredCell& run) {
        return run.gpus == c.gpus && !run.gpu_failed && (!c.baseline || run.has_baseline);
    });
}
using Clock = std::chrono::steady_clock;

// "GPUs 2-3" for a cell of two GPUs from GPU 2.
std::string gpus_text(const Cell& c, unsigned first_gpu) {
    return fmt::format("GPUs {}-{}", first_gpu, first_gpu + c.gpus - 1);
}

std::string describe(const Cell& c, unsigned first_gpu) {
    return c.section + ": " + partition::to_string(c.backend) +
           (c.layout.empty() ? "" : " " + c.layout.text()) + ", " + jobs_text(c.jobs) + ", " +
           (c.duration_s > 0 ? fmt::format("{:g} s window", c.duration_s)
                             : fmt::format("{} steps", c.work_steps)) +
           (c.baseline ? " + baseline" : "") + ", repetition " + std::to_string(c.repetition) +
           "/" + std::to_string(c.repetitions) +
           (c.gpus > 1 ? ", on " + gpus_text(c, first_gpu) + " at once" : "");
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

// A cell of several GPUs: the same layout and jobs on each, and its baseline (the jobs one after
// another on the whole GPU) on each too.
HostRequest host_request_of(const Cell& c, const std::string& experiment, unsigned first_gpu,
                            const std::string& run_dir) {
    HostRequest h;
    const CellRequest r = request_of(c, experiment);
    for (int64_t g = 0; g < c.gpus; ++g) {
        const unsigned gpu = first_gpu + static_cast<unsigned>(g);
        h.gpus.push_back({gpu, r});
        if (c.baseline) {
            CellRequest b = r;
            b.backend = partition::baseline_backend();
            b.layout = {};
            h.baseline.push_back({gpu, b});
        }
    }
    h.run_dir = run_dir;
    h.label = r.label;
    h.experiment = r.experiment;
    h.cell_key = r.cell_key;
    return h;
}

// The GPUs NVML lists: a cell of several GPUs needs its last one among them.
void check_gpu_count(const Cell& c, const Machine& machine, unsigned first_gpu) {
    const unsigned listed = machine.gpu->session ? machine.gpu->session->device_count() : 1;
    if (first_gpu + c.gpus <= listed)
        return;
    throw input_error(c.gpus_path + ": " + std::to_string(c.gpus) + " GPUs from GPU " +
                      std::to_string(first_gpu) + " (--gpu) are " + gpus_text(c, first_gpu) +
                      ", but NVML lists " + std::to_string(listed) + " GPU" +
                      (listed == 1 ? "" : "s") + " here (section " + c.section + ")");
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

// Sleeps, waking early on an interrupt, telling the observer what is left.
void cool_down(double seconds, const std::atomic<bool>* interrupted, SweepObserver& observer) {
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (!(interrupted && *interrupted) && Clock::now() < end) {
        observer.cooling_down(std::chrono::duration<double>(end - Clock::now()).count());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// The selected cells this machine can run, every one checked before anything runs: known memory
// misfits are skipped (into `plan.skipped`) unless forced; a cell that cannot run is refused,
// named. Without a GPU (`plan_for_gpu_host`) the GPU cells are taken as a GPU host would run them.
std::vector<Cell> runnable_cells(const std::vector<Cell>& selected, const SweepOptions& o,
                                 const Machine& machine, bool force, bool plan_for_gpu_host,
                                 SweepPlan& plan) {
    std::optional<HostMachines> gpus;  // opened for the first cell of several GPUs
    std::vector<Cell> runnable;
    for (const Cell& c : selected) {
        std::vector<std::string> misfits;
        if (plan_for_gpu_host && partition::traits(c.backend).needs_gpu) {
            // No GPU to check against: the spec's own checks (layouts against the catalog).
            plan.for_gpu_host = "no GPU here (" + machine.gpu_problem +
                                "): the plan for a GPU host, its layouts checked against the "
                                "built-in " +
                                plan.model.key + " catalog";
            runnable.push_back(c);
            continue;
        }
        try {
            misfits = check_cell(machine, request_of(c, plan.spec.name));
        } catch (const Error& e) {
            const bool no_gpu = e.kind() == ErrorKind::kUnavailable;
            throw Error(e.kind(), describe(c, o.gpu) + ": " + e.what() +
                                      (no_gpu ? " (--dry-run shows the plan without one)" : ""));
        }
        if (!misfits.empty() && !force) {
            plan.skipped.push_back(describe(c, o.gpu) + ": " + misfits.front());
            continue;
        }
        if (c.gpus > 1) {  // each of its GPUs: there, and suited to the cell (MIG mode, memory)
            check_gpu_count(c, machine, o.gpu);
            if (!gpus || gpus->size() < static_cast<size_t>(c.gpus))
                gpus = open_gpus(o.gpu, static_cast<size_t>(c.gpus));
            try {
                check_host(*gpus, host_request_of(c, plan.spec.name, o.gpu, ""), force);
            } catch (const Error& e) {
                throw Error(e.kind(), describe(c, o.gpu) + ": " + e.what());
            }
        }
        runnable.push_back(c);
    }
    return runnable;
}

// The experiment's stored cells. A store without tables holds nothing yet: another sweep may be
// creating it right now (the lock in run_sweep then says so), or it is an empty file the sweep
// will make a store.
StoredCells stored_cells_at(const std::string& db_path, const std::string& experiment) {
    if (!fs::exists(db_path) || store::is_empty_database(db_path))
        return {};
    store::Store db = store::Store::open(db_path, store::OpenMode::kRead);
    return stored_cells(db, experiment);
}

}  // namespace

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

SweepPlan plan_sweep(const SweepOptions& o, const Machine& machine, bool force) {
    SweepPlan plan;
    plan.spec = experiment::read_spec(o.spec_path);
    plan.model = model_for(plan.spec, machine);
    plan.on_gpu = machine.gpu != nullptr;
    const std::vector<Cell> all = experiment::expand(plan.spec, plan.model);
    std::vector<Cell> selected =
        experiment::select_cells(plan.spec, all, o.only, machine.gpu != nullptr);
    // A dry run without a GPU plans the GPU sections as a GPU host would run them.
    const bool plan_for_gpu_host = !machine.gpu && o.dry_run;
    if (selected.empty() && plan_for_gpu_host)
        selected = experiment::select_cells(plan.spec, all, o.only, true);
    plan.all_cells = all.size();
    plan.selected_cells = selected.size();
    if (selected.empty() && machine.gpu) {
        throw input_error(o.spec_path +
                          ": no cell to run on this machine (every section selected has on = "
                          "\"cpu\")");
    }
    if (selected.empty()) {
        throw unavailable_error(o.spec_path +
                                ": no cell to run on this machine (no GPU here, and every "
                                "section selected has on = \"gpu\": " +
                                machine.gpu_problem + "; --dry-run shows the plan without one)");
    }

    // Every cell checked on this machine before anything runs; known memory misfits skipped.
    const std::vector<Cell> runnable =
        runnable_cells(selected, o, machine, force, plan_for_gpu_host, plan);

    // The store: resume skips the cells it holds, finished and with their baseline.
    plan.db_path = o.db.empty() ? "migscope-runs/" + plan.spec.name + ".db" : o.db;
    const StoredCells stored = stored_cells_at(plan.db_path, plan.spec.name);
    plan.root = o.run_dir.empty() ? "migscope-runs/" + plan.spec.name + "-" + local_time_stamp()
                                  : o.run_dir;
    plan.resume = o.resume;
    plan.first_gpu = o.gpu;
    for (const Cell& c : runnable) {
        const bool done = is_stored(c, stored);
        plan.already_stored += done ? 1 : 0;
        if (o.resume && done)
            continue;
        PlannedCell p{c, experiment::estimate(c), describe(c, o.gpu), ""};
        p.run_dir = fmt::format("{}/{:03}-{}-{}{}-r{}", plan.root, plan.todo.size() + 1, c.section,
                                partition::to_string(c.backend),
                                c.layout.empty() ? "" : "-" + c.layout.text(), c.repetition);
        plan.estimate_s += p.estimate.seconds;
        plan.baselines += c.baseline ? 1 : 0;
        plan.estimate_without_work = plan.estimate_without_work || p.estimate.without_work;
        plan.max_gpus = std::max(plan.max_gpus, c.gpus);
        plan.todo.push_back(std::move(p));
    }
    return plan;
}

SweepResult run_sweep(const SweepPlan& plan, const Machine& machine, const Measurement& m,
                      store::Store& db, const RunHooks& hooks, SweepObserver& observer) {
    SweepResult result;
    std::string holder;
    const std::string lock_path = plan.db_path + ".sweep-" + text::slug(plan.spec.name) + ".lock";
    const std::optional<FileLock> lock = FileLock::try_lock(lock_path, &holder);
    if (!lock) {
        throw runtime_error("another migscope" +
                            (holder.empty() ? "" : " (process " + holder + ")") +
                            " is running experiment '" + plan.spec.name + "' on " + plan.db_path +
                            ": wait for it to end, then --resume (lock file " + lock_path + ")");
    }
    if (plan.resume) {  // another sweep may have stored cells between the plan and the lock
        const StoredCells stored = stored_cells(db, plan.spec.name);
        for (const PlannedCell& p : plan.todo) {
            if (is_stored(p.cell, stored)) {
                throw runtime_error("cell " + p.description +
                                    " was stored by another sweep after "
                                    "this one was planned: run --resume again");
            }
        }
    }
    // The GPUs of the cells of several GPUs, opened once.
    const HostMachines gpus = plan.max_gpus > 1
                                  ? open_gpus(plan.first_gpu, static_cast<size_t>(plan.max_gpus))
                                  : HostMachines{};
    const auto started = Clock::now();
    double estimated_done_s = 0, estimated_left_s = plan.estimate_s;
    const auto interrupted = [&] { return hooks.interrupt && *hooks.interrupt; };
    for (size_t i = 0; i < plan.todo.size() && !interrupted(); ++i) {
        const PlannedCell& p = plan.todo[i];
        const double elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
        // The estimate of what is left, corrected by how the estimate fared so far.
        const double eta_s = estimated_done_s > 0 ? estimated_left_s * elapsed_s / estimated_done_s
                                                  : estimated_left_s;
        observer.cell_started(i, elapsed_s, eta_s);
        SweepCellOutcome out;
        const store::EarlierAttempts earlier = plan.resume
                                                   ? store::EarlierAttempts::kReplaceUnfinished
                                                   : store::EarlierAttempts::kKeep;
        if (p.cell.gpus > 1) {
            HostRequest h = host_request_of(p.cell, plan.spec.name, plan.first_gpu, p.run_dir);
            h.earlier = earlier;
            out.host = run_host(gpus, m, h, &db, hooks);
        } else {
            CellRequest r = request_of(p.cell, plan.spec.name);
            r.run_dir = p.run_dir;
            r.earlier = earlier;
            out.cell = run_cell(machine, m, r, &db, hooks);
        }
        observer.cell_finished(i, out);
        result.all_ok = result.all_ok && out.all_ok();
        if (!out.run_dir_problem().empty())
            result.problems.push_back(out.run_dir_problem());
        if (out.unstored()) {  // the store failed once: the next cells would be lost to it too
            result.problems.push_back(describe(*out.unstored(), plan.db_path, p.run_dir));
            result.unstored = true;
            break;
        }
        estimated_done_s += p.estimate.seconds;
        estimated_left_s -= p.estimate.seconds;
        if (out.interrupted()) {
            result.interrupted = true;
            break;
        }
        if (i + 1 < plan.todo.size() && p.cell.cooldown_s > 0)
            cool_down(p.cell.cooldown_s, hooks.interrupt, observer);
    }
    result.interrupted = result.interrupted || interrupted();
    result.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
}

}  // namespace migscope::runner
