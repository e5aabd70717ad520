// The one job-spec type: what a job is (a built-in workload or an external command), shared by the
// CLI's job lists, the runner, the partition backends and the worker's group spec.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace migscope::protocol {

struct JobSpec {
    std::string name;                  // shown in every output; unique within a run
    std::string workload;              // built-in workload; empty for an external command
    std::vector<std::string> command;  // external command's argv (never run through a shell)
    std::string mode = "train";        // train | finetune (built-in workloads)
    std::optional<int64_t> batch;      // empty: the workload's default
    std::string data;                  // data file; empty: synthetic
    std::string checkpoint;            // safetensors weights to start from; empty: random
    std::optional<int64_t> lora_rank;  // GPT-2 fine-tuning; empty: the worker's default (8)
    // Fixed-work runs: this job's measured steps instead of the run's (experiment specs' matched
    // work gives each partition work in proportion to its size); empty: the run's. The backends
    // resolve it into WorkerJob::steps (group_spec.h); the group spec does not carry it.
    std::optional<int64_t> steps;
    // External command: the unit of its progress lines' items when a line names none ("items").
    std::optional<std::string> item_unit;
    bool external() const { return workload.empty(); }
};

// The worker's default LoRA rank (GPT-2 fine-tuning) when a job gives none.
constexpr int64_t kDefaultLoraRank = 8;

}  // namespace migscope::protocol
