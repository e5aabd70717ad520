// Plan verification's runner: each candidate as a run cell (SM partitions through green contexts
// or MPS, or MIG instances, jobs queued as the plan says, or sequential on the whole GPU) with
// fixed work, resumed from a results store.
#pragma once

#include <optional>
#include <string>

#include "plan/verify.h"
#include "runner/cell.h"
#include "store/store.h"

namespace migscope::runner {

class CellCandidateRunner : public plan::CandidateRunner {
  public:
    // `work_steps`: measured steps of every job (0: cannot verify, say why); `db` may be null
    // (nothing stored, nothing resumed); candidate i's files go to `run_dir`/i+1.
    CellCandidateRunner(const Machine& machine, const Measurement& m,
                        partition::BackendKind backend, int64_t work_steps, store::Store* db,
                        std::string run_dir, const RunHooks& hooks);
    std::optional<plan::MeasuredRun> run(const plan::Candidate& candidate, size_t index,
                                         const plan::CandidateRun& run,
                                         std::string& why_not) override;

  private:
    const Machine& machine_;
    const Measurement& measurement_;
    partition::BackendKind backend_;  // green, mps or mig
    int64_t work_steps_;
    store::Store* db_;
    std::string run_dir_;
    const RunHooks& hooks_;
};

}  // namespace migscope::runner
