// Jobs from the command line and from JSON jobs files (the job-spec type itself:
// protocol/job_spec.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/strict_fields.h"
#include "protocol/job_spec.h"

namespace migscope::partition {

// The one job-spec type lives in the protocol module (the worker's group spec carries it too);
// this name stays for the partition, runner and CLI code that says partition::JobSpec.
using JobSpec = protocol::JobSpec;

// The built-in workloads migscope-worker knows (src/workloads/models/registry.cpp keeps the models;
// tests/workloads checks that the two lists agree). The CLI does not link torch.
const std::vector<std::string>& builtin_workload_names();

// The longest job name, in bytes (UTF-8).
inline constexpr size_t kMaxJobNameBytes = 255;

// A job name is 1 to kMaxJobNameBytes bytes without control characters (bytes below 0x20 and
// 0x7f): names go into tables, logs and figure titles as text, and file names derived from them
// are slugs (text::slug). Throws an input error naming `where` otherwise.
void check_job_name(const std::string& name, const std::string& where);

// Throws an input error naming `where` unless `workload` is one of builtin_workload_names().
void check_builtin_workload(const std::string& workload, const std::string& where);

// How a job is named in progress lines: WORKLOAD:MODE[:BATCH] for a built-in one (as --jobs
// takes it), its name for a command.
std::string job_text(const JobSpec& job);

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

// The jobs of --jobs LIST and --jobs-file FILE together (the list's first), names made unique
// across both; either may be empty, not both (an input error naming the two options).
std::vector<JobSpec> jobs_from_options(std::string_view list, const std::string& file);
std::vector<JobSpec> parse_jobs_json(std::string_view text, const std::string& origin);
// The fields a jobs file's entry may hold (readers that extend an entry, as a trace's, add theirs).
const strict::Expected& jobs_file_keys();

}  // namespace migscope::partition
