// A spec expanded into the cells of its sweep: one cell = one run (and its baseline), with a
// stable key that a resumed sweep uses to skip what the results store already holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/spec.h"
#include "mig/catalog.h"
#include "partition/backend.h"
#include "partition/job.h"
#include "partition/layout.h"

namespace migscope::experiment {

struct Cell {
    std::string section;
    SectionKind kind = SectionKind::kMix;
    Where on = Where::kAny;
    partition::BackendKind backend = partition::BackendKind::kGreen;
    // Parsed once here, its text canonical ("3g.71gb+1g.18gb"), in job order; empty for none.
    partition::Layout layout;
    std::vector<partition::JobSpec> jobs;  // jobs[i] on the layout's partition i; names unique
    double duration_s = 0;                 // exactly one of duration_s and work_steps is > 0
    int64_t work_steps = 0;                // per job unless a job has its own steps (matched work)
    bool baseline = false;   // also the jobs one after another on the whole GPU (or CPU)
    int64_t repetition = 1;  // 1 .. repetitions
    int64_t repetitions = 1;
    double cooldown_s = 0;  // pause after the cell
    // GPUs the cell runs on at once, each the same layout and jobs (and baseline); 1: one GPU.
    int64_t gpus = 1;
    std::string gpus_path;  // the spec field that set gpus, for messages
    // Everything that defines the cell, as text: equal keys mean the same measurement.
    std::string key;
};

// Every cell of every section, in file order; within a section repetitions outermost (a sweep cut
// short still has whole repetitions), then backends, then profiles or layouts, then jobs (scaling).
// Layouts are checked against `model`: invalid ones, unknown profiles and layouts with fewer
// partitions than the section has jobs are input errors naming the field (`mix[1].layouts[2]`). A
// mix layout with more partitions than jobs cycles the jobs.
std::vector<Cell> expand(const Spec& spec, const mig::GpuModel& model);

// The cells to run here: those of the sections named in `only` (all when empty; an unknown name
// is an input error listing the sections) whose `on` matches whether this machine has a GPU.
std::vector<Cell> select_cells(const Spec& spec, const std::vector<Cell>& cells,
                               const std::vector<std::string>& only, bool have_gpu);

// A rough duration, for the plan and the ETA before anything has run: a start-up allowance per
// run (worker starts, warm-up, steady state, idle probes), the window, the baseline's jobs each
// alone, and the cool-down. Fixed-work cells count no time for the work itself (unknown before it
// runs).
struct Estimate {
    double seconds = 0;
    bool without_work = false;  // true: fixed work not included
};
Estimate estimate(const Cell& cell);
// The allowances come from the H200 (data/study-h200/README.md, session 1): a run of
// several jobs spent 30–37 s outside its window, a run of one job 7–17 s (median 8–9 s), each
// job of a baseline about 7.5 s.
inline constexpr double kGpuMixStartupAllowance_s = 30;  // a run of several jobs on a GPU
inline constexpr double kGpuJobStartupAllowance_s = 9;   // a run of one job, each baseline job
inline constexpr double kCpuStartupAllowance_s = 5;       // any run or baseline job on CPUs

}  // namespace migscope::experiment
