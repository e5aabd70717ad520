// Slurm's GRES type names for MIG devices: what slurmd's NVML autodetection calls them on a GPU
// model (Slurm's gpu_nvml.c), or what a site's own template gives.
#pragma once

#include <string>
#include <string_view>

#include "mig/catalog.h"

namespace migscope::report {

// The NVML device name of a built-in model's usual board ("NVIDIA H200", "NVIDIA A100-SXM4-80GB"),
// or empty for a model without one here. Other boards of a model are named otherwise
// ("NVIDIA H200 NVL", "NVIDIA A100 80GB PCIe"): --slurm-gres-type covers them.
std::string nvml_board_name(const mig::GpuModel& model);

// An NVML device name as Slurm writes GPU types: lower case, spaces as '_' ("NVIDIA H200 NVL"
// -> "nvidia_h200_nvl"). For a MIG device's parent, Slurm then cuts the name at its first '-'
// ("nvidia_a100-sxm4-80gb" -> "nvidia_a100"): `mig_parent` does that too.
enum class SlurmGpuName { kWholeGpu, kMigParent };
std::string slurm_gpu_name(std::string_view nvml_name, SlurmGpuName kind);

// How MIG devices' GRES types are named (--slurm-gres-type):
// - "nvml" (the default): Slurm 23.02.6 and later, which take the profile from the MIG device's
//   NVML name: GPU_PROFILE ("nvidia_h200_3g.71gb").
// - "nvml-legacy": Slurm 21.08 to 23.02.5, which wrote the GPU instance's slices and its memory
//   in GiB, rounded: GPU_Ng.Mgb ("nvidia_h200_3g.70gb": 69.75 GiB).
// - anything else is a template: "{gpu}" is Slurm's name of the GPU as above ("nvidia_h200"),
//   "{profile}" NVIDIA's profile name ("3g.71gb"), "{size}" the legacy Ng.Mgb ("3g.70gb");
//   "h200_{profile}", "{profile}", "nvidia_h200_nvl_{profile}".
// The type of one profile of `model`. Input error (naming --slurm-gres-type) when the template
// has another placeholder, when its result is empty or holds a character other than letters,
// digits and ._+- (it becomes slurm.conf and gres.conf text), when {gpu} is asked of a model
// without an NVML name here, or {size} of a profile whose memory is unknown.
std::string slurm_gres_type(const mig::GpuModel& model, const mig::Profile& profile,
                            std::string_view naming = "nvml");

}  // namespace migscope::report
