// NVML profile records -> mig::GpuModel, with a line for every disagreement with the built-in
// table.
#include "nvml/live_catalog.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/text.h"

namespace migscope::nvml {
namespace {

// Suffix of the profile variants that are not the plain profile, by NVML profile enum.
const char* variant_suffix(unsigned profile_enum) {
    switch (profile_enum) {
        case 0x7:
        case 0x8:
            return "+me";
        case 0xA:
        case 0xB:
        case 0xC:
        case 0x11:
            return "+gfx";
        case 0xD:
        case 0xE:
            return "-me";
        case 0xF:
        case 0x10:
            return "+me.all";
        default:
            return "";
    }
}

std::string fmt_gib(double gib) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f", gib);
    return buf;
}

std::string join(const std::vector<unsigned>& v) {
    std::string out;
    for (unsigned x : v)
        out += (out.empty() ? "" : ",") + std::to_string(x);
    return "{" + out + "}";
}

}  // namespace

namespace {

// An NVML profile record as a catalog profile, without its name: slices, count, SMs, memory
// and placements.
mig::Profile profile_of(const NvmlProfile& n) {
    mig::Profile p;
    p.id = n.id;
    p.compute_slices = n.slice_count;
    p.max_count = n.instance_count;
    p.sms = n.multiprocessor_count;
    p.memory_gib = static_cast<double>(n.memory_mib) / 1024.0;
    p.media_extensions = *variant_suffix(n.profile_enum) != '\0';
    for (const api::GpuInstancePlacement& pl : n.placements) {
        p.placements.push_back(pl.start);
        p.memory_slices = pl.size;
    }
    return p;
}

// The built-in table's profile of NVML profile id `id` (the last with it); none without a table.
const mig::Profile* table_profile(const mig::GpuModel* builtin, unsigned id) {
    const mig::Profile* table = nullptr;
    if (builtin) {
        for (const mig::Profile& b : builtin->profiles) {
            if (b.id && *b.id == id)
                table = &b;
        }
    }
    return table;
}

// A line for every figure in which NVML's profile `p` (named `nvml_name` by the driver, empty
// where it gave none) differs from the built-in table's.
void compare_with_table(const mig::Profile& p, const std::string& nvml_name,
                        const mig::Profile& table, std::vector<std::string>& disagreements) {
    auto differ = [&](const std::string& what, const std::string& ours, const std::string& theirs) {
        disagreements.push_back(p.name + ": " + what + " table " + ours + ", NVML " + theirs);
    };
    if (!nvml_name.empty() && text::lower(nvml_name) != text::lower(table.name)) {
        differ("name", table.name, nvml_name);
    }
    if (table.compute_slices != p.compute_slices) {
        differ("compute slices", std::to_string(table.compute_slices),
               std::to_string(p.compute_slices));
    }
    if (!p.placements.empty() && table.memory_slices != p.memory_slices) {
        differ("memory slices", std::to_string(table.memory_slices),
               std::to_string(p.memory_slices));
    }
    if (table.max_count != p.max_count) {
        differ("max count", std::to_string(table.max_count), std::to_string(p.max_count));
    }
    if (table.sms && *table.sms != *p.sms) {
        differ("SMs", std::to_string(*table.sms), std::to_string(*p.sms));
    }
    if (table.memory_gib && std::fabs(*table.memory_gib - *p.memory_gib) > 0.005) {
        differ("memory GiB", fmt_gib(*table.memory_gib), fmt_gib(*p.memory_gib));
    }
    if (!p.placements.empty() && table.placements != p.placements) {
        differ("placements", join(table.placements), join(p.placements));
    }
}

}  // namespace

