// One run cell: jobs on partitions under a backend, with its optional sequential baseline, kept
// in a run directory and a results store. `migscope run`, sweeps, profiling and plan verification
// all run their cells through run_cell.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mig/catalog.h"
#include "nvml/session.h"
#include "partition/backend.h"
#include "partition/job.h"
#include "partition/layout.h"
#include "runner/memory_fit.h"
#include "runner/run.h"
#include "runner/run_record.h"
#include "runner/unstored.h"
#include "store/store.h"

namespace migscope::runner {

// The GPU a run measures (NVML only: no CUDA context here).
struct Gpu {
    std::optional<nvml::Session> session;
    std::optional<nvml::Device> device;
    std::string uuid;
    mig::GpuModel model;
};

// What this machine offers: the GPU when NVML finds one (else why not), the CPU cores this
// process may use, and the known peak memories of the built-in workloads.
struct Machine {
    std::unique_ptr<Gpu> gpu;
    std::string gpu_problem;  // why there is no GPU
    std::vector<unsigned> cpu_cores;
    std::vector<MemoryRecord> memory;
};
// Opens GPU `index`; a missing driver or GPU leaves `gpu` empty, bad input throws.
Machine open_machine(unsigned index);
// Throws an unavailable error (exit 3) naming `what` and why when the machine has no GPU: for
// commands that need one, before they make anything.
void require_gpu(const Machine& machine, const std::string& what);
// Throws an input error (exit 2) naming `what`, GPU `index` and both models when the machine's GPU
// is not of `planned`, the model a plan or schedule was made for: on another model its layouts do
// not exist or run unlike their prediction. Before anything runs.
void require_planned_model(const Machine& machine, unsigned index, const mig::GpuModel& planned,
                           const std::string& what);

// Where migscope's shipped records are (`peak-memory-MODEL.json`, `profiles-MODEL.json`):
// MIGSCOPE_DATA_DIR, else PREFIX/share/migscope beside an installed binary (PREFIX/bin), else
// the source tree's data/.
std::string data_dir();

// How every run is measured (the options of `migscope run` that are not the cell itself).
struct Measurement {
    unsigned warmup_steps = 3;
    bool cuda_graph = true;  // false: --no-cuda-graph, built-in jobs step eagerly
    double steady_cv = 0.10;
    double warmup_timeout_s = 300;
    double job_timeout_s = 3600;
    double hz = 10;
    double idle_probe_s = 2;
    double marginal_probe_s = 3;  // RunSpec::marginal_probe_s, at most the run's duration
    std::string worker;  // migscope-worker; empty: found beside migscope
    bool apply = false;  // mig: create the instances
    bool force = false;  // run jobs known not to fit their partition's memory
};

// One run and, optionally, its baseline.
struct CellRequest {
    partition::BackendKind backend = partition::BackendKind::kCpu;
    partition::Layout layout;  // parsed where the request is made; empty for backends without one
    std::vector<partition::JobSpec> jobs;
    // The layout partition of each job (empty: job i on partition i); jobs sharing a partition
    // queue on it in job order (fixed work), as partition::place_jobs places them.
    std::vector<size_t> assign;
    double duration_s = 0;  // exactly one of duration_s and work_steps is > 0
    int64_t work_steps = 0;
    // Fixed work: per job, the seconds after the work starts before it may start its own
    // (partition::Partition::start_after_s); empty: every job at once (or after its queue).
    std::vector<double> start_after_s;
    bool baseline = false;  // the jobs one after another on the whole GPU (or CPU)
    std::string run_dir;
    std::string label;
    std::optional<std::string> experiment;  // a sweep's cell: kept with the stored runs
    std::optional<std::string> cell_key;
    // A resumed sweep's cell: its earlier unfinished attempts are replaced when it finishes.
    store::EarlierAttempts earlier = store::EarlierAttempts::kKeep;
};

// The typed layout of TEXT, a layout as the user typed it (the CLI's --layout; "" is none), for
// `request` (its backend, assign and baseline set) on this machine: first the checks that need
// only whether a layout is given, worded as check_cell words them, then TEXT parsed against the
// GPU's catalog (partition::Layout::parse; its errors after `layout: `).
partition::Layout parse_request_layout(const Machine& machine, const CellRequest& request,
                                       std::string_view text);

// Checks a request against this machine before anything runs (backend needs a GPU, layout and
// job count, CPU cores) and returns the lines of jobs known not to fit their partition's memory.
// Errors start with the request's field where one is at fault (`layout: `, `assign[2]: `, as
// partition::place_jobs words them), which the CLI shows as its flag.
// mig requests are checked for their layout only: their instances are found when they run.
std::vector<std::string> check_cell(const Machine& machine, const CellRequest& request);

// Local time as 20261130-101500, for default run directory names.
std::string local_time_stamp();

// Refuses misfits (input error naming them) unless `force`.
void require_fit(const std::vector<std::string>& misfits, bool force);

struct CellOutcome {
    RunResult run;
    std::optional<RunResult> baseline;
    nlohmann::json doc;  // result.json: the run, its baseline and the comparison
    std::optional<int64_t> run_id, baseline_id;  // in the store, when there is one
    // What the store records with the run and its baseline (time, provenance, role), so that a
    // caller given no store can store them later (host_run.h).
    RecordContext context, baseline_context;
    // The store could not take the run: where it is kept instead (runner/unstored.h).
    std::optional<UnstoredRuns> unstored;
    // Not empty: a file of the run directory (result.json, a trace) could not be written.
    std::string run_dir_problem;
    bool all_ok() const;                         // every job of the run ended ok
    // The run or its baseline was interrupted (Ctrl-C, SIGTERM, SIGHUP).
    bool interrupted() const { return run.interrupted || (baseline && baseline->interrupted); }
};

// Runs the request (misfits are an input error unless `force`), then its baseline unless the run
// was interrupted; writes result.json, trace.csv and the logs to the run directory (a file that
// cannot be written is `run_dir_problem`, after which the run is still stored); adds the run
// and then the baseline to `db` (may be null), one transaction each, or keeps them in the run
// directory's unstored-runs.db when the store cannot take them (`unstored`). Text that is not
// UTF-8 (a run directory's path) is written to result.json as \xNN.
CellOutcome run_cell(const Machine& machine, const Measurement& m, const CellRequest& request,
                     store::Store* db, const RunHooks& hooks);

}  // namespace migscope::runner
