// What each job of a run gets: partitions from a layout (green, mps), the whole GPU (timeslice,
// sequential) or a share of the CPU cores (cpu).
#pragma once
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"
#include "partition/backend.h"

namespace migscope::partition {

// SM partitions sized like the layout's MIG profiles, jobs[i] on terms[i]. Throws an input error
// when the layout is invalid for the model (with the reason) or its size differs from the number
// of jobs.
std::vector<Partition> layout_partitions(const std::vector<mig::LayoutTerm>& terms,
                                         const mig::GpuModel& model, size_t job_count,
                                         const std::string& device);

// The whole GPU for every job.
std::vector<Partition> whole_gpu_partitions(const mig::GpuModel& model, size_t job_count,
                                            const std::string& device);

// `cores` split into equal disjoint shares, one per job (the remainder unused). Throws an input
// error when there are more jobs than cores.
std::vector<Partition> cpu_partitions(const std::vector<unsigned>& cores, size_t job_count);

}  // namespace migscope::partition
