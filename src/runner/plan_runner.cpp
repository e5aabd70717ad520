// Plan verification's runner: candidates as run cells, earlier runs taken from the store.
#include "runner/plan_runner.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/text.h"
#include "partition/job.h"
#include "runner/run_record.h"

namespace migscope::runner {
namespace {

using text::join;

plan::MeasuredRun measured(const store::RunRecord& r) {
    plan::MeasuredRun m;
    m.makespan_s = r.window_s;
    m.energy_j = r.counter_energy_j;
    for (const store::JobRecord& j : r.jobs)
        m.jobs.push_back({j.status, j.message, j.workload ? j.items_per_s : std::optional<double>(),
                          j.finish_s});
    m.stored_run_id = r.id;
    m.idle_power_w = r.idle_power_w;
    m.idle_state = r.idle_state.value_or("");
    return m;
}

plan::MeasuredRun measured(const RunResult& r) {
    plan::MeasuredRun m;
    m.makespan_s = r.window_s;
    m.energy_j = r.energy.counter_energy_j;
    for (const JobResult& j : r.jobs)
        m.jobs.push_back({to_string(j.status), j.message,
                          j.spec.external() ? std::optional<double>() : j.items_per_s, j.finish_s});
    m.idle_power_w = r.idle_power_w;
    m.idle_state = idle_state_of(r).value_or("");
    return m;
}

// How the label names a job: WORKLOAD:MODE:BATCH, or a command's name and argv.
std::string job_text(const protocol::JobSpec& j) {
    if (j.external())
        return j.name + "=[" + join(j.command, " ") + "]";
    return j.workload + ":" + j.mode + ":" + std::to_string(j.batch.value_or(0));
}

// A host run's GPUs measured: the host's makespan and energy, each GPU's, and the jobs in GPU
// order.
plan::MeasuredRun measured(const std::vector<GpuOutcome>& gpus,
                           const std::vector<size_t>& plan_gpu) {
    plan::MeasuredRun m;
    const HostTotals total = host_totals(gpus);
    m.makespan_s = total.window_s;
    m.energy_j = total.energy_j;
    for (size_t i = 0; i < gpus.size(); ++i) {
        const plan::MeasuredRun one = measured(gpus[i].run);
        m.jobs.insert(m.jobs.end(), one.jobs.begin(), one.jobs.end());
        m.gpus.push_back({plan_gpu[i], one.makespan_s, one.energy_j, gpus[i].failure});
    }
    return m;
}

// A stored host run's GPU rows as the host run's outcome, for what measured() reads.
GpuOutcome outcome_of(const store::RunRecord& r) {
    GpuOutcome g;
    g.gpu = static_cast<unsigned>(r.gpu_index.value_or(0));
    g.run.mode = r.mode == "work" ? RunMode::kWork : RunMode::kDuration;
    g.run.window_s = r.window_s;
    g.run.energy.counter_energy_j = r.counter_energy_j;
    g.run.idle_power_w = r.idle_power_w;
    for (const store::JobRecord& j : r.jobs) {
        JobResult job;
        job.spec.name = j.name;
        job.spec.workload = j.workload.value_or("");
        job.spec.command = j.command;
        static_cast<store::JobMeasures&>(job) = j;
        job.status = j.status == "ok" ? JobStatus::kOk : JobStatus::kFailed;
        job.message = j.status + (j.message.empty() ? "" : ": " + j.message);
        if (j.status == "gpu failed")
            g.failure = "GPU " + std::to_string(g.gpu) + " failed";
        g.run.jobs.push_back(std::move(job));
    }
    return g;
}

}  // namespace

CellCandidateRunner::CellCandidateRunner(const Machine& machine, const Measurement& m,
                                         partition::BackendKind backend, int64_t work_steps,
                                         store::Store* db, std::string run_dir,
                                         const RunHooks& hooks)
    : machine_(machine),
      measurement_(m),
      backend_(backend),
      work_steps_(work_steps),
      db_(db),
      run_dir_(std::move(run_dir)),
      hooks_(hooks) {}

std::string CellCandidateRunner::label_of(const plan::Candidate& c,
                                          const plan::CandidateRun& a) const {
    std::vector<std::string> assign;
    for (size_t k : a.assign)
        assign.push_back(std::to_string(k));
    std::vector<std::string> jobs;
    for (const protocol::JobSpec& j : a.jobs)
        jobs.push_back(job_text(j));
    // One --work for every job as given; else each job's own steps (a command's one run).
    std::vector<std::string> steps;
    for (const protocol::JobSpec& j : a.jobs)
        steps.push_back(std::to_string(j.external() ? 1 : j.steps.value_or(work_steps_)));
    return "plan --verify " + c.name + " --jobs " + join(jobs, ",") +
           (assign.empty() ? "" : " --assign " + join(assign, ",")) + " --work " +
           (work_steps_ > 0 ? std::to_string(work_steps_) : join(steps, ",")) +
           // The default backend (green) goes unnamed: so did labels stored before --verify
           // took --backend, and resume finds runs by label.
           (backend_ == VerifyRequest{}.backend ? "" : " --backend " + to_string(backend_));
}

CellRequest CellCandidateRunner::cell_of(const plan::CandidateRun& a) const {
    CellRequest cell;
    cell.jobs = a.jobs;
    cell.work_steps = work_steps_;
    for (const protocol::JobSpec& j : a.jobs)  // each job's own steps: the cell's is a default
        cell.work_steps = std::max(cell.work_steps, j.steps.value_or(0));
    if (a.layout.empty()) {
        cell.backend = partition::baseline_backend();
    } else {
        cell.backend = backend_;
        // The planner's partitions, parsed once here where they become a request.
        cell.layout = partition::Layout::parse(join(a.layout, "+"), machine_.gpu->model);
        if (a.assign.size() > a.layout.size())  // some partition queues jobs
            cell.assign = a.assign;
    }
    return cell;
}

bool CellCandidateRunner::can_run(const plan::CandidateRun& a, std::string& why_not) const {
    why_not.clear();
    const bool every_job_has_work =
        work_steps_ > 0 || std::all_of(a.jobs.begin(), a.jobs.end(), [](const auto& j) {
            return j.external() || j.steps.value_or(0) > 0;
        });
    if (hooks_.interrupt && *hooks_.interrupt)
        why_not = "interrupted";
    else if (!every_job_has_work)
        why_not = "--verify needs --work STEPS for every job (one for all, or one per job)";
    return why_not.empty();
}

std::optional<plan::MeasuredRun> CellCandidateRunner::run(const plan::Candidate& c, size_t index,
                                                          const plan::CandidateRun& a,
                                                          std::string& why_not) {
    if (!can_run(a, why_not))
        return std::nullopt;
    if (a.layout.empty() && partition::traits(backend_).needs_mig_mode) {
        why_not =
            "the whole GPU needs MIG mode disabled, MIG instances need it enabled: run the "
            "sequential baseline apart (`migscope run --backend sequential` with MIG mode off)";
        return std::nullopt;
    }
    const std::string label = label_of(c, a);
    if (db_) {
        for (const store::RunRecord& r : db_->list_runs()) {
            if (r.label == label && r.role == store::RunRole::kRun && !r.interrupted) {
                if (hooks_.progress)
                    hooks_.progress(c.name + ": measured before (run " + std::to_string(r.id) +
                                    ")");
                plan::MeasuredRun m = measured(r);
                m.from_earlier_run = true;
                return m;
            }
        }
    }
    CellRequest cell = cell_of(a);
    cell.run_dir = run_dir_ + "/" + std::to_string(index + 1);
    cell.label = label;
    if (hooks_.progress)
        hooks_.progress("verifying " + c.name);
    const auto start = std::chrono::steady_clock::now();
    const CellOutcome out = run_cell(machine_, measurement_, cell, db_, hooks_);
    if (out.unstored)  // measured but not kept: stop, naming where the run is
        throw runtime_error(describe(*out.unstored, db_->path(), cell.run_dir));
    plan::MeasuredRun m = measured(out.run);
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.stored_run_id = out.run_id;
    if (out.run.interrupted) {
        why_not = "interrupted";
        return std::nullopt;
    }
    return m;
}

std::optional<plan::MeasuredRun> CellCandidateRunner::run_gpus(
    const plan::Candidate& c, size_t index, const std::vector<plan::CandidateRun>& runs,
    std::string& why_not) {
    if (!gpus_)
        return plan::CandidateRunner::run_gpus(c, index, runs, why_not);
    if (!can_run(plan::combined_run(runs), why_not))
        return std::nullopt;
    HostRequest host;
    std::vector<size_t> plan_gpu;  // the plan's GPU of each cell
    std::vector<std::string> parts;
    for (size_t g = 0; g < runs.size(); ++g) {
        if (runs[g].jobs.empty())
            continue;  // a GPU the plan leaves idle
        const unsigned gpu = first_gpu_ + static_cast<unsigned>(g);
        try {
            host.gpus.push_back({gpu, cell_of(runs[g])});
        } catch (const Error& e) {  // as check_host's refusals: the others may run
            why_not = "GPU " + std::to_string(gpu) + ": " + e.what();
            return std::nullopt;
        }
        plan_gpu.push_back(g);
        parts.push_back("gpu " + std::to_string(g) + ": " + label_of(c, runs[g]));
    }
    host.label = "plan --verify --gpus " + std::to_string(runs.size()) + " " + join(parts, "; ");
    host.run_dir = run_dir_ + "/" + std::to_string(index + 1);
    if (db_) {  // measured before: the GPU rows of a host run with this label
        const std::vector<store::RunRecord> stored = db_->list_runs();
        for (const store::RunRecord& r : stored) {
            if (r.label != host.label || r.role != store::RunRole::kRun || r.interrupted ||
                r.host_run_id != r.id)
                continue;
            std::vector<GpuOutcome> gpus;
            for (const store::RunRecord& row : stored) {
                if (row.host_run_id == r.id)
                    gpus.push_back(outcome_of(row));
            }
            if (gpus.size() != plan_gpu.size())
                continue;
            if (hooks_.progress)
                hooks_.progress(c.name + ": measured before (runs " + std::to_string(r.id) +
                                " on)");
            plan::MeasuredRun m = measured(gpus, plan_gpu);
            m.stored_run_id = r.id;
            m.from_earlier_run = true;
            return m;
        }
    }
    try {
        check_host(*gpus_, host, measurement_.force);
    } catch (const Error& e) {  // this candidate cannot run here; the others may
        why_not = e.what();
        return std::nullopt;
    }
    if (hooks_.progress)
        hooks_.progress("verifying " + c.name + " on " + std::to_string(host.gpus.size()) +
                        " GPUs");
    const auto start = std::chrono::steady_clock::now();
    const HostOutcome out = run_host(*gpus_, measurement_, host, db_, hooks_);
    if (out.unstored)
        throw runtime_error(describe(*out.unstored, db_->path(), host.run_dir));
    plan::MeasuredRun m = measured(out.run.gpus, plan_gpu);
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out.run_ids.empty())
        m.stored_run_id = out.run_ids.front();
    if (out.interrupted()) {
        why_not = "interrupted";
        return std::nullopt;
    }
    return m;
}

plan::Verification verify_on_gpus(const plan::Problem& problem, const plan::SearchResult& result,
                                  plan::Objective objective, const VerifyRequest& request,
                                  const RunHooks& hooks) {
    const Machine machine = open_machine(request.first_gpu);
    require_gpu(machine, "plan --verify");  // before the store is made
    const HostMachines gpus = open_gpus(request.first_gpu, request.gpus > 1 ? request.gpus : 0);
    // Profiles of the H200 verified on an H100 once ran the sequential baseline, then failed at
    // the first layout.
    require_planned_model(machine, request.first_gpu, problem.model, "plan --verify");
    for (const auto& [index, gpu] : gpus)
        require_planned_model(gpu, index, problem.model, "plan --verify");
    std::optional<store::Store> db;
    if (!request.db.empty())
        db.emplace(store::Store::open(request.db));
    if (db && db->upgrade() && hooks.progress)
        hooks.progress(store::describe(*db->upgrade(), request.db));
    CellCandidateRunner runner(machine, request.measurement, request.backend, request.work_steps,
                               db ? &*db : nullptr, request.run_dir, hooks);
    runner.use_gpus(&gpus, request.first_gpu);
    return plan::verify(problem, result, objective, runner);
}

}  // namespace migscope::runner
