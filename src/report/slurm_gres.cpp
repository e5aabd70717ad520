// Slurm's GRES type names for MIG devices, after Slurm's gpu_nvml.c: the parent GPU's NVML name
// lower-cased with spaces as '_' and cut at its first '-', then '_' and the profile (23.02.6 and
// later: from the MIG device's NVML name, "NVIDIA H200 MIG 3g.71gb") or, before, the GPU
// instance's slice count and memory (MiB / 1024, rounded).
#include "report/slurm_gres.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"

namespace migscope::report {
namespace {

constexpr const char* kOption = "--slurm-gres-type";

// The NVML name of each built-in model's usual board (nvmlDeviceGetName). Boards of the same
// profiles with other names: A100 80GB PCIe ("NVIDIA A100 80GB PCIe"), H200 NVL ("NVIDIA H200
// NVL"); the A100 40GB PCIe ("NVIDIA A100-PCIE-40GB") gives the same MIG types as its SXM4.
const std::vector<std::pair<const char*, const char*>>& board_names() {
    static const std::vector<std::pair<const char*, const char*>> names = {
        {"a30", "NVIDIA A30"},
        {"a100-40gb", "NVIDIA A100-SXM4-40GB"},
        {"a100-80gb", "NVIDIA A100-SXM4-80GB"},
        {"h100-80gb", "NVIDIA H100 80GB HBM3"},
        {"h100-80gb-pcie", "NVIDIA H100 PCIe"},
        {"h100-94gb", "NVIDIA H100 NVL"},
        {"h200", "NVIDIA H200"},
        {"b200", "NVIDIA B200"},
        {"gh200-96gb", "NVIDIA GH200 480GB"},
        {"gh200-144gb", "NVIDIA GH200 144G HBM3e"},
        {"h20", "NVIDIA H20"},
        {"gb200", "NVIDIA GB200"},
        {"gb200-189gb", "NVIDIA GB200"},  // the same board under its early profile names
        {"b300", "NVIDIA B300 SXM6 AC"},
        {"gb300", "NVIDIA GB300"},
        {"rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
        // h100-96gb: its boards' NVML name is not known here ({gpu} is refused for it).
    };
    return names;
}

bool type_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("._+-").find(c) != std::string_view::npos;
}

// "Ng.Mgb": the compute slices and the memory in GiB, rounded half away from zero (Slurm's
// roundl of MiB / 1024).
std::string legacy_size(const mig::GpuModel& model, const mig::Profile& profile) {
    if (!profile.memory_gib)
        throw input_error(std::string(kOption) + ": the memory of " + model.key + "'s " +
                          profile.name +
                          " is not known here, so its legacy Slurm name is not either: give "
                          "the type as slurmd names it (a template without {size})");
    return std::to_string(profile.compute_slices) + "g." +
           std::to_string(std::llround(*profile.memory_gib)) + "gb";
}

std::string mig_parent_name(const mig::GpuModel& model) {
    const std::string board = nvml_board_name(model);
    if (board.empty())
        throw input_error(std::string(kOption) + ": no NVML name of a " + model.key +
                          " board is known here: give the types as slurmd names them (a "
                          "template without {gpu}, such as 'nvidia_NAME_{profile}')");
    return slurm_gpu_name(board, SlurmGpuName::kMigParent);
}

}  // namespace

std::string nvml_board_name(const mig::GpuModel& model) {
    for (const auto& [key, name] : board_names()) {
        if (model.key == key)
            return name;
    }
    return "";
}

std::string slurm_gpu_name(std::string_view nvml_name, SlurmGpuName kind) {
    std::string out;
    for (const char c : nvml_name) {
        if (kind == SlurmGpuName::kMigParent && c == '-')
            break;
        out += c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string slurm_gres_type(const mig::GpuModel& model, const mig::Profile& profile,
                            std::string_view naming) {
    std::string_view pattern = naming;
    if (naming == "nvml")
        pattern = "{gpu}_{profile}";
    else if (naming == "nvml-legacy")
        pattern = "{gpu}_{size}";
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '{') {
            out += pattern[i];
            continue;
        }
        const size_t end = pattern.find('}', i);
        const std::string_view name =
            end == std::string_view::npos ? pattern.substr(i) : pattern.substr(i, end - i + 1);
        if (name == "{gpu}")
            out += mig_parent_name(model);
        else if (name == "{profile}")
            out += profile.name;
        else if (name == "{size}")
            out += legacy_size(model, profile);
        else
            throw input_error(std::string(kOption) + ": unknown placeholder '" + std::string(name) +
                              "' (nvml, nvml-legacy, or a template of text and {gpu}, {profile}, "
                              "{size})");
        i += name.size() - 1;
    }
    if (out.empty() || !std::all_of(out.begin(), out.end(), type_char))
        throw input_error(std::string(kOption) + ": '" + out + "' (" + profile.name +
                          ") is not a GRES type: letters, digits and ._+- only");
    return out;
}

}  // namespace migscope::report
