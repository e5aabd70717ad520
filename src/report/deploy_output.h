// A plan as deployment files: what NVIDIA's GPU Operator needs (the mig-parted ConfigMap, the
// nvidia.com/mig.config node labels, one batch/v1 Job per job), and what every deployment shares
// (the planned jobs with their commands, the layouts' config names). Slurm's files:
// slurm_output.h.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mig/mig_parted.h"
#include "plan/search.h"
#include "protocol/job_spec.h"

namespace migscope::report {

// A Kubernetes object name (an RFC 1123 label): lower-case letters, digits and '-', at most 63
// characters, beginning and ending with a letter or digit; "x" when nothing is left.
std::string dns_label(std::string_view text);

// The mig-parted config (and nvidia.com/mig.config label value) of one GPU of a plan, named by
// its profile counts, largest first: "migscope-1x4g.71gb-1x2g.35gb-1x1g.18gb"; the whole GPU is
// "all-disabled" (NVIDIA's name, the GPU Operator's default label). A label value: at most 63
// characters of [A-Za-z0-9._-], alphanumeric at both ends (a longer name keeps its start and ends
// in a hash of the whole).
std::string layout_config_name(const plan::GpuPlan& gpu);

// The profiles of a layout with their counts, largest (first placed) first.
std::vector<std::pair<std::string, unsigned>> profile_counts(const mig::Layout& layout);

// The distinct configs (layout_config_name) of a plan, in order of their first GPU, with the
// GPUs of each.
std::vector<std::pair<std::string, std::vector<size_t>>> configs_of(const plan::Plan& plan);

// The mig-parted document of a plan: one config per distinct layout, for every GPU of a node
// (devices: all), and all-disabled (the GPU Operator's default label) whether the plan uses it
// or not.
std::string mig_parted_document(const plan::Plan& plan);

// One planned job as it is deployed.
struct DeployJob {
    size_t job = 0;             // index in problem.jobs
    std::string original_name;  // as the user gave it (untrusted text)
    std::string name;           // "migscope-01-resnet18": dns_label, unique in the plan
    size_t gpu = 0;
    size_t partition = 0;  // in the GPU's layout
    std::string profile;   // MIG profile ("3g.71gb"); empty on a whole GPU
    std::string config;    // its GPU's layout_config_name
    size_t position = 1;   // in its partition's queue, from 1
    size_t queue_length = 1;
    std::string after;  // the name of the job before it in the queue (empty for the first)
    // What the container or batch script runs: the user's command, or `migscope train ...`.
    std::vector<std::string> argv;
};

// The candidate's jobs in plan order (GPU, partition, queue position). Built-in jobs run
// `migscope train --model W --mode M --batch B` with --steps of their planned work, or --seconds
// of their predicted time on the partition when the work was given as a weight, and the
// --data, --checkpoint and --lora-rank of their spec. `specs` are the jobs the problem was made
// from, in its order (empty: none of those three); an input error when they do not match.
std::vector<DeployJob> deploy_jobs(const plan::Problem& problem, const plan::Candidate& plan,
                                   const std::vector<protocol::JobSpec>& specs = {});

struct KubernetesOptions {
    std::string image;  // required: the image every Job runs
    std::string job_namespace = "default";
    std::string operator_namespace = "gpu-operator";
    std::string configmap = "migscope-mig-parted-config";
    // A user's existing mig-parted config (a ConfigMap holding one, or the bare file) to merge
    // the plan's configs into, and where it came from (for messages); empty: NVIDIA's default
    // configs (mig::default_mig_configs) go beside the plan's.
    std::string base_config_text;
    std::string base_config_path;
};

// The ConfigMap's mig-parted configs: `base` (NVIDIA's defaults, or a user's configs), then the
// plan's configs. A plan config whose name `base` already has is an input error naming it, except
// all-disabled when the base's is NVIDIA's (every device, MIG off).
std::vector<mig::MigPartedConfig> merged_mig_configs(const plan::Plan& plan,
                                                     std::vector<mig::MigPartedConfig> base,
                                                     const std::string& base_name);

// A base config as read from a user's file: a ConfigMap (its name, namespace and the data key
// holding the mig-parted document: config.yaml, or its only key) or a bare mig-parted document.
struct BaseConfig {
    std::vector<mig::MigPartedConfig> configs;
    std::string configmap;  // empty for a bare document
    std::string configmap_namespace;
    std::string data_key = "config.yaml";
};
BaseConfig read_base_config(const std::string& text, const std::string& path);

// A multi-document YAML stream: a comment with the node labels to set, the ConfigMap holding
// the mig-parted config (`config.yaml`, one named config per distinct layout, and all-disabled
// for the nodes without a label), and one Job per
// job requesting `nvidia.com/mig-PROFILE: 1` (the operator's mixed strategy; `nvidia.com/gpu`
// on a whole GPU) on a node labelled with its layout. A queue's later jobs are created suspended
// and name the job before them. Input error when the image is empty or the namespace is not a
// namespace name.
std::string plan_kubernetes(const plan::Problem& problem, const plan::Candidate& plan,
                            const KubernetesOptions& options,
                            const std::vector<protocol::JobSpec>& specs = {});

}  // namespace migscope::report
