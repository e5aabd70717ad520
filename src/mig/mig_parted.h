// mig-parted configs (`version: v1`, `mig-configs`): strict reading and writing of layouts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mig/layout.h"

namespace migscope::mig {

// One entry of a mig-parted config: which devices, whether MIG is on, and how many of each profile.
struct MigPartedEntry {
    std::optional<std::vector<unsigned>> devices;  // empty optional = "all"
    std::vector<std::string> device_filter;        // PCI device ids, as written
    bool mig_enabled = false;
    std::map<std::string, unsigned> mig_devices;  // profile name -> count
};

struct MigPartedConfig {
    std::string name;
    std::vector<MigPartedEntry> entries;
};

// Parses a mig-parted YAML document. Unknown keys, a missing or unsupported version, and values of
// the wrong type are rejected with an input error that names the path ("mig-configs.a[0].devcies").
std::vector<MigPartedConfig> parse_mig_parted(std::string_view yaml_text);

// Writes named layouts as one mig-parted document (`devices: all`, `mig-enabled: true`).
std::string write_mig_parted(const std::vector<std::pair<std::string, Layout>>& layouts);
// Writes configs entry by entry (device lists, MIG disabled entries); device filters are not
// written.
std::string write_mig_parted(const std::vector<MigPartedConfig>& configs);

// The layout terms of one entry (profile counts; placements are left to the checker).
std::vector<LayoutTerm> terms_of(const MigPartedEntry& entry, const GpuModel& model);

}  // namespace migscope::mig
