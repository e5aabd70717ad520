// MIG catalog: the GPU instance profiles of each GPU model (built-in tables; live NVML data lives
// in nvml/).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sm_granularity.h"

namespace migscope::mig {

// One GPU instance profile of one GPU model, as `nvidia-smi mig -lgip/-lgipp` describes it.
struct Profile {
    std::string name;             // "3g.71gb", "1g.18gb+me"
    std::optional<unsigned> id;   // profile id for `nvidia-smi mig -cgi`; differs between models
    unsigned compute_slices = 0;  // the "g" of the name
    unsigned memory_slices = 0;   // size of every placement, in memory slices
    std::optional<unsigned> sms;  // streaming multiprocessors; unknown stays empty
    std::optional<double> memory_gib;
    unsigned max_count = 0;            // instances of this profile that fit at once
    std::vector<unsigned> placements;  // allowed start memory slices
    bool media_extensions = false;     // "+me": the one profile that owns the media engines
};

// A GPU model and its profiles.
struct GpuModel {
    std::string key;          // "h200": what --gpu takes
    std::string description;  // "NVIDIA H200 141GB (SXM5 and NVL)"
    unsigned memory_slices = 8;
    unsigned compute_slices = 7;
    std::optional<unsigned> sm_count;  // whole GPU
    std::vector<Profile> profiles;
    std::string source;  // "built-in table" or "NVML"
    // How green contexts group its SMs (from the compute capability); empty when unknown.
    std::optional<SmGranularity> green_granularity;
    // PCI device ids as mig-parted's device-filter writes them ("0x233510DE": device 2335,
    // vendor 10DE), for the boards that have these profiles.
    std::vector<std::string> pci_device_ids;

    // Finds a profile by full name ("2g.35gb", case-insensitive) or by short form ("2g": the
    // profile with that many compute slices, the fewest memory slices and no media extensions).
    const Profile* find(std::string_view name) const;
    // Like find(), but throws an input error naming the token and the known profiles.
    const Profile& require(std::string_view name) const;
};

const std::vector<GpuModel>& builtin_catalog();

// The built-in model for a --gpu key or alias ("h200", "H200-141GB"); throws an input error
// that lists the known keys.
const GpuModel& builtin_model(std::string_view key);

// The built-in model whose product name matches an NVML device name ("NVIDIA H200"), or nullptr.
const GpuModel* match_builtin_by_device_name(std::string_view device_name);
// Whether an NVML device name is a built-in model other than `model` (an H100's runs are no H200
// profile); a name of no built-in model is not.
bool names_other_model(std::string_view device_name, const GpuModel& model);

// The built-in model with this PCI device id ("0x233510DE", any case), or nullptr.
const GpuModel* match_builtin_by_pci_id(std::string_view pci_device_id);
// Whether `model` lists this PCI device id (any case).
bool model_has_pci_id(const GpuModel& model, std::string_view pci_device_id);

std::string known_model_keys();

}  // namespace migscope::mig
