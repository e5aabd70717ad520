// Reading MIG instances, processes and their activity from NVML, and process identities from /proc.
#include "exporter/consumers.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "core/text.h"
#include "exporter/activity_listener.h"
#include "exporter/kubernetes.h"
#include "exporter/slurm.h"
#include "nvml/mig_instances_api.h"

namespace migscope::exporter {
namespace {

// The MPS control daemon's server process, and /proc/PID/comm's name for it: the kernel keeps
// 15 bytes of a name (TASK_COMM_LEN 16, with its NUL).
constexpr const char* kMpsServerCommand = "nvidia-cuda-mps-server";
constexpr const char* kMpsServerComm = "nvidia-cuda-mps";
// Intervals in a row with processes and no sample ever before that is said on stderr; with the
// probe listened for, also before an MPS server or a process without the probe's report is.
constexpr int kIntervalsBeforeNoSampleWarning = 5;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

bool no_activity(const std::vector<ConsumerActivity>& consumers) {
    return std::none_of(consumers.begin(), consumers.end(), has_activity);
}

// What is said while an MPS server serves the GPU and its clients send no probe's reports.
std::string mps_server_warning(const std::string& server_command, unsigned server_pid) {
    return "an MPS server (" + server_command + ", pid " + std::to_string(server_pid) +
           ") serves this GPU: the driver reports its clients' SM use as the "
           "server's, so no client's activity is measured and the dynamic energy goes "
           "to `unattributed` while it runs (never to the server); start the clients "
           "with the activity probe (docs/exporter.md) to measure each";
}

// The GPU's compute slices: the largest GPU instance profile's (7 when none says).
double total_compute_slices(const std::vector<nvml::NvmlProfile>& profiles) {
    double total = 0;
    for (const nvml::NvmlProfile& p : profiles)
        total = std::max<double>(total, p.slice_count);
    return total <= 0 ? 7 : total;
}

// A MIG instance as a consumer: its profile and id, and the container that holds it where
// exactly one does (a new tenant of the instance is a new series: its counter starts at 0).
ConsumerActivity mig_consumer(const nvml::NvmlProfile& profile, unsigned gpu_instance_id,
                              const std::map<unsigned, std::vector<std::string>>& instance_uuids,
                              const DeviceOwners& owners) {
    std::string name = profile.name.rfind("MIG ", 0) == 0 ? profile.name.substr(4) : profile.name;
    if (name.empty())
        name = std::to_string(profile.slice_count) + "g";
    const std::string id = std::to_string(gpu_instance_id);
    ConsumerActivity c;
    c.consumer.kind = ConsumerKind::kMigInstance;
    c.consumer.key = "mig:" + id + ":" + name;
    c.consumer.labels = {{"GPU_I_PROFILE", name}, {"GPU_I_ID", id}};
    if (const auto uuids = instance_uuids.find(gpu_instance_id); uuids != instance_uuids.end()) {
        if (const std::optional<ContainerName> holder = sole_owner(owners, uuids->second)) {
            c.consumer.key +=
                ":" + holder->namespace_name + "/" + holder->pod + "/" + holder->container;
            c.consumer.labels.insert(c.consumer.labels.end(),
                                     {{"namespace", holder->namespace_name},
                                      {"pod", holder->pod},
                                      {"container", holder->container}});
        }
    }
    c.compute_slices = profile.slice_count;
    return c;
}

}  // namespace

bool is_mps_server_command(const std::string& command) {
    return command == kMpsServerCommand || command == kMpsServerComm;
}

ProcessIdentity read_process_identity(const std::string& proc_root, unsigned pid) {
    const std::string dir = proc_root + "/" + std::to_string(pid);
    ProcessIdentity identity;
    identity.command = read_text(dir + "/comm");
    while (!identity.command.empty() && identity.command.back() == '\n')
        identity.command.pop_back();
    const std::string cgroup = read_text(dir + "/cgroup");
    if (auto pod = parse_pod_cgroup(cgroup)) {
        identity.pod_uid = pod->pod_uid;
        identity.container_id = pod->container_id;
    }
    identity.slurm_job_id = parse_slurm_job_cgroup(cgroup).value_or("");
    return identity;
}

ConsumerReader::ConsumerReader(nvml::Device device, std::string proc_root,
                               const ActivityReports* activity)
    : device_(std::move(device)), proc_root_(std::move(proc_root)), activity_(activity) {}

ConsumerReader::~ConsumerReader() = default;

std::vector<std::string> ConsumerReader::take_warnings() {
    return std::exchange(warnings_, {});
}

void ConsumerReader::warn_once(const std::string& kind, const std::string& text) {
    if (warned_kinds_.insert(kind).second)
        warnings_.push_back("GPU " + std::to_string(device_.index()) + ": " + text);
}

ConsumerReading ConsumerReader::read(const DeviceOwners& owners) {
    const nvml::Reading<nvml::MigMode> mode = device_.mig_mode();
    if (!mode.value && mode.supported() && mode.code != nvml::api::kSuccess) {
        throw nvml::CallError(
            ErrorKind::kRuntime,
            "nvmlDeviceGetMigMode failed (NVML code " + std::to_string(mode.code) + ")",
            "nvmlDeviceGetMigMode", mode.code);
    }
    if (mode.value && mode.value->current_enabled)
        return read_mig(owners);
    return read_shared(owners);
}

std::map<unsigned, std::vector<std::string>> ConsumerReader::mig_device_uuids() {
    std::map<unsigned, std::vector<std::string>> uuids;
    try {
        for (const nvml::MigDevice& d : nvml::MigInstancesApi(device_).mig_devices())
            uuids[d.gpu_instance_id].push_back(d.uuid);
    } catch (const nvml::CallError& e) {
        if (e.code() == nvml::api::kErrorGpuIsLost)
            throw;
        warn_once("mig-device-uuids",
                  std::string(e.what()) +
                      " (MIG instances carry no Kubernetes names while it fails; said once)");
        uuids.clear();
    }
    return uuids;
}

ConsumerReading ConsumerReader::read_mig(const DeviceOwners& owners) {
    ConsumerReading reading;
    reading.sharing = Sharing::kMig;
    const nvml::MigInstancesApi mig(device_);
    reading.has_compute_processes = !mig.compute_processes().empty();
    if (profiles_.empty())
        profiles_ = device_.gpu_instance_profiles();
    reading.total_compute_slices = total_compute_slices(profiles_);
    if (!gpm_supported_)
        gpm_supported_ = nvml::gpm_supported(device_);
    if (!*gpm_supported_) {
        reading.activity_measured = false;
        warn_once("no-gpm",
                  "the driver gives no GPM samples (nvmlGpmQueryDeviceSupport), so MIG instances "
                  "get their static share only and dynamic energy is unattributed");
    }
    // Which container holds each instance: only asked of NVML while the kubelet assigns devices.
    const std::map<unsigned, std::vector<std::string>> instance_uuids =
        owners.empty() ? std::map<unsigned, std::vector<std::string>>{} : mig_device_uuids();
    std::set<unsigned> seen;
    std::set<unsigned> seen_profile_ids;
    bool activity_failed = false;
    for (const nvml::NvmlProfile& profile : profiles_) {
        // Profile ids can repeat across enums (e.g. +me variants): list each id's instances once.
        if (!seen_profile_ids.insert(profile.id).second)
            continue;
        std::vector<nvml::GpuInstanceRecord> instances;
        try {
            instances = mig.gpu_instances(profile.id);
        } catch (const nvml::CallError& e) {
            if (e.code() != nvml::api::kErrorNoPermission)
                throw;
            // Listing GPU instances may need root (or CAP_SYS_ADMIN): without it the board is
            // still measured, its energy goes to `idle` and `unattributed`.
            warn_once("mig-no-permission",
                      std::string(e.what()) +
                          ": MIG instances cannot be listed without more privilege, so no energy "
                          "is attributed to them");
            reading.consumers.clear();
            reading.activity_measured = false;
            reading.instances_listed = false;
            gpm_previous_.clear();
            return reading;
        }
        for (const nvml::GpuInstanceRecord& gi : instances) {
            seen.insert(gi.id);
            ConsumerActivity c = mig_consumer(profile, gi.id, instance_uuids, owners);
            if (*gpm_supported_)
                c.activity_ratio = gpm_activity(gi.id, activity_failed);
            reading.consumers.push_back(std::move(c));
        }
    }
    for (auto it = gpm_previous_.begin(); it != gpm_previous_.end();)
        it = seen.count(it->first) ? std::next(it) : gpm_previous_.erase(it);
    reading.idle =
        !reading.has_compute_processes && !activity_failed && no_activity(reading.consumers);
    return reading;
}

std::optional<double> ConsumerReader::gpm_activity(unsigned gpu_instance_id, bool& failed) {
    std::optional<double> ratio;
    try {
        auto sample = std::make_unique<nvml::GpmSampleBuffer>(device_);
        nvml::gpm_mig_sample(device_, gpu_instance_id, *sample);
        auto previous = gpm_previous_.find(gpu_instance_id);
        if (previous != gpm_previous_.end())
            ratio = nvml::gpm_sm_activity_ratio(device_, *previous->second, *sample);
        gpm_previous_[gpu_instance_id] = std::move(sample);
    } catch (const nvml::CallError& e) {
        if (e.code() == nvml::api::kErrorGpuIsLost)
            throw;
        // This instance's activity is unknown this interval (its dynamic share goes
        // to `unattributed`); the next pair of samples starts afresh.
        gpm_previous_.erase(gpu_instance_id);
        failed = true;
        warn_once("gpm-error", std::string(e.what()) +
                                   " (its dynamic energy is unattributed while it "
                                   "fails; said once)");
    }
    return ratio;
}

Consumer ConsumerReader::process_consumer(unsigned pid,
                                          const std::optional<ContainerName>& gpu_owner) {
    auto it = identities_.find(pid);
    if (it == identities_.end())
        it = identities_.emplace(pid, read_process_identity(proc_root_, pid)).first;
    const ProcessIdentity& id = it->second;
    Consumer c;
    c.kind = ConsumerKind::kProcess;
    // The command and pod keep a reused pid from adding to an earlier process's counter.
    c.key =
        "pid:" + std::to_string(pid) + ":" + id.command + ":" + id.pod_uid + ":" + id.slurm_job_id;
    c.labels = {{"pid", std::to_string(pid)}};
    if (!id.command.empty())
        c.labels.emplace_back("command", id.command);
    // Names only for a process in a pod (by its cgroup): a host process on a GPU that one
    // container holds is not that container's.
    if (gpu_owner && !id.pod_uid.empty()) {
        c.key +=
            ":" + gpu_owner->namespace_name + "/" + gpu_owner->pod + "/" + gpu_owner->container;
        c.labels.insert(c.labels.end(), {{"namespace", gpu_owner->namespace_name},
                                         {"pod", gpu_owner->pod},
                                         {"container", gpu_owner->container}});
    }
    if (!id.pod_uid.empty())
        c.labels.emplace_back("pod_uid", id.pod_uid);
    if (!id.container_id.empty())
        c.labels.emplace_back("container_id", id.container_id);
    if (!id.slurm_job_id.empty())
        c.labels.emplace_back("slurm_job_id", id.slurm_job_id);
    return c;
}

const std::string& ConsumerReader::gpu_uuid() {
    if (!uuid_)
        uuid_ = device_.uuid().value.value_or("");
    return *uuid_;
}

std::optional<std::vector<ConsumerReader::ProbeActivity>> ConsumerReader::kernel_time_activity(
    const std::vector<unsigned>& pids) {
    if (!activity_ || pids.empty())
        return std::nullopt;
    const uint64_t now_ns = activity::monotonic_ns();
    std::vector<ProbeActivity> ratios;
    std::vector<std::string> without_text;
    for (unsigned pid : pids) {
        const auto report = activity_->latest(pid, gpu_uuid());
        const std::optional<double> ratio =
            report ? kernel_ratios_.ratio(pid, *report, now_ns) : std::nullopt;
        if (ratio)
            ratios.push_back({*ratio, report->job, report->sm_share, report->records});
        else
            without_text.push_back(std::to_string(pid));
        if (ratio && report->dropped > 0)
            warn_once("dropped-records-" + std::to_string(pid),
                      "process " + std::to_string(pid) + "'s activity probe lost " +
                          std::to_string(report->dropped) +
                          " CUPTI activity records: its kernel time, and so its share, reads "
                          "low (said once for it)");
    }
    kernel_ratios_.forget_except(std::set<unsigned>(pids.begin(), pids.end()));
    intervals_without_kernel_time_ = without_text.empty() ? 0 : intervals_without_kernel_time_ + 1;
    if (without_text.empty())
        return ratios;
    if (!ratios.empty() && intervals_without_kernel_time_ >= kIntervalsBeforeNoSampleWarning)
        warn_once("partial-kernel-time",
                  "process(es) " + text::join(without_text, ", ") +
                      " send no fresh activity report (no probe, or it stopped) while others "
                      "do: kernel time is used only when every process sends it, so the split "
                      "falls back to NVML's (under MPS: unattributed) while this lasts (said "
                      "once)");
    return std::nullopt;
}

void ConsumerReader::add_exited_reporters(
    std::map<unsigned, std::optional<double>>& sm_ratio_by_pid) {
    if (!activity_)
        return;
    const uint64_t now_ns = activity::monotonic_ns();
    const uint64_t fresh_from_ns =
        now_ns > KernelTimeRatios::kStaleAfterNs ? now_ns - KernelTimeRatios::kStaleAfterNs : 0;
    for (unsigned pid :
         activity_->reported_since(gpu_uuid(), std::max(last_shared_read_ns_, fresh_from_ns)))
        sm_ratio_by_pid.try_emplace(pid);  // no NVML sample: the probe's report measures it
    last_shared_read_ns_ = now_ns;
}

bool ConsumerReader::sample_process_utilization(
    std::map<unsigned, std::optional<double>>& activity) {
    try {
        for (const nvml::ProcessSmSample& s :
             nvml::process_sm_utilization(device_, last_process_sample_us_)) {
            activity[s.pid] = s.sm_ratio;  // a process that just exited still counts
            last_process_sample_us_ = std::max(last_process_sample_us_, s.timestamp_us);
        }
    } catch (const nvml::CallError& e) {
        if (e.code() == nvml::api::kErrorGpuIsLost)
            throw;
        if (e.code() == nvml::api::kErrorNotSupported ||
            e.code() == nvml::api::kErrorFunctionNotFound) {
            process_utilization_supported_ = false;
            warn_once("no-process-utilization",
                      std::string("the driver gives no per-process SM utilization (") + e.what() +
                          "), so dynamic energy is unattributed");
        } else {
            // Another error: this interval's activity is unknown (unattributed), the GPU
            // stays up and the next interval tries again.
            warn_once("process-utilization-error",
                      std::string(e.what()) +
                          " (dynamic energy is unattributed while it fails; said once)");
        }
        return false;
    }
    return true;
}

ConsumerReading ConsumerReader::read_shared(const DeviceOwners& owners) {
    ConsumerReading reading;
    reading.sharing = Sharing::kShared;
    const nvml::MigInstancesApi mig(device_);
    std::map<unsigned, std::optional<double>> activity;  // pid -> SM ratio
    for (const nvml::ComputeProcess& p : mig.compute_processes())
        activity[p.pid];
    reading.has_compute_processes = !activity.empty();
    const bool measured = process_utilization_supported_ && sample_process_utilization(activity);
    reading.activity_measured = process_utilization_supported_;
    add_exited_reporters(activity);
    // The container the kubelet gave this GPU (or replicas of it) to, when exactly one holds it.
    std::optional<ContainerName> gpu_owner;
    if (!owners.empty() && !activity.empty() && !gpu_uuid().empty())
        gpu_owner = sole_owner(owners, {gpu_uuid()});
    std::map<unsigned, ProcessIdentity> live;
    std::vector<ConsumerActivity> processes;
    std::vector<unsigned> tenant_pids;
    std::optional<unsigned> server_pid;
    for (const auto& [pid, ratio] : activity) {
        ConsumerActivity c;
        c.consumer = process_consumer(pid, gpu_owner);
        live[pid] = identities_[pid];
        if (is_mps_server_command(live[pid].command)) {
            // The server is no tenant: it is never charged, so it is no consumer.
            reading.mps_server = true;
            server_pid = pid;
            continue;
        }
        // A listed process without a sample in the interval did no measured SM work.
        if (measured)
            c.activity_ratio = ratio.value_or(0.0);
        any_process_sample_ = any_process_sample_ || (measured && ratio.has_value());
        processes.push_back(std::move(c));
        tenant_pids.push_back(pid);
    }
    if (const auto kernel = kernel_time_activity(tenant_pids)) {
        reading.kernel_time = true;
        for (size_t i = 0; i < processes.size(); ++i) {
            processes[i].activity_ratio = (*kernel)[i].ratio;
            processes[i].job = (*kernel)[i].job;
            processes[i].sm_share = (*kernel)[i].sm_share;
            processes[i].probe_records = (*kernel)[i].records;
        }
    } else if (reading.mps_server) {
        // With the probe listened for, a client's first report may trail its first listing.
        if (!activity_ || intervals_without_kernel_time_ >= kIntervalsBeforeNoSampleWarning)
            warn_once("mps-server", mps_server_warning(live[*server_pid].command, *server_pid));
        for (ConsumerActivity& c : processes)
            c.activity_ratio.reset();
    }
    reading.consumers = std::move(processes);
    reading.process_signal_missing = measured && !reading.consumers.empty() &&
                                     !any_process_sample_ && !reading.mps_server &&
                                     !reading.kernel_time;
    // Said once it lasts: a process's first interval may end before its first sample.
    intervals_without_samples_ =
        reading.process_signal_missing ? intervals_without_samples_ + 1 : 0;
    if (intervals_without_samples_ >= kIntervalsBeforeNoSampleWarning)
        warn_once("no-process-samples",
                  "compute processes run but the driver has given no per-process SM utilization "
                  "sample for any of them (nvmlDeviceGetProcessUtilization), so dynamic energy is "
                  "unattributed until one does");
    identities_ = std::move(live);
    // nvmlDeviceGetUtilizationRates: the share of time a kernel ran (any process, graphics too).
    const nvml::Reading<nvml::api::Utilization> busy = device_.utilization();
    reading.idle = !reading.has_compute_processes && measured == process_utilization_supported_ &&
                   no_activity(reading.consumers) && (!busy.value || busy.value->gpu == 0);
    return reading;
}

}  // namespace migscope::exporter
