// The report a process's activity probe (libmigscope-activity.so, loaded through
// CUDA_INJECTION64_PATH) sends the exporter: one datagram per GPU the process used, one text line
// with cumulative counters. Pure: no CUDA, so the exporter and its tests read what the probe
// writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace migscope::activity {

// Where the probe sends and the exporter listens unless told otherwise
// (MIGSCOPE_ACTIVITY_SOCKET in the process; `--activity-socket` of the exporter).
inline constexpr const char* kDefaultSocketPath = "/run/migscope/activity.sock";

struct ActivityReport {
    std::string gpu_uuid;     // "GPU-8e4a..." as NVML names it; letters, digits and '-' only
    uint64_t busy_ns = 0;     // kernel busy time on that GPU since the probe started (union of
                              // the process's kernels' intervals: overlapping kernels count once)
    uint64_t kernels = 0;     // kernels counted in busy_ns
    uint64_t dropped = 0;     // activity records CUPTI dropped (busy_ns is then low)
    uint64_t started_ns = 0;  // CLOCK_MONOTONIC when the probe started (busy_ns counts from it)
    uint64_t sent_ns = 0;     // CLOCK_MONOTONIC when sent: the exporter divides busy deltas by it
    // A sampling probe (MIGSCOPE_ACTIVITY_DUTY below 1) records kernels only part of the time:
    // the total time its records were on, which the exporter divides busy deltas by instead.
    std::optional<uint64_t> traced_ns;
    // The process's share of the GPU's SMs, 0-1: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100 under
    // MPS; none when the process may use every SM.
    std::optional<double> sm_share;
    // The job the process runs, as its profile names it (MIGSCOPE_JOB in the process's
    // environment: "resnet18:train:32", "resnet18:train" or a command's job name); empty when
    // unset. 1-128 bytes of letters, digits and . _ : + - (a label, never a path).
    std::string job;
    // What the probe records: "kernels", "kernels-sampled" (MIGSCOPE_ACTIVITY_DUTY below 1) or
    // "graphs" (MIGSCOPE_ACTIVITY_GRAPHS=1, one record per CUDA graph launch); empty from probes
    // that do not say. The probe's records change what a job draws, so profiles for the exporter
    // say which kind theirs ran under.
    std::string records;
};

// CLOCK_MONOTONIC in nanoseconds: the clock of started_ns and sent_ns, the same for every process
// of the host.
uint64_t monotonic_ns();

// Whether `name` may be a report's job: 1-128 bytes of letters, digits and . _ : + -.
bool valid_job_name(std::string_view name);

// "migscope-activity 1 gpu=GPU-... busy_ns=N kernels=N dropped=N started_ns=N
// sent_ns=N [traced_ns=N] [sm_share=X] [job=NAME] [records=kernels|kernels-sampled|graphs]"
std::string encode(const ActivityReport& report);
// None for anything else: another version, a missing or repeated field, a number that does not
// parse, a start after the sending, a share outside [0.001, 1], a UUID with other characters or
// over 96 bytes, a job name with other characters or over 128 bytes (valid_job_name), records
// other than kernels or graphs.
std::optional<ActivityReport> decode(std::string_view line);

}  // namespace migscope::activity