LiveModel model_from_profiles(const std::vector<NvmlProfile>& profiles, const std::string& key,
                              const std::string& device_name, const mig::GpuModel* builtin) {
    LiveModel live;
    mig::GpuModel& model = live.model;
    model.key = key;
    model.description = device_name + " (MIG profiles from NVML)";
    model.source = "NVML";
    model.sm_count = builtin ? builtin->sm_count : std::nullopt;
    if (builtin)  // the board's PCI ids, for mig-parted device filters
        model.pci_device_ids = builtin->pci_device_ids;
    model.memory_slices = 0;
    model.compute_slices = 0;

    for (const NvmlProfile& n : profiles) {
        mig::Profile p = profile_of(n);
        for (const api::GpuInstancePlacement& pl : n.placements)
            model.memory_slices = std::max(model.memory_slices, pl.start + pl.size);
        model.compute_slices = std::max(model.compute_slices, n.slice_count);

        const mig::Profile* table = table_profile(builtin, n.id);
        // Drivers name profiles "MIG 1g.18gb"; nvidia-smi and mig-parted drop the prefix.
        std::string nvml_name = n.name;
        if (text::starts_with(nvml_name, "MIG "))
            nvml_name = nvml_name.substr(4);
        if (!nvml_name.empty()) {
            p.name = nvml_name;
        } else if (table) {
            p.name = table->name;
        } else {
            p.name = std::to_string(n.slice_count) + "g." +
                     std::to_string(static_cast<unsigned>(std::lround(*p.memory_gib))) + "gb" +
                     variant_suffix(n.profile_enum);
            live.notes.push_back("profile id " + std::to_string(n.id) +
                                 ": the driver gave no name; called it " + p.name);
        }
        if (p.placements.empty()) {
            live.notes.push_back(p.name + ": NVML listed no placements (needs root?)");
        }

        if (builtin && !table) {
            live.disagreements.push_back("NVML offers " + p.name + " (id " + std::to_string(n.id) +
                                         "), which the " + builtin->key + " table lacks");
        } else if (table) {
            compare_with_table(p, nvml_name, *table, live.disagreements);
        }
        model.profiles.push_back(std::move(p));
    }
    if (builtin) {
        for (const mig::Profile& b : builtin->profiles) {
            bool seen = std::any_of(profiles.begin(), profiles.end(),
                                    [&](const NvmlProfile& n) { return b.id && *b.id == n.id; });
            if (!seen) {
                live.disagreements.push_back("the " + builtin->key + " table lists " + b.name +
                                             ", which NVML does not offer");
            }
        }
    }
    if (model.memory_slices == 0 && builtin)
        model.memory_slices = builtin->memory_slices;
    return live;
}

std::optional<LiveModel> read_live_model(const Device& device) {
    std::vector<NvmlProfile> profiles = device.gpu_instance_profiles();
    if (profiles.empty())
        return std::nullopt;
    const std::string name = device.name().value.value_or("GPU " + std::to_string(device.index()));
    const mig::GpuModel* builtin = mig::match_builtin_by_device_name(name);
    const std::string key = builtin ? builtin->key : text::lower(name);
    return model_from_profiles(profiles, key, name, builtin);
}

LiveModel local_model(unsigned index) {
    const std::string use_builtin =
        "; pass --gpu MODEL (one of " + mig::known_model_keys() + ") to use a built-in table";
    std::optional<Session> session;
    try {
        session.emplace(Session::open());
    } catch (const Error& e) {
        throw Error(e.kind(), std::string(e.what()) + use_builtin);
    }
    const Device device = session->device(index);
    const std::string device_name = device.name().value.value_or("?");
    std::optional<LiveModel> live = read_live_model(device);
    if (!live) {
        throw unavailable_error("GPU " + std::to_string(index) + " (" + device_name +
                                ") offers no MIG profiles" + use_builtin);
    }
    const bool placements_known =
        std::all_of(live->model.profiles.begin(), live->model.profiles.end(),
                    [](const mig::Profile& p) { return !p.placements.empty(); });
    if (placements_known)
        return *live;
    const mig::GpuModel* builtin = mig::match_builtin_by_device_name(device_name);
    if (!builtin) {
        throw unavailable_error(
            "NVML gave no MIG placements (run as root?) and the GPU is not in the built-in "
            "catalog");
    }
    live->notes.push_back("NVML gave no placements (needs root); using the built-in " +
                          builtin->key + " table");
    live->model = *builtin;
    return *live;
}

}  // namespace migscope::nvml
