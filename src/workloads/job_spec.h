// What one training job of the worker is (model, mode, batch, stopping rule, SM share, memory
// cap), and the strict JSON spec of a group of jobs run side by side in one worker process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace migscope::workloads {

// When a job stops measuring: after a number of steps, after a time, or when told to (a `stop`
// line or the end of the worker's stdin).
enum class StopRule { kSteps, kSeconds, kUntilStopped };

struct JobSpec {
    std::string model;
    std::string mode = "train";  // train | finetune
    int64_t batch = 0;           // 0 = the workload's default
    int64_t warmup_steps = 3;
    StopRule stop = StopRule::kSteps;
    int64_t steps = 20;    // kSteps
    double seconds_s = 0;  // kSeconds
    uint64_t seed = 0;
    int64_t lora_rank = 8;
    std::string data;             // empty: synthetic
    std::string checkpoint;       // safetensors weights loaded before training; empty: random
    std::string save_checkpoint;  // where the weights are written after training; empty: nowhere
    std::optional<int> sms;       // SM partition (green context); none: all SMs
    std::optional<double> memory_limit_gib;  // cap on the job's reserved memory; none: no cap
    // After warm-up, emit `warm` and wait for a `start` line (fixed work starting together).
    bool hold_after_warmup = false;
    // On CUDA: capture the step as a CUDA graph after the first warm-up steps and replay it
    // (trainer.h); false: every step eager.
    bool cuda_graph = true;
    // Group only: the index of an earlier job whose SM partition this one shares; it warms up
    // with the others, then starts its measured steps when that job ends (a queue).
    std::optional<int> after;
    // `train` only: write a PyTorch-profiler trace of the measured steps here; empty: none.
    std::string profile_trace;
};

struct GroupSpec {
    std::string device;  // cpu, cuda or cuda:N
    std::vector<JobSpec> jobs;
};

// Parses a group spec:
//   {"device": "cuda:0", "jobs": [{"model": "resnet18", "mode": "train", "batch": 32, "sms": 16,
//     "memory_limit_gib": 16, "warmup_steps": 3, "steps": 20 | "seconds": 30 |
//     "until_stopped": true, "hold_after_warmup": true, "cuda_graph": false, "seed": 0,
//     "lora_rank": 8,
//     "data": "FILE", "checkpoint": "FILE", "save_checkpoint": "FILE", "after": 0}, ...]}
// `device`, `jobs` (at least one) and each job's `model` are required. Strict: an unknown key, a
// wrong type or an out-of-range value is an input error naming its path (`jobs[1].batch`).
// `after` names an earlier job; the queued job takes that job's partition (no `sms` of its own)
// and both must stop by steps or seconds (a job that runs until stopped never frees its SMs).
GroupSpec parse_group_spec(const std::string& json_text);

// 1 GiB in bytes.
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

}  // namespace migscope::workloads
