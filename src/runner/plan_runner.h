// Plan verification's runner: each candidate as a run cell (SM partitions through green contexts
// or MPS, or MIG instances, jobs queued as the plan says, or sequential on the whole GPU) with
// fixed work, resumed from a results store.
#pragma once

#include <optional>
#include <string>

#include "plan/verify.h"
#include "runner/cell.h"
#include "runner/host_run.h"
#include "store/store.h"

namespace migscope::runner {

class CellCandidateRunner : public plan::CandidateRunner {
  public:
    // `work_steps`: measured steps of every job (0: each job's own, JobSpec::steps); `db` may be null
    // (nothing stored, nothing resumed); candidate i's files go to `run_dir`/i+1.
    CellCandidateRunner(const Machine& machine, const Measurement& m,
                        partition::BackendKind backend, int64_t work_steps, store::Store* db,
                        std::string run_dir, const RunHooks& hooks);
    std::optional<plan::MeasuredRun> run(const plan::Candidate& candidate, size_t index,
                                         const plan::CandidateRun& run,
                                         std::string& why_not) override;
    // Several GPUs: the plan's GPU g on `machines`' GPU first_gpu + g, all at once (host_run.h);
    // without use_gpus, run_gpus says it cannot.
    void use_gpus(const HostMachines* machines, unsigned first_gpu) {
        gpus_ = machines;
        first_gpu_ = first_gpu;
    }
    std::optional<plan::MeasuredRun> run_gpus(const plan::Candidate& candidate, size_t index,
                                              const std::vector<plan::CandidateRun>& runs,
                                              std::string& why_not) override;

  private:
    // The label that names what ran, so that a later --verify with the same store resumes.
    // Whether a candidate can run now (not interrupted, work given); else says why not.
    bool can_run(const plan::CandidateRun& a, std::string& why_not) const;
    std::string label_of(const plan::Candidate& c, const plan::CandidateRun& a) const;
    // A candidate's run on one GPU as a cell: the backend on its busy partitions, or
    // sequential on the whole GPU.
    CellRequest cell_of(const plan::CandidateRun& a) const;
    const HostMachines* gpus_ = nullptr;
    unsigned first_gpu_ = 0;
    const Machine& machine_;
    const Measurement& measurement_;
    partition::BackendKind backend_;  // green, mps or mig
    int64_t work_steps_;
    store::Store* db_;
    std::string run_dir_;
    const RunHooks& hooks_;
};

// What `plan --verify` runs the candidates with on this host.
struct VerifyRequest {
    unsigned first_gpu = 0;  // the plan's GPU g runs on GPU first_gpu + g
    size_t gpus = 1;
    partition::BackendKind backend = partition::BackendKind::kGreen;  // green, mps or mig
    int64_t work_steps = 0;  // measured steps of every job (0: each job's own steps from the plan)
    std::string db;          // results store the runs go to and resume from; empty: none
    std::string run_dir = "migscope-runs/plan-verify";
    Measurement measurement;
};

// Opens the GPUs (an unavailable error without one, before the store is made) and the store (a
// migration of an older one reported through hooks.progress), then runs plan::verify.
plan::Verification verify_on_gpus(const plan::Problem& problem, const plan::SearchResult& result,
                                  plan::Objective objective, const VerifyRequest& request,
                                  const RunHooks& hooks);

}  // namespace migscope::runner
