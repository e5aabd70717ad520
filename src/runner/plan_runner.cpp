// Plan verification's runner: candidates as run cells, earlier runs taken from the store.
#include "runner/plan_runner.h"

#include <chrono>

#include "core/text.h"
#include "partition/job.h"

namespace migscope::runner {
namespace {

using text::join;

plan::MeasuredRun measured(const store::RunRecord& r) {
    plan::MeasuredRun m;
    m.makespan_s = r.window_s;
    m.energy_j = r.counter_energy_j;
    for (const store::JobRecord& j : r.jobs)
        m.jobs.push_back({j.status, j.message,
                          j.workload ? j.items_per_s : std::optional<double>(), j.finish_s});
    m.stored_run_id = r.id;
    return m;
}

plan::MeasuredRun measured(const RunResult& r) {
    plan::MeasuredRun m;
    m.makespan_s = r.window_s;
    m.energy_j = r.energy.counter_energy_j;
    for (const JobResult& j : r.jobs)
        m.jobs.push_back({to_string(j.status), j.message,
                          j.spec.external() ? std::optional<double>() : j.items_per_s,
                          j.finish_s});
    return m;
}

// How the label names a job: WORKLOAD:MODE:BATCH, or a command's name and argv.
std::string job_text(const protocol::JobSpec& j) {
    if (j.external())
        return j.name + "=[" + join(j.command, " ") + "]";
    return j.workload + ":" + j.mode + ":" + std::to_string(j.batch.value_or(0));
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

std::optional<plan::MeasuredRun> CellCandidateRunner::run(const plan::Candidate& c, size_t index,
                                                          const plan::CandidateRun& a,
                                                          std::string& why_not) {
    if (hooks_.interrupt && *hooks_.interrupt) {
        why_not = "interrupted";
        return std::nullopt;
    }
    if (work_steps_ <= 0) {
        why_not = "--verify needs one --work STEPS for every job (as `migscope run`)";
        return std::nullopt;
    }
    if (a.layout.empty() && backend_ == partition::BackendKind::kMig) {
        why_not =
            "the whole GPU needs MIG mode disabled, MIG instances need it enabled: run the "
            "sequential baseline apart (`migscope run --backend sequential` with MIG mode off)";
        return std::nullopt;
    }
    std::vector<std::string> assign;
    for (size_t k : a.assign)
        assign.push_back(std::to_string(k));
    // The label names what ran, so that a later --verify with the same store resumes.
    std::vector<std::string> jobs;
    for (const protocol::JobSpec& j : a.jobs)
        jobs.push_back(job_text(j));
    const std::string label =
        "plan --verify " + c.name + " --jobs " + join(jobs, ",") +
        (assign.empty() ? "" : " --assign " + join(assign, ",")) + " --work " +
        std::to_string(work_steps_) +
        (backend_ == partition::BackendKind::kGreen ? "" : " --backend " + to_string(backend_));
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
    CellRequest cell;
    cell.jobs = a.jobs;
    cell.work_steps = work_steps_;
    cell.run_dir = run_dir_ + "/" + std::to_string(index + 1);
    cell.label = label;
    if (a.layout.empty()) {
        cell.backend = partition::BackendKind::kSequential;
    } else {
        cell.backend = backend_;
        cell.layout = join(a.layout, "+");
        if (a.assign.size() > a.layout.size())  // some partition queues jobs
            cell.assign = a.assign;
    }
    if (hooks_.progress)
        hooks_.progress("verifying " + c.name);
    const auto start = std::chrono::steady_clock::now();
    const CellOutcome out = run_cell(machine_, measurement_, cell, db_, hooks_);
    plan::MeasuredRun m = measured(out.run);
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.stored_run_id = out.run_id;
    if (out.run.interrupted) {
        why_not = "interrupted";
        return std::nullopt;
    }
    return m;
}

}  // namespace migscope::runner
