// The host total of a run over several GPUs of one host: energy summed over its GPUs, the window
// (fixed work: the makespan) the longest GPU's, jobs summed. One computation for `run --plan` and
// sweeps (runner/host_run.h, from the GPUs' outcomes) and for the stored GPU rows (`migscope
// results`, the report's runs table).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/record.h"

namespace migscope::report {

// Duration: every GPU measured over a window of the same length; work: fixed work, each GPU
// until its jobs are done.
enum class HostMode { kDuration, kWork };

// One GPU's part of a host run, as its total needs it.
struct HostGpu {
    int64_t gpu = 0;  // NVML index
    double window_s = 0;
    std::optional<double> energy_j;      // its board energy counter over its own window
    std::optional<double> idle_power_w;  // its measured idle power
    bool failed = false;                 // the GPU failed under its run (jobs "gpu failed")
    int64_t jobs = 0;
    int64_t jobs_ok = 0;
};

// kWork: the host makespan is the slowest GPU's, and a GPU done sooner is charged its own
// measured idle power until then (the planner's model: every GPU draws idle power until the
// makespan); kDuration: every GPU's window has the same length, no tail. A failed GPU's energy
// (what it measured before it failed) and jobs are in the total, and failed_gpus names it.
struct HostTotals {
    HostMode mode = HostMode::kDuration;
    double window_s = 0;             // the longest GPU window (kWork: the host makespan)
    std::optional<double> energy_j;  // measured_energy_j + idle_tail_j; empty when some GPU's
                                     // energy (or, for a tail, its idle power) is unknown
    double measured_energy_j = 0;    // the GPUs' board energy counters over their own windows
    double idle_tail_j = 0;          // GPUs done before the makespan: idle power × the wait
    int64_t gpus = 0;
    std::vector<int64_t> failed_gpus;  // NVML indices, in the GPUs' order
    int64_t jobs = 0;
    int64_t jobs_ok = 0;
    bool interrupted = false;  // some GPU's row was interrupted (stored rows only)
    std::vector<std::string> warnings;
};
HostTotals host_totals(HostMode mode, const std::vector<HostGpu>& gpus);

// The total of one host run's stored GPU rows (rows sharing a host_run_id, of one role): the
// first row's mode; a row with a job of status "gpu failed" is a failed GPU.
HostTotals host_totals(const std::vector<store::RunRecord>& rows);

// The host runs among `runs` (rows with a host_run_id), each its rows in the order given, keyed
// by host_run_id, in the order of their first rows.
using HostRuns = std::vector<std::pair<int64_t, std::vector<store::RunRecord>>>;
HostRuns host_runs(const std::vector<store::RunRecord>& runs);
// The host run whose last row is `row` (where a table puts its total), or null.
const HostRuns::value_type* host_run_ending_at(const HostRuns& hosts, const store::RunRecord& row);

// What a total is: "host run 7: 3 GPUs (GPU 2 failed)". The role cell of the host's row.
std::string host_total_role(int64_t host_run_id, const HostTotals& t);
// What the total includes, one sentence: the sum over which GPUs, the makespan's meaning, the
// idle tail, a failed GPU's partial energy and jobs, or why no total is given.
std::string host_total_note(const HostTotals& t);

}  // namespace migscope::report
