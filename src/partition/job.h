// A job to run on a partition: a built-in workload (run by migscope-worker) or an external command.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace migscope::partition {

struct JobSpec {
    std::string name;                  // shown in every output; unique within a run
    std::string workload;              // built-in workload; empty for an external command
    std::vector<std::string> command;  // external command's argv (never run through a shell)
    std::string mode = "train";        // train | finetune (built-in workloads)
    std::optional<int64_t> batch;      // empty: the workload's default
    std::string data;                  // data file; empty: synthetic
    std::string checkpoint;            // safetensors weights to start from; empty: random
    std::optional<int64_t> lora_rank;  // GPT-2 fine-tuning; empty: the worker's default
    // Fixed-work runs: this job's measured steps instead of the run's (experiment specs' matched
    // work gives each partition work in proportion to its size); empty: the run's.
    std::optional<int64_t> steps;
    bool external() const { return workload.empty(); }
};

// The built-in workloads migscope-worker knows (src/workloads/registry.cpp keeps the models;
// tests/workloads checks that the two lists agree). The CLI does not link torch.
const std::vector<std::string>& builtin_workload_names();

// Gives repeated names a "#2", "#3" suffix so that every job can be named in outputs.
void make_names_unique(std::vector<JobSpec>& jobs);

// Parses "resnet50,bert-base:finetune,resnet18:32,gpt2-xl:finetune:4": WORKLOAD[:MODE][:BATCH]
// per job. Names are made unique ("resnet18", "resnet18#2"). Throws an input error naming the
// offending item.
std::vector<JobSpec> parse_job_list(std::string_view text);

// Reads a JSON jobs file: {"jobs": [{"workload": "resnet18", "mode": "finetune", "batch": 32,
// "data": "...", "lora_rank": 8, "checkpoint": "...", "name": "..."}, {"command": ["python3", "train.py"], "name":
// "mine"}]}. Unknown keys are rejected with their path ("jobs[1].bach").
std::vector<JobSpec> read_jobs_file(const std::string& path);
std::vector<JobSpec> parse_jobs_json(std::string_view text, const std::string& origin);

}  // namespace migscope::partition
