// Each backend described once, in one table: what it needs, what it takes, how it runs its jobs
// and how the planner and the energy reading treat it. Code outside src/partition asks these
// traits; it does not compare backend kinds.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace migscope::partition {

// green: SM partitions via CUDA green contexts in one worker process; mps: one process per job
// under a private MPS daemon; mig: MIG instances; timeslice: all jobs at once on the whole GPU;
// sequential: one job at a time on the whole GPU (the baseline); cpu: CPU cores as partitions.
enum class BackendKind { kGreen, kMps, kMig, kTimeslice, kSequential, kCpu };

// What a backend's jobs run on.
enum class PartitionSource {
    kMigInstances,  // a layout's MIG instances: sizes and devices known once found or made
    kSmShares,      // SM and memory shares of one GPU, sized by a layout's profiles
    kWholeGpu,      // the whole GPU, for every job
    kCpuCores,      // this machine's CPU cores, split among the jobs
};

// How the planner treats a backend's runs.
enum class PlanRole {
    kPartitions,  // its partitions are what plans place jobs on and profiles are sized by
    kBaseline,    // the whole GPU, one job at a time: the baseline and the whole-GPU profile
    kNone,        // neither
};

// Where a run's energy is read.
enum class EnergyMeter {
    kGpuBoard,    // the GPU's board energy counter (NVML)
    kCpuPackage,  // the CPU packages' counters (RAPL), where readable
};

struct BackendTraits {
    BackendKind kind;
    std::string_view name;  // as --backend and stored records spell it
    PartitionSource partitions;
    bool needs_gpu;
    bool takes_layout;    // one partition per job (or a queue) from a layout; the others take none
    bool needs_mig_mode;  // MIG mode enabled on its GPU; every other GPU backend needs it disabled
    bool runs_commands;   // external commands as well as built-in workloads
    bool one_job_at_a_time;  // each job alone, with its own window; the others run them together
    // Jobs queued on a partition wait inside the one worker process that runs them all; for the
    // others the runner starts a queued job's process when the job before it ends.
    bool queues_in_worker;
    // Its SM partitions are rounded up to the GPU's SM granularity (green contexts: H200, 8 SMs);
    // the others get the profile's SMs as asked (an MPS share, a MIG instance).
    bool rounds_sms;
    PlanRole plan_role;
    EnergyMeter energy;
};

// Every backend, in BackendKind's order.
const std::vector<BackendTraits>& backends();
const BackendTraits& traits(BackendKind kind);
// The backend of that name, as to_string spells it; nullptr when there is none (a stored
// record's text is read as it was written).
const BackendTraits* find_backend(std::string_view name);
// The plan role of the backend of that name; kNone for a name that is no backend.
PlanRole plan_role_of(std::string_view name);

BackendKind parse_backend(std::string_view name);  // any case; input error listing the known
std::string to_string(BackendKind kind);

// The backend whose plan role is the baseline: the whole GPU, one job at a time.
BackendKind baseline_backend();

// The names of the backends that have a trait, in the table's order, and the same as text:
// "green, mps or mig" with `last` = "or".
std::vector<std::string> backend_names(bool (*has)(const BackendTraits&));
std::string backend_names_text(bool (*has)(const BackendTraits&), std::string_view last);

// Traits to pass to backend_names.
bool takes_layout(const BackendTraits& t);
bool plans_partitions(const BackendTraits& t);  // plan_role kPartitions

}  // namespace migscope::partition
