// The group spec: the jobs the runner hands one migscope-worker process (`group --spec FILE`),
// typed, with its strict JSON reader and its writer, and the worker's `train` command line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/job_spec.h"

namespace migscope::protocol {

// When a job stops measuring: after a number of steps, after a time, or when told to (a `stop`
// line or the end of the worker's stdin).
enum class StopRule { kSteps, kSeconds, kUntilStopped };

// After warm-up: go straight on, or report `warm` and wait for the runner's `start` line.
enum class Hold { kNo, kUntilStart };

// CUDA jobs capture their step as a CUDA graph during warm-up and replay it, or step eagerly.
enum class CudaGraph { kCapture, kEager };

// One job of the worker: what to train (job.workload, mode, batch, data, checkpoint, lora_rank;
// job.name, job.command and job.steps are not part of it) and how.
struct WorkerJob {
    JobSpec job;
    int64_t warmup_steps = 3;
    StopRule stop = StopRule::kSteps;
    int64_t steps = 20;    // StopRule::kSteps
    double seconds_s = 0;  // StopRule::kSeconds
    uint64_t seed = 0;
    std::string save_checkpoint;  // where the weights are written after training; empty: nowhere
    std::optional<int> sms;       // SM partition (green context); none: all SMs
    std::optional<double> memory_limit_gib;      // cap on the job's reserved memory; none: no cap
    Hold hold_after_warmup = Hold::kNo;          // kUntilStart: fixed work starting together
    CudaGraph cuda_graph = CudaGraph::kCapture;  // on CUDA (trainer.h); kEager: every step eager
    // Group only: the index of an earlier job whose SM partition this one shares; it warms up
    // with the others, then starts its measured steps when that job ends (a queue).
    std::optional<int> after;
    // Group only, with hold_after_warmup: the measured steps start no earlier than this many
    // seconds after `start` (and after the job it follows, when queued); 0: at once.
    double start_after_s = 0;
    // `train` only: write a PyTorch-profiler trace of the measured steps here; empty: none.
    std::string profile_trace;
};

struct GroupSpec {
    std::string device;  // cpu, cuda or cuda:N
    std::vector<WorkerJob> jobs;
};

// Parses a group spec:
//   {"device": "cuda:0", "jobs": [{"workload": "resnet18", "mode": "train", "batch": 32,
//     "sms": 16, "memory_limit_gib": 16, "warmup_steps": 3, "steps": 20 | "seconds": 30 |
//     "until_stopped": true, "hold_after_warmup": true, "cuda_graph": false, "seed": 0,
//     "lora_rank": 8, "data": "FILE", "checkpoint": "FILE", "save_checkpoint": "FILE",
//     "after": 0, "start_after_s": 12.5}, ...]}
// `device`, `jobs` (at least one) and each job's `workload` are required. Strict: an unexpected
// field, a wrong type or an out-of-range value is an input error naming its path (`jobs[1].batch`;
// core/strict_fields.h words them).
// `after` names an earlier job; the queued job takes that job's partition (no `sms` of its own)
// and both must stop by steps or seconds (a job that runs until stopped never frees its SMs).
GroupSpec parse_group_spec(const std::string& json_text);

// The spec as parse_group_spec reads it (pretty-printed, keys sorted). Writes `mode`,
// `warmup_steps` and the stop rule always, the rest only where it differs from the default.
// A job the group spec cannot carry (an external command, a profile trace) is an input error.
std::string to_json_text(const GroupSpec& spec);

// The migscope-worker argv that trains one job on its own (`train` subcommand) on `device`
// (cpu, cuda or cuda:N). seed, save_checkpoint, sms, memory_limit_gib and profile_trace are
// passed when set; `after` has no meaning there (input error).
std::vector<std::string> train_argv(const std::string& worker_path, const WorkerJob& job,
                                    const std::string& device);

// 1 GiB in bytes.
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

}  // namespace migscope::protocol
