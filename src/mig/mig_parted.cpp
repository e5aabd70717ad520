// Strict mig-parted YAML reader and writer (yaml-cpp).
#include "mig/mig_parted.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <type_traits>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "core/yaml_fields.h"

namespace migscope::mig {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw input_error("mig-parted config: " + what + " at " + path);
}

// A field's path as the strict reader's errors (core/strict_fields.h) begin.
std::string at(const std::string& path) {
    return "mig-parted config: " + path;
}

void require_map(const YAML::Node& node, const std::string& path) {
    if (!node.IsMap())
        throw strict::wrong_type(at(path), "a mapping", yaml_type(node));
}

// A mapping's key as text: keys are names (config names, profiles), so a key that is itself a
// list or mapping is refused, and so is one with other than printable ASCII characters.
std::string key_text(const YAML::Node& key, const std::string& path) {
    const std::string where = path.empty() ? "(document)" : path;
    if (!key.IsScalar())
        fail(where, "a key is a list or mapping, not a name");
    for (const char c : key.Scalar()) {
        if (c < 0x20 || c > 0x7e)
            fail(where, "a key may hold printable ASCII characters only");
    }
    return key.Scalar();
}

// Keys must be unique: mig-parted's reader refuses a key given twice, and yaml-cpp keeps both.
void reject_duplicate_keys(const YAML::Node& node, const std::string& path) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
        const std::string key = key_text(kv.first, path);
        if (!seen.insert(key).second)
            fail(path.empty() ? key : path + "." + key,
                 "duplicate key '" + user_text::shown(key) + "'");
    }
}

void reject_unknown_keys(const YAML::Node& node, const std::string& path,
                         const strict::Expected& expected) {
    reject_duplicate_keys(node, path);
    for (const auto& kv : node) {
        const std::string key = key_text(kv.first, path);
        expected.check(key, at(strict::field_path(path, key)));
    }
}

// A typed scalar; a quoted one ("7", "true") is a string, as mig-parted's typed reader sees it.
template <typename T>
T scalar_as(const YAML::Node& node, const std::string& path, const char* type_name) {
    if (!node.IsScalar())
        fail(path, std::string("expected ") + type_name);
    if constexpr (!std::is_same_v<T, std::string>) {
        if (node.Tag() == "!")
            fail(path, std::string("expected ") + type_name + ", got the string \"" +
                           user_text::shown(node.Scalar()) + "\"");
        if (std::is_unsigned_v<T> && !node.Scalar().empty() && node.Scalar()[0] == '-')
            fail(path, std::string("expected ") + type_name + ", got '" +
                           user_text::shown(node.Scalar()) + "'");
    }
    try {
        return node.as<T>();
    } catch (const YAML::Exception&) {
        fail(path, std::string("expected ") + type_name + ", got '" +
                       user_text::shown(node.Scalar()) + "'");
    }
}

MigPartedEntry parse_entry(const YAML::Node& node, const std::string& path) {
    require_map(node, path);
    reject_unknown_keys(node, path, {"devices", "device-filter", "mig-enabled", "mig-devices"});
    MigPartedEntry entry;
    if (!node["devices"])
        throw strict::missing_field(at(path + ".devices"));
    const YAML::Node devices = node["devices"];
    if (devices.IsScalar() && devices.Scalar() == "all") {
        entry.devices = std::nullopt;
    } else if (devices.IsSequence()) {
        std::vector<unsigned> list;
        for (size_t i = 0; i < devices.size(); ++i) {
            list.push_back(scalar_as<unsigned>(
                devices[i], path + ".devices[" + std::to_string(i) + "]", "a device index"));
        }
        entry.devices = list;
    } else {
        fail(path + ".devices", "expected 'all' or a list of device indices");
    }
    if (const YAML::Node filter = node["device-filter"]) {
        if (filter.IsScalar()) {
            entry.device_filter.push_back(filter.Scalar());
        } else if (filter.IsSequence()) {
            for (size_t i = 0; i < filter.size(); ++i) {
                entry.device_filter.push_back(scalar_as<std::string>(
                    filter[i], path + ".device-filter[" + std::to_string(i) + "]", "a PCI id"));
            }
        } else {
            fail(path + ".device-filter", "expected a PCI id or a list of them");
        }
    }
    if (!node["mig-enabled"])
        throw strict::missing_field(at(path + ".mig-enabled"));
    entry.mig_enabled =
        scalar_as<bool>(node["mig-enabled"], path + ".mig-enabled", "true or false");
    if (const YAML::Node migs = node["mig-devices"]) {
        if (migs.IsNull()) {
            // "mig-devices:" with an empty value, as {}
        } else {
            require_map(migs, path + ".mig-devices");
            reject_duplicate_keys(migs, path + ".mig-devices");
            bool any = false;
            for (const auto& kv : migs) {
                const std::string profile = key_text(kv.first, path + ".mig-devices");
                const unsigned count =
                    scalar_as<unsigned>(kv.second, path + ".mig-devices." + profile, "a count");
                entry.mig_devices[profile] = count;
                any = any || count > 0;
            }
            if (!entry.mig_devices.empty() && !any)
                fail(path + ".mig-devices", "every count is 0 (write mig-devices: {} for none)");
        }
    } else if (entry.mig_enabled) {
        throw strict::missing_field(at(path + ".mig-devices"),
                                    "mig-enabled is true; {} for no devices");
    }
    if (!entry.mig_enabled && !entry.mig_devices.empty()) {
        fail(path + ".mig-devices", "profiles listed while mig-enabled is false");
    }
    return entry;
}

