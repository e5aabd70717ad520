// What one GPU's consumers did over an interval, read through NVML: MIG instances with their GPM
// SM activity, or the compute processes with their SM utilization; and who each consumer is (a
// process's pod UID, container id and Slurm job id from its cgroup; Kubernetes names from the
// kubelet's assignment of the GPU or MIG device).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exporter/energy_ledger.h"
#include "exporter/kernel_time.h"
#include "exporter/pod_resources.h"
#include "nvml/activity_api.h"
#include "nvml/session.h"

namespace migscope::exporter {

class ActivityReports;

// The command and Kubernetes identity of a process, from /proc (under `proc_root`).
struct ProcessIdentity {
    std::string command;  // /proc/PID/comm; empty when unreadable (another PID namespace)
    std::string pod_uid;
    std::string container_id;
    std::string slurm_job_id;  // digits; empty outside a Slurm job's cgroup
};
ProcessIdentity read_process_identity(const std::string& proc_root, unsigned pid);

// One interval's reading of one GPU's consumers.
struct ConsumerReading {
    Sharing sharing = Sharing::kShared;
    double total_compute_slices = 7;
    std::vector<ConsumerActivity> consumers;
    bool has_compute_processes = false;  // any compute process
    // Nothing ran: no compute process, no measured SM activity, and the GPU's utilization 0
    // where the driver gives it; only such intervals teach the exporter the idle power.
    bool idle = false;
    bool activity_measured = true;  // false: the driver gives no per-consumer activity here
    bool instances_listed = true;   // false: MIG instances could not be listed (no permission)
    // An MPS server runs on the GPU (the server is no consumer: it is never charged). The driver
    // reports its clients' SM use as the server's, so without the probe's kernel time no process
    // has a measured activity and the dynamic energy is unattributed.
    bool mps_server = false;
    // Every process's activity is the probe's kernel busy time (kernel_time.h), not NVML's.
    bool kernel_time = false;
    // Compute processes run and the driver answers, but not one has given a utilization sample
    // since the reader started: the dynamic energy is unattributed.
    bool process_signal_missing = false;
};

// Whether a /proc/PID/comm names the MPS server: "nvidia-cuda-mps-server", or as the kernel
// cuts it to 15 bytes, "nvidia-cuda-mps".
bool is_mps_server_command(const std::string& command);

// Reads a GPU's consumers each interval; keeps what spans intervals (GPM samples, the time of
// the last process sample, process identities).
class ConsumerReader {
  public:
    // `activity`: the probe's reports (none: NVML's per-process utilization only); it must
    // outlive the reader.
    ConsumerReader(nvml::Device device, std::string proc_root,
                   const ActivityReports* activity = nullptr);
    ~ConsumerReader();
    // Throws a CallError when NVML fails for the GPU (e.g. it fell off the bus). `owners` (from
    // the kubelet) names a MIG instance after the one container holding its MIG device, and a
    // process in a pod after the one container holding its GPU.
    ConsumerReading read(const DeviceOwners& owners = {});
    // Why per-consumer activity is missing: each kind of reason once.
    std::vector<std::string> take_warnings();

  private:
    ConsumerReading read_mig(const DeviceOwners& owners);
    ConsumerReading read_shared(const DeviceOwners& owners);
    Consumer process_consumer(unsigned pid, const std::optional<ContainerName>& gpu_owner);
    const std::string& gpu_uuid();
    // Each tenant's activity from the probe, with the job and SM share its report names, when
    // every one of them sends it fresh; else none, and the pids without it are said once.
    struct ProbeActivity {
        double ratio = 0;
        std::string job;
        std::optional<double> sm_share;
        std::string records;  // "kernels", "kernels-sampled" or "graphs"; empty: not said
    };
    std::optional<std::vector<ProbeActivity>> kernel_time_activity(
        const std::vector<unsigned>& pids);
    // Adds each process that reported since the last reading but that NVML no longer lists: it
    // exited in the interval, and its last report (the probe sends one at exit) measures its
    // part of it, which would otherwise be `unattributed`.
    void add_exited_reporters(std::map<unsigned, std::optional<double>>& sm_ratio_by_pid);
    // GPU instance id -> the UUIDs of its MIG devices (one per compute instance); empty when
    // they cannot be read (said once).
    std::map<unsigned, std::vector<std::string>> mig_device_uuids();
    // GPU instance `gpu_instance_id`'s SM activity over the interval from GPM: none at its first
    // sample, or when GPM fails (then `failed` is set, the next pair starts afresh, said once).
    std::optional<double> gpm_activity(unsigned gpu_instance_id, bool& failed);
    // Each process's SM ratio since the last sample into `activity` (pid -> ratio); false when
    // NVML fails (said once; without support for good: process_utilization_supported_ false).
    bool sample_process_utilization(std::map<unsigned, std::optional<double>>& activity);

    nvml::Device device_;
    std::string proc_root_;
    const ActivityReports* activity_ = nullptr;
    KernelTimeRatios kernel_ratios_;
    int intervals_without_kernel_time_ = 0;  // in a row, with the probe listened for
    uint64_t last_shared_read_ns_ = 0;       // CLOCK_MONOTONIC of the last shared-GPU reading
    std::optional<std::string> uuid_;        // the GPU's, read once
    std::optional<bool> gpm_supported_;
    std::vector<nvml::NvmlProfile> profiles_;  // read once, when MIG is first seen
    std::map<unsigned, std::unique_ptr<nvml::GpmSampleBuffer>> gpm_previous_;  // by GI id
    unsigned long long last_process_sample_us_ = 0;
    bool process_utilization_supported_ = true;
    bool any_process_sample_ = false;                 // a process has given a utilization sample
    int intervals_without_samples_ = 0;               // in a row, with processes and no sample ever
    std::map<unsigned, ProcessIdentity> identities_;  // live pids
    void warn_once(const std::string& kind, const std::string& text);
    std::vector<std::string> warnings_;
    std::set<std::string> warned_kinds_;
};

}  // namespace migscope::exporter
