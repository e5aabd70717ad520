// A run over several GPUs of one host: one run cell per GPU (its own layout, backend, power
// source and run directory), the cells run at once, a thread each; per-GPU energy and the host
// total; and the sequential baseline on the same GPUs. A GPU whose run fails gives its jobs the
// status "gpu failed" and the other GPUs' results are kept.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/host_total.h"
#include "runner/cell.h"
#include "store/store.h"

namespace migscope::runner {

// The machines of a host run, one per GPU, by NVML index.
using HostMachines = std::map<unsigned, Machine>;
// Opens each GPU (open_machine); a GPU NVML does not give is an unavailable error naming it.
HostMachines open_gpus(const std::vector<unsigned>& indices);
// GPUs first .. first + count - 1.
HostMachines open_gpus(unsigned first, size_t count);

// What one GPU runs. The cell's run_dir, label, experiment and cell_key are the host's (set by
// run_host); its `baseline` flag is not used: the host's baseline is HostRequest::baseline.
struct GpuCell {
    unsigned gpu = 0;  // NVML index
    CellRequest cell;
};

struct HostRequest;
// The GPUs a request's run and baseline use.
HostMachines open_gpus(const HostRequest& request);

struct HostRequest {
    std::vector<GpuCell> gpus;      // the run: one cell per GPU, each GPU once
    std::vector<GpuCell> baseline;  // empty: none; else each GPU's jobs, one after another on it
    std::string run_dir;            // GPU g's files in run_dir/gpu-g, the baseline's in
                                    // run_dir/baseline/gpu-g; the host's result.json in run_dir
    std::string label;
    std::optional<std::string> experiment;
    std::optional<std::string> cell_key;
    store::EarlierAttempts earlier = store::EarlierAttempts::kKeep;  // as CellRequest's
};

// One GPU's part of a host run. A failed GPU still has its run: its jobs, with status "gpu
// failed" where the failure ended them, and what was measured before it.
struct GpuOutcome {
    unsigned gpu = 0;
    std::string uuid;
    std::string failure;  // empty: the GPU ran its part; else why not (its run threw, NVML lost it)
    RunResult run;
    RecordContext context;
    bool failed() const { return !failure.empty(); }
};

// The host's figures over its GPUs (report/host_total.h, the one computation that the stored
// GPU rows' totals use too): energy summed, the longest window, a GPU done sooner charged its idle
// power until the slowest is done (fixed work), failed GPUs named.
using HostTotals = report::HostTotals;
HostTotals host_totals(const std::vector<GpuOutcome>& gpus);

struct HostPhase {
    std::vector<GpuOutcome> gpus;  // in request order
    HostTotals total;
    bool interrupted() const;
    bool all_ok() const;  // every GPU ran and every job ended ok
};

struct HostOutcome {
    HostPhase run;
    std::optional<HostPhase> baseline;
    nlohmann::json doc;                          // the host's result.json
    std::vector<int64_t> run_ids, baseline_ids;  // the GPU rows in the store, when there is one
    std::optional<UnstoredRuns> unstored;        // as CellOutcome's
    std::string run_dir_problem;                 // as CellOutcome's
    bool all_ok() const { return run.all_ok(); }
    bool interrupted() const { return run.interrupted() || (baseline && baseline->interrupted()); }
};

// Checks the request before anything runs: each GPU once, each in `machines`, each cell as
// check_cell does (misfits refused unless `force`), and each GPU's MIG mode against its backend
// (mig needs MIG mode enabled, every other GPU backend disabled). Input errors name the GPU.
void check_host(const HostMachines& machines, const HostRequest& request, bool force);

// Checks the request (check_host), runs every GPU's cell at once, then, unless interrupted, the
// baseline the same way; writes run_dir/result.json (the host, its GPUs, the baseline and the
// comparison) and stores each phase's GPU rows in one transaction (Store::add_host_run); `db` may
// be null. Progress lines name their GPU.
HostOutcome run_host(const HostMachines& machines, const Measurement& m, const HostRequest& request,
                     store::Store* db, const RunHooks& hooks);

}  // namespace migscope::runner