// A name written as a plain YAML scalar reads back as the same string: label-safe, not what
// could be read as a number ("123", "1e5", "0x1f") and not a word YAML 1.1 reads as a boolean
// or null.
bool plain_name(const std::string& name) {
    if (name.empty() || label_safe_name(name) != name)
        return false;
    if (std::isdigit(static_cast<unsigned char>(name[0])) &&
        name.find_first_not_of("0123456789._-+eExXoObBaAcCdDfF") == std::string::npos)
        return false;
    const std::string low = text::lower(name);
    for (const char* word : {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}) {
        if (low == word)
            return false;
    }
    return true;
}

}  // namespace

std::vector<MigPartedConfig> parse_mig_parted(std::string_view yaml_text) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::DeepRecursion& e) {
        throw input_error("mig-parted config: lists and mappings nested too deeply (a config needs " 
                          "5 levels) at line " + std::to_string(e.mark.line + 1));
    } catch (const YAML::Exception& e) {
        throw input_error("mig-parted config: malformed YAML at line " +
                          std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    require_map(root, "(document)");
    reject_unknown_keys(root, "", {"version", "mig-configs"});
    if (!root["version"])
        throw strict::missing_field(at("version"));
    const std::string version = scalar_as<std::string>(root["version"], "version", "a version");
    if (version != "v1")
        fail("version", "unsupported version '" + user_text::shown(version) + "' (expected v1)");
    if (!root["mig-configs"])
        throw strict::missing_field(at("mig-configs"));
    const YAML::Node configs = root["mig-configs"];
    require_map(configs, "mig-configs");
    reject_duplicate_keys(configs, "mig-configs");

    std::vector<MigPartedConfig> out;
    for (const auto& kv : configs) {
        MigPartedConfig config{key_text(kv.first, "mig-configs"), {}};
        const std::string path = "mig-configs." + config.name;
        if (!kv.second.IsSequence())
            fail(path, "expected a list of entries");
        for (size_t i = 0; i < kv.second.size(); ++i) {
            config.entries.push_back(
                parse_entry(kv.second[i], path + "[" + std::to_string(i) + "]"));
        }
        out.push_back(std::move(config));
    }
    return out;
}

std::vector<MigPartedConfig> default_mig_configs() {
    std::vector<MigPartedConfig> out;
    MigPartedEntry off;
    out.push_back({"all-disabled", {off}});
    MigPartedEntry on;
    on.mig_enabled = true;
    out.push_back({"all-enabled", {on}});

    // Profile name -> (count -> PCI ids of the models that hold that many), in catalog order.
    std::vector<std::string> names;
    std::map<std::string, std::map<unsigned, std::vector<std::string>>> counts;
    const auto add_ids = [](std::vector<std::string>& to, const std::vector<std::string>& ids) {
        for (const std::string& id : ids) {
            if (std::find(to.begin(), to.end(), id) == to.end())
                to.push_back(id);
        }
    };
    // A model without PCI ids (GB200's early names) cannot be told apart by a device-filter: it
    // adds only the names no board with ids has, as an entry for all devices.
    for (const bool with_ids : {true, false}) {
        for (const GpuModel& m : builtin_catalog()) {
            if (m.pci_device_ids.empty() == with_ids)
                continue;
            for (const Profile& p : m.profiles) {
                const bool known = counts.find(p.name) != counts.end();
                if (!with_ids && known)
                    continue;
                if (!known)
                    names.push_back(p.name);
                add_ids(counts[p.name][p.max_count], m.pci_device_ids);
            }
        }
    }
    for (const std::string& name : names) {
        const auto& by_count = counts[name];
        MigPartedConfig config{label_safe_name("all-" + name), {}};
        for (const auto& [count, ids] : by_count) {
            MigPartedEntry e;
            e.mig_enabled = true;
            e.mig_devices[name] = count;
            if (by_count.size() > 1)
                e.device_filter = ids;
            config.entries.push_back(std::move(e));
        }
        out.push_back(std::move(config));
    }

    // all-balanced: boards with the same mix share one entry.
    MigPartedConfig balanced{"all-balanced", {}};
    for (const GpuModel& m : builtin_catalog()) {
        if (m.pci_device_ids.empty())
            continue;
        MigPartedEntry e;
        e.mig_enabled = true;
        for (const auto& [shape, count] :
             std::vector<std::pair<const char*, unsigned>>{{"1g", 2}, {"2g", 1}, {"3g", 1}}) {
            if (const Profile* p = m.find(shape); p && (shape[0] != '3' || m.compute_slices == 7))
                e.mig_devices[p->name] = count;
        }
        auto same = std::find_if(balanced.entries.begin(), balanced.entries.end(),
                                 [&](const MigPartedEntry& b) { return b.mig_devices == e.mig_devices; });
        if (same != balanced.entries.end()) {
            add_ids(same->device_filter, m.pci_device_ids);
        } else {
            e.device_filter = m.pci_device_ids;
            balanced.entries.push_back(std::move(e));
        }
    }
    out.push_back(std::move(balanced));
    return out;
}

std::string write_mig_parted(const std::vector<std::pair<std::string, Layout>>& layouts) {
    std::vector<MigPartedConfig> configs;
    std::map<std::string, int> uses;
    for (const auto& [name, layout] : layouts) {
        MigPartedEntry entry;
        entry.mig_enabled = true;
        for (const Instance& i : layout.instances)
            ++entry.mig_devices[i.profile];
        std::string safe = label_safe_name(name);
        if (const int n = ++uses[safe]; n > 1)
            safe = label_safe_name(safe.substr(0, 60) + "-" + std::to_string(n));
        configs.push_back({safe, {entry}});
    }
    return write_mig_parted(configs);
}

std::string write_mig_parted(const std::vector<MigPartedConfig>& configs) {
    std::set<std::string> names;
    for (const MigPartedConfig& config : configs) {
        if (!names.insert(config.name).second)
            throw input_error("mig-parted config: the name '" + config.name + "' is given twice");
    }
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
    out << YAML::Key << "mig-configs" << YAML::Value << YAML::BeginMap;
    for (const MigPartedConfig& config : configs) {
        // A name from a user's file is data: quoted unless it is a plain label-safe name that
        // YAML reads back as the same string.
        if (plain_name(config.name))
            out << YAML::Key << config.name;
        else
            out << YAML::Key << YAML::DoubleQuoted << config.name;
        out << YAML::Value << YAML::BeginSeq;
        for (const MigPartedEntry& entry : config.entries) {
            out << YAML::BeginMap;
            if (!entry.device_filter.empty()) {
                out << YAML::Key << "device-filter" << YAML::Value << YAML::Flow << YAML::BeginSeq;
                for (const std::string& id : entry.device_filter)
                    out << YAML::DoubleQuoted << id;
                out << YAML::EndSeq;
            }
            out << YAML::Key << "devices" << YAML::Value;
            if (entry.devices)
                out << YAML::Flow << *entry.devices;
            else
                out << "all";
            out << YAML::Key << "mig-enabled" << YAML::Value << entry.mig_enabled;
            if (entry.mig_enabled) {
                out << YAML::Key << "mig-devices" << YAML::Value << YAML::BeginMap;
                for (const auto& [profile, count] : entry.mig_devices)
                    out << YAML::Key << YAML::DoubleQuoted << profile << YAML::Value << count;
                out << YAML::EndMap;
            }
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::EndMap << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string label_safe_name(std::string_view name) {
    std::string out;
    for (const char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')
            out += c;
        else
            out += c == '+' ? '.' : '-';
    }
    if (out.size() > 63)
        out.resize(63);
    const auto edge = [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); };
    while (!out.empty() && edge(out.back()))
        out.pop_back();
    while (!out.empty() && edge(out.front()))
        out.erase(out.begin());
    return out.empty() ? "migscope" : out;
}

namespace {

// "1c.2g.35gb": a compute instance of 1 slice in a 2g.35gb GPU instance; "2g.35gb" itself.
struct MigDeviceName {
    std::string gpu_instance;
    std::optional<unsigned> compute_slices;
};
MigDeviceName split_mig_device(const std::string& name) {
    if (const size_t dot = name.find('.');
        dot != std::string::npos && dot > 1 && name[dot - 1] == 'c') {
        unsigned c = 0;
        if (text::parse_uint(std::string_view(name).substr(0, dot - 1), c) && c > 0)
            return {name.substr(dot + 1), c};
    }
    return {name, std::nullopt};
}

const Profile* exact_profile(const GpuModel& model, const std::string& name) {
    for (const Profile& p : model.profiles) {
        if (p.name == name)
            return &p;
    }
    return nullptr;
}

bool exact_profile_all(const MigPartedEntry& entry, const GpuModel& model) {
    return std::all_of(entry.mig_devices.begin(), entry.mig_devices.end(), [&](const auto& kv) {
        return exact_profile(model, split_mig_device(kv.first).gpu_instance) != nullptr;
    });
}

// The built-in models that have every GPU instance the entry names ("a100-80gb, h100-80gb");
// empty when none has them all.
std::string models_with_all(const MigPartedEntry& entry) {
    std::string keys;
    for (const GpuModel& m : builtin_catalog()) {
        if (exact_profile_all(entry, m))
            keys += (keys.empty() ? "" : ", ") + m.key;
    }
    return keys;
}

}  // namespace

std::vector<LayoutTerm> terms_of(const MigPartedEntry& entry, const GpuModel& model) {
    std::vector<LayoutTerm> terms;
    for (const auto& [name, count] : entry.mig_devices) {
        const auto [gpu_instance, compute] = split_mig_device(name);
        const Profile* profile = exact_profile(model, gpu_instance);
        if (!profile) {
            const Profile* near = model.find(gpu_instance);  // the same name in another case
            throw input_error("mig-devices." + name + ": no such MIG profile on " + model.key +
                              (near && near->name != gpu_instance
                                   ? " (names are case-sensitive: " + near->name + ")"
                                   : ""));
        }
        if (compute && *compute > profile->compute_slices) {
            throw input_error("mig-devices." + name + ": a compute instance of " +
                              std::to_string(*compute) + " slices does not fit in " +
                              profile->name + " (" + std::to_string(profile->compute_slices) +
                              " slices)");
        }
        for (const LayoutTerm& t : repeated_terms(*profile, count, "mig-devices." + name))
            terms.push_back(t);
    }
    return terms;
}

std::vector<EntryVerdict> check_mig_parted(const std::vector<MigPartedConfig>& configs,
                                           const GpuModel& model) {
    std::vector<EntryVerdict> out;
    for (const MigPartedConfig& config : configs) {
        for (size_t i = 0; i < config.entries.size(); ++i) {
            const MigPartedEntry& e = config.entries[i];
            EntryVerdict v{config.name, i, EntryVerdict::Kind::kValid, std::nullopt, ""};
            bool ours = e.device_filter.empty();
            std::string others;
            for (const std::string& id : e.device_filter) {
                const GpuModel* m = match_builtin_by_pci_id(id);
                ours = ours || model_has_pci_id(model, id);
                others += (others.empty() ? "" : ", ") + id + " " +
                          (m ? m->key : std::string("(not in migscope's catalog)"));
            }
            // Without a device filter, an entry whose profiles are all another model's (NVIDIA's
            // "all-1g.23gb" on an H200) is that model's, not a mistake.
            const std::string profile_models =
                e.device_filter.empty() && e.mig_enabled && !e.mig_devices.empty()
                    ? models_with_all(e)
                    : "";
            // Without a device filter, an entry that names none of this model's profiles (not
            // even in another case) is another GPU's, one that migscope has no table for
            // (NVIDIA's file names a few of those); a typo beside this model's names stays invalid.
            const bool none_of_ours =
                e.device_filter.empty() && e.mig_enabled && !e.mig_devices.empty() &&
                std::none_of(e.mig_devices.begin(), e.mig_devices.end(), [&](const auto& kv) {
                    return model.find(split_mig_device(kv.first).gpu_instance) != nullptr;
                });
            if (!ours) {
                v.kind = EntryVerdict::Kind::kOtherGpu;
                v.detail = "device-filter " + others;
            } else if (!profile_models.empty() && !exact_profile_all(e, model)) {
                v.kind = EntryVerdict::Kind::kOtherGpu;
                v.detail = "profiles of " + profile_models;
            } else if (none_of_ours) {
                std::string names;
                for (const auto& kv : e.mig_devices)
                    names += (names.empty() ? "" : ", ") + kv.first;
                v.kind = EntryVerdict::Kind::kOtherGpu;
                v.detail = "profiles of a GPU not in migscope's catalog (" + names + ")";
            } else if (!e.mig_enabled) {
                v.kind = EntryVerdict::Kind::kMigDisabled;
            } else {
                try {
                    LayoutCheck check = check_layout(terms_of(e, model), model);
                    v.layout = check.layout;
                    if (!check.layout) {
                        v.kind = EntryVerdict::Kind::kInvalid;
                        v.detail = check.reason;
                    }
                } catch (const Error& err) {
                    if (err.kind() != ErrorKind::kInput)
                        throw;
                    v.kind = EntryVerdict::Kind::kInvalid;
                    v.detail = err.what();
                }
            }
            out.push_back(std::move(v));
        }
    }
    return out;
}

}  // namespace migscope::mig
