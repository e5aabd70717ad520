// A plan file (`migscope plan --format json`, one GPU or several) as the cells of a host run
// (host_run.h): each GPU its layout (its busy partitions), backend and queues of jobs, as the
// plan says, and the planner's sequential baseline on the same number of GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runner/host_run.h"

namespace migscope::runner {

struct PlanFileOptions {
    // Which plan: 0 the recommendation, k the k-th of the plan's top candidates (1 is the best).
    size_t candidate = 0;
    int64_t work_steps = 0;  // > 0: every job's measured steps; 0: each job's from the plan
    unsigned first_gpu = 0;  // the plan's GPU g runs on NVML GPU first_gpu + g
    bool baseline = false;   // also the plan's "sequential whole GPU" baseline
};

// The plan file's cells. A partitioned GPU runs the plan's backend (mig, green or mps) on the
// partitions that have jobs, each queue in order; a GPU the plan leaves whole runs its jobs one
// after another (sequential); a GPU with no jobs is left out. The baseline: the planner's
// sequential candidate (jobs spread over the GPUs longest first), each GPU its share one after
// another. Input errors name the file and the field (`top[4]`, `jobs[2].work_steps`).
HostRequest read_plan_file(const std::string& path, const PlanFileOptions& options);
HostRequest parse_plan_file(const std::string& text, const std::string& origin,
                            const PlanFileOptions& options);

}  // namespace migscope::runner
