// Jobs that start together on one GPU's partitions start late: the versioned file of the fitted
// delay, and the delay a job gets for the jobs starting beside it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace migscope::plan {

// Measured on the H200's green partitions (docs/planner.md, "Model"): the first job of each
// partition ends later than the model says by a time that grows with the partitions starting with
// it and not with the job's length (+0.15 s with two, +0.6 s with six), while jobs that start
// alone later in a queue end on time. Each job starting at the same moment as `n` - 1 others on
// one GPU's partitions waits per_partner_s × (n - 1) before it runs (time that does not speed up
// or slow down with the mix, its partition drawing idle power only: the measured energy did not
// grow with it); a job starting alone, and the whole GPU, none.
struct StartDelay {
    double per_partner_s = 0;
    std::string gpu_model;  // catalog key: "h200"
    std::string backend;    // the partitions it was fitted on: "green"
    std::string origin;     // the file it was read from; empty: none
};

// The extra start-up of each of `starting` jobs that start at one moment on partitions of one GPU.
inline double start_delay_s(double per_partner_s, size_t starting) {
    return starting >= 2 ? per_partner_s * double(starting - 1) : 0.0;
}

// The file (format "migscope-start-delay", version 1): {"format", "version", "gpu_model",
// "backend", "per_partner_s", "fit": {...}} where "fit" says how the number was made (free
// form, kept as text: the command, the stores, the criterion, before and after). Strict: unknown
// top-level fields and wrong types are input errors naming their path.
StartDelay parse_start_delay_json(std::string_view text, const std::string& origin);
StartDelay read_start_delay_file(const std::string& path);

}  // namespace migscope::plan
