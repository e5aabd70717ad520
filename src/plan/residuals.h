// Residuals of the planner's model on stored runs: each run rebuilt as a plan of its jobs on its
// partitions, predicted from the profiles of the build that measured it, and set against what it
// measured (each built-in job's items/s, the run's dynamic energy).
#pragma once

#include <string>
#include <vector>

#include "mig/catalog.h"
#include "plan/model_error.h"
#include "plan/profile.h"
#include "store/record.h"

namespace migscope::plan {

// What one store gave: its residuals and the runs it could not use, each with why.
struct StoreResiduals {
    std::vector<Residual> residuals;
    size_t runs_used = 0;
    std::vector<std::string> skipped;  // "run 12: job 'bert-base-ft': no profile ..."
};

// Uses, of `runs` (with their jobs): steady windows of two or more built-in jobs on partitions
// (green, mps, mig: each job's items/s against the model's for that mix, the board's dynamic
// power per work), sequential baselines (each job alone on the whole GPU), and fixed-work runs
// on partitions or sequential (each job's items/s and the run's dynamic energy against
// predict(); queues from a `plan --verify` label's --assign). Single-job windows are what
// profiles are made of and are not used. `source` names the store in each residual.
// residuals_from_runs over every run of each store at `db_paths`, with `profiles` (read from
// `profiles_origin`), into `error`: its residuals from these stores are replaced, those from
// others kept; each store adds a line to its sources (runs used, skipped and why).
void add_store_residuals(ModelError& error, const ProfileSet& profiles,
                         const std::string& profiles_origin,
                         const std::vector<std::string>& db_paths, const mig::GpuModel& model);

StoreResiduals residuals_from_runs(const std::vector<store::RunRecord>& runs,
                                   const ProfileSet& profiles, const mig::GpuModel& model,
                                   const std::string& source);

}  // namespace migscope::plan
