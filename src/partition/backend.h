// Partition backends behind one interface: how a layout is realised and how each job is started.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/child_process.h"
#include "partition/backend_traits.h"
#include "partition/job.h"

namespace migscope::partition {

// What one job gets.
struct Partition {
    std::string label;                 // "3g.71gb", "whole GPU", "cores 0-1"
    std::optional<unsigned> sms;       // SMs asked for (green, mps) or of the instance (mig)
    std::optional<double> memory_gib;  // memory cap (green, mps) or instance memory (mig)
    std::vector<unsigned> cpu_cores;   // cpu backend
    std::string device;                // CUDA_VISIBLE_DEVICES: "GPU-…" or "MIG-…"; empty on CPU
    // A queue (green, fixed work): the index, among the run's jobs, of the earlier job whose
    // partition this job shares; it starts its work when that job ends.
    std::optional<size_t> after_job;
    // Fixed work: the job starts its work no earlier than this many seconds after the work
    // starts (after the job before it, when queued): a job that arrives later (stream replay).
    double start_after_s = 0;
};

// How long each built-in job trains.
struct JobControl {
    unsigned warmup_steps = 3;
    std::optional<int64_t> steps;  // fixed work; empty: until told to stop ("stop" on stdin)
    // After warm-up, report "warm" and wait for "start" on stdin, so that fixed work starts on
    // every partition at once.
    bool hold_after_warmup = false;
    // Built-in workloads on a GPU capture their step as a CUDA graph and replay it; false: eager.
    bool cuda_graph = true;
};

// One process to start and the jobs it runs: its events tagged "job": k belong to jobs[k].
struct Launch {
    ChildOptions child;
    std::vector<size_t> jobs;
};

struct BackendOptions {
    std::string worker_path;  // migscope-worker
    std::string run_dir;      // per-run files (green spec, MPS pipes and logs, job stderr)
    unsigned device_sms = 0;  // SMs of the whole GPU (MPS thread percentage)
    std::string mps_control = "nvidia-cuda-mps-control";
};

class Backend {
  public:
    virtual ~Backend() = default;
    virtual BackendKind kind() const = 0;
    // The processes that run these jobs on these partitions (jobs[i] on partitions[i]).
    virtual std::vector<Launch> launches(const std::vector<JobSpec>& jobs,
                                         const std::vector<Partition>& partitions,
                                         const JobControl& control) const = 0;
    // Undoes what the backend set up (stops the MPS daemon, destroys MIG instances it made) and
    // returns the problems it met; the destructor does the same for what is left.
    virtual std::vector<std::string> release() { return {}; }
};

// Makes a backend and sets up what it needs (the MPS backend starts its daemon here, for `device`,
// a CUDA_VISIBLE_DEVICES value). For mig, the partitions carry the instances' UUIDs; creating the
// instances is mig_instances.h's job.
std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& options,
                                      const std::string& device);

// The migscope-worker argv for one built-in job (train subcommand): protocol::train_argv of the
// job under this control.
std::vector<std::string> worker_train_argv(const std::string& worker_path, const JobSpec& job,
                                           const std::string& device, const JobControl& control);

}  // namespace migscope::partition
