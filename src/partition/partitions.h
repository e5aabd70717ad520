// What each job of a run gets: partitions from a layout (green, mps), the whole GPU (timeslice,
// sequential) or a share of the CPU cores (cpu).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"
#include "partition/backend.h"
#include "partition/layout.h"

namespace migscope::partition {

// Where each job of a layout runs: job i on the layout's partition i, or with `assign` on
// partition assign[i], where jobs sharing a partition queue on it in job order (after_job: the job
// before it there). The one placement of jobs on a layout's partitions, for every backend that
// takes a layout (green, mps, mig). Throws an input error that starts with the request's field
// (`layout: `, `assign: `, `assign[2]: `; the CLI shows its flag) when without `assign` the
// layout's size differs from the number of jobs, or when `assign` has the wrong length, names a
// partition the layout lacks or leaves one without a job.
struct JobPlace {
    size_t term = 0;  // the layout's partition (index in Layout::parts())
    std::optional<size_t> after_job;
};
std::vector<JobPlace> place_jobs(const Layout& layout, size_t job_count,
                                 const std::vector<size_t>& assign);

// SM partitions sized like the layout's MIG profiles, each job where place_jobs puts it
// (Partition::after_job). Throws an input error as place_jobs does, and when the layout is
// invalid for the model (with the reason).
std::vector<Partition> layout_partitions(const Layout& layout, const mig::GpuModel& model,
                                         size_t job_count, const std::string& device,
                                         const std::vector<size_t>& assign = {});

// The whole GPU for every job.
std::vector<Partition> whole_gpu_partitions(const mig::GpuModel& model, size_t job_count,
                                            const std::string& device);

// `cores` split into equal disjoint shares, one per job (the remainder unused). Throws an input
// error when there are more jobs than cores.
std::vector<Partition> cpu_partitions(const std::vector<unsigned>& cores, size_t job_count);

}  // namespace migscope::partition
