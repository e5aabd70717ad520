// Strict mig-parted YAML reader and writer (yaml-cpp).
#include "mig/mig_parted.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"

namespace migscope::mig {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw input_error("mig-parted config: " + what + " at " + path);
}

void require_map(const YAML::Node& node, const std::string& path) {
    if (!node.IsMap())
        fail(path, "expected a mapping");
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

void reject_unknown_keys(const YAML::Node& node, const std::string& path,
                         std::initializer_list<const char*> allowed) {
    for (const auto& kv : node) {
        const std::string key = key_text(kv.first, path);
        bool ok = false;
        for (const char* a : allowed)
            ok = ok || key == a;
        if (!ok)
            fail(path.empty() ? key : path + "." + key, "unknown key '" + key + "'");
    }
}

template <typename T>
T scalar_as(const YAML::Node& node, const std::string& path, const char* type_name) {
    if (!node.IsScalar())
        fail(path, std::string("expected ") + type_name);
    try {
        return node.as<T>();
    } catch (const YAML::Exception&) {
        fail(path, std::string("expected ") + type_name + ", got '" + node.Scalar() + "'");
    }
}

MigPartedEntry parse_entry(const YAML::Node& node, const std::string& path) {
    require_map(node, path);
    reject_unknown_keys(node, path, {"devices", "device-filter", "mig-enabled", "mig-devices"});
    MigPartedEntry entry;
    if (!node["devices"])
        fail(path + ".devices", "missing key");
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
        fail(path + ".mig-enabled", "missing key");
    entry.mig_enabled =
        scalar_as<bool>(node["mig-enabled"], path + ".mig-enabled", "true or false");
    if (const YAML::Node migs = node["mig-devices"]) {
        if (migs.IsNull()) {
            // "mig-devices: {}" written as an empty value
        } else {
            require_map(migs, path + ".mig-devices");
            for (const auto& kv : migs) {
                const std::string profile = key_text(kv.first, path + ".mig-devices");
                entry.mig_devices[profile] =
                    scalar_as<unsigned>(kv.second, path + ".mig-devices." + profile, "a count");
            }
        }
    }
    if (!entry.mig_enabled && !entry.mig_devices.empty()) {
        fail(path + ".mig-devices", "profiles listed while mig-enabled is false");
    }
    return entry;
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
        fail("version", "missing key");
    const std::string version = scalar_as<std::string>(root["version"], "version", "a version");
    if (version != "v1")
        fail("version", "unsupported version '" + version + "' (expected v1)");
    if (!root["mig-configs"])
        fail("mig-configs", "missing key");
    const YAML::Node configs = root["mig-configs"];
    require_map(configs, "mig-configs");

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

std::string write_mig_parted(const std::vector<std::pair<std::string, Layout>>& layouts) {
    std::vector<MigPartedConfig> configs;
    for (const auto& [name, layout] : layouts) {
        MigPartedEntry entry;
        entry.mig_enabled = true;
        for (const Instance& i : layout.instances)
            ++entry.mig_devices[i.profile];
        configs.push_back({name, {entry}});
    }
    return write_mig_parted(configs);
}

std::string write_mig_parted(const std::vector<MigPartedConfig>& configs) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << "v1";
    out << YAML::Key << "mig-configs" << YAML::Value << YAML::BeginMap;
    for (const MigPartedConfig& config : configs) {
        out << YAML::Key << config.name << YAML::Value << YAML::BeginSeq;
        for (const MigPartedEntry& entry : config.entries) {
            out << YAML::BeginMap << YAML::Key << "devices" << YAML::Value;
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

std::vector<LayoutTerm> terms_of(const MigPartedEntry& entry, const GpuModel& model) {
    std::vector<LayoutTerm> terms;
    for (const auto& [name, count] : entry.mig_devices) {
        for (const LayoutTerm& t :
             repeated_terms(model.require(name), count, "mig-devices." + name))
            terms.push_back(t);
    }
    return terms;
}

}  // namespace migscope::mig
