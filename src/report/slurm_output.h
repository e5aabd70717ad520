// A plan as Slurm's files: gres.conf (AutoDetect=nvml, or every device with its files),
// slurm.conf's GRES and node lines, the mig-parted config, one sbatch script per job and a
// submit.sh that keeps each queue's order.
#pragma once

#include <string>
#include <vector>

#include "plan/search.h"
#include "protocol/job_spec.h"

namespace migscope::report {

// One file of a deployment: the caller writes it into the folder the user named.
struct DeployFile {
    std::string name;  // a plain file name, no folder: "gres.conf", "migscope-01-resnet18.sbatch"
    std::string text;
    bool executable = false;
};

struct SlurmOptions {
    // How MIG devices' GRES types are named: slurm_gres_type's naming ("nvml", "nvml-legacy" or
    // a template). A whole GPU is untyped (gpu:1).
    std::string gres_type = "nvml";
};

// The files of a plan's recommendation, in this order:
// - gres.conf: `AutoDetect=nvml` (a Slurm built with NVML names the MIG devices itself);
// - gres-explicit.conf: every device of each layout, Type= and File= (a whole GPU) or
//   MultipleFiles= (a MIG device: its GPU's /dev/nvidiaN and its instances' nvidia-caps files,
//   whose minors only the node knows: GI_MINOR and CI_MINOR stand for them), for a Slurm
//   without NVML;
// - slurm.conf: GresTypes and one NodeName line per distinct layout (NODES_n, its config name
//   as the nodes' feature, a Gres= count per type);
// - mig-parted.yaml: the layouts to apply on those nodes;
// - one JOB.sbatch per job in plan order (JOB is DeployJob::name: `#SBATCH --gres=gpu:TYPE:1
//   --constraint=CONFIG` and `exec` of its command, every argument shell-quoted on one line:
//   control characters as $'\n' escapes);
// - submit.sh (executable): sbatch of every script, a queue's later jobs with
//   --dependency=afterany on the one before; its arguments go to every sbatch.
// Every name in them comes from the plan (label-safe config names, dns_label job names); the
// user's text is in quoted arguments and comments only. Input error from slurm_gres_type, and
// when the naming gives two profiles of different sizes the same type.
std::vector<DeployFile> plan_slurm(const plan::Problem& problem, const plan::Candidate& plan,
                                   const SlurmOptions& options = {},
                                   const std::vector<protocol::JobSpec>& specs = {});

// One argument as bash reads it back unchanged, on one line: bare when plainly safe, else in
// single quotes, or as $'...' with escapes when it holds control characters.
std::string shell_quote(const std::string& arg);

}  // namespace migscope::report
