// Builds a MIG catalog entry from NVML's profile data and reports where it disagrees with the
// built-in table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "nvml/session.h"

namespace migscope::nvml {

struct LiveModel {
    mig::GpuModel model;                     // NVML's data; names from NVML or the table
    std::vector<std::string> disagreements;  // one line each: table vs NVML
    std::vector<std::string> notes;          // e.g. profile names that had to be synthesised
};

// Pure: turns profile records into a model. `builtin` (may be null) supplies names the driver did
// not give and the whole-GPU SM count, and is what disagreements are measured against.
LiveModel model_from_profiles(const std::vector<NvmlProfile>& profiles, const std::string& key,
                              const std::string& device_name, const mig::GpuModel* builtin);

// Reads the device's profiles; nullopt when the GPU offers no MIG profiles.
std::optional<LiveModel> read_live_model(const Device& device);

// The local GPU's model for layout work: NVML's profiles, or the built-in table when NVML gives
// no placements (they need root) and the GPU is one the catalog knows. `notes` and
// `disagreements` say which and where NVML and the table differ. Throws an unavailable error
// without a driver, a GPU or MIG profiles (the message suggests a built-in model).
LiveModel local_model(unsigned index);

}  // namespace migscope::nvml
