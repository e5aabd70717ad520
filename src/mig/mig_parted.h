// mig-parted configs (`version: v1`, `mig-configs`): strict reading (as strict as mig-parted's
// own schema), a verdict for every entry against one GPU model, and writing.
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
    std::vector<std::string> device_filter;        // PCI device ids, as written ("0x233510DE")
    bool mig_enabled = false;
    // MIG device name -> count: a GPU instance profile ("1g.18gb") or a compute instance within
    // one ("1c.2g.35gb"), names as the driver writes them (case-sensitive).
    std::map<std::string, unsigned> mig_devices;
};

struct MigPartedConfig {
    std::string name;
    std::vector<MigPartedEntry> entries;
};

// Parses a mig-parted YAML document. Unknown or duplicate keys, a missing or unsupported version,
// values of the wrong type (a quoted "7" is a string, not a count), `mig-enabled: true` without
// `mig-devices`, and counts that are all zero are rejected with an input error that names the
// path ("mig-configs.a[0].devcies").
std::vector<MigPartedConfig> parse_mig_parted(std::string_view yaml_text);

// What one entry means for one GPU model.
struct EntryVerdict {
    enum class Kind {
        kValid,        // MIG enabled and the devices fit (layout set; empty for `mig-devices: {}`)
        kMigDisabled,  // nothing to place
        kOtherGpu,     // its device-filter names only other GPU models
        kInvalid,      // for this GPU, but its devices do not fit or name no profile of it
    };
    std::string config;
    size_t index = 0;  // in the config's entries
    Kind kind = Kind::kValid;
    std::optional<Layout> layout;
    std::string detail;  // why invalid, or which models the device-filter names
};

// A verdict for every entry of every config. An entry is for `model` when it has no
// device-filter or one of its PCI ids is the model's (compared without regard to case).
std::vector<EntryVerdict> check_mig_parted(const std::vector<MigPartedConfig>& configs,
                                           const GpuModel& model);

// A config name that a Kubernetes label value (nvidia.com/mig.config) can hold: '+' becomes '.'
// (NVIDIA writes "all-1g.18gb.me"), other characters outside [A-Za-z0-9._-] '-', at most 63
// characters, starting and ending with a letter or digit.
std::string label_safe_name(std::string_view name);

// Writes named layouts as one mig-parted document (`devices: all`, `mig-enabled: true`); names
// are made label-safe, and a name used twice gets "-2", "-3", ... (no duplicate keys).
std::string write_mig_parted(const std::vector<std::pair<std::string, Layout>>& layouts);
// Writes configs entry by entry (device filters, device lists, MIG disabled entries) under their
// own names; a name given twice is an input error (it would be a duplicate key).
std::string write_mig_parted(const std::vector<MigPartedConfig>& configs);

// The GPU Operator's default configs, as NVIDIA's mig-parted config-default.yaml names them,
// made from the built-in catalog: all-disabled, all-enabled (MIG on, no instances), one
// "all-PROFILE" per profile name ('+' written '.': all-1g.18gb.me) filling the GPU with it (a
// device-filter per count where models with that name hold different counts), and all-balanced
// (two of the smallest 1g, one 2g, one 3g where the GPU has 7 slices) per board, by PCI id.
std::vector<MigPartedConfig> default_mig_configs();

// The layout terms of one entry (GPU instances; placements are left to the checker). Names must
// be the model's exactly; compute-instance names "Nc.PROFILE" count as their GPU instance.
std::vector<LayoutTerm> terms_of(const MigPartedEntry& entry, const GpuModel& model);

}  // namespace migscope::mig
