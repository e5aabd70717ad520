// Tests of the strict mig-parted reader, the verdict per entry (an NVIDIA-style fixture), the
// writer (round trip, label-safe names) and the catalog's PCI ids.
#include "mig/mig_parted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/error.h"

using namespace migscope;
using namespace migscope::mig;

namespace {
std::string error_of(const std::string& yaml) {
    try {
        parse_mig_parted(yaml);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST(MigParted, RoundTripKeepsLayouts) {
    const GpuModel& h200 = builtin_model("h200");
    std::vector<std::pair<std::string, Layout>> named;
    for (const char* text : {"4g+2g+1g", "7x1g", "3g+3g"}) {
        named.emplace_back(text, *check_layout(parse_layout(text, h200), h200).layout);
    }
    const std::string yaml = write_mig_parted(named);
    const std::vector<MigPartedConfig> configs = parse_mig_parted(yaml);
    ASSERT_EQ(configs.size(), named.size());
    for (size_t i = 0; i < configs.size(); ++i) {
        EXPECT_EQ(configs[i].name, label_safe_name(named[i].first));  // "4g.2g.1g"
        ASSERT_EQ(configs[i].entries.size(), 1u);
        EXPECT_TRUE(configs[i].entries[0].mig_enabled);
        EXPECT_FALSE(configs[i].entries[0].devices.has_value());  // "all"
        LayoutCheck back = check_layout(terms_of(configs[i].entries[0], h200), h200);
        ASSERT_TRUE(back.layout) << back.reason;
        EXPECT_EQ(*back.layout, named[i].second);
    }
}

TEST(MigParted, WritesDeviceListsAndDisabledEntries) {
    MigPartedEntry partitioned;
    partitioned.devices = std::vector<unsigned>{0, 2};
    partitioned.mig_enabled = true;
    partitioned.mig_devices = {{"1g.18gb", 2}, {"3g.71gb", 1}};
    MigPartedEntry whole;
    whole.devices = std::vector<unsigned>{1};
    const std::string yaml =
        write_mig_parted(std::vector<MigPartedConfig>{{"plan", {partitioned, whole}}});
    const std::vector<MigPartedConfig> back = parse_mig_parted(yaml);
    ASSERT_EQ(back.size(), 1u);
    ASSERT_EQ(back[0].entries.size(), 2u);
    EXPECT_EQ(*back[0].entries[0].devices, (std::vector<unsigned>{0, 2}));
    EXPECT_EQ(back[0].entries[0].mig_devices, partitioned.mig_devices);
    EXPECT_FALSE(back[0].entries[1].mig_enabled);
    EXPECT_EQ(*back[0].entries[1].devices, (std::vector<unsigned>{1})) << yaml;
}

TEST(MigParted, ReadsNvidiaStyleConfig) {
    const auto configs = parse_mig_parted(R"(
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  custom:
    - devices: [0, 1]
      device-filter: ["0x233510DE"]
      mig-enabled: true
      mig-devices:
        "1g.18gb": 2
        "2g.35gb": 1
        "3g.71gb": 1
)");
    ASSERT_EQ(configs.size(), 2u);
    EXPECT_FALSE(configs[0].entries[0].mig_enabled);
    const MigPartedEntry& e = configs[1].entries[0];
    EXPECT_EQ(*e.devices, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(e.device_filter, (std::vector<std::string>{"0x233510DE"}));
    EXPECT_EQ(e.mig_devices.at("1g.18gb"), 2u);
}

TEST(MigParted, RejectsUnknownKeysWithTheirPath) {
    EXPECT_NE(
        error_of("version: v1\nmig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n"
                 "      mig-devcies: {}\n")
            .find("mig-parted config: mig-configs.a[0].mig-devcies: unexpected field (did you "
                  "mean 'mig-devices'?; expected one of: devices, device-filter, mig-enabled, "
                  "mig-devices)"),
        std::string::npos);
    EXPECT_NE(error_of("version: v1\nextra: 1\nmig-configs: {}\n")
                  .find("mig-parted config: extra: unexpected field (expected one of: version, "
                        "mig-configs)"),
              std::string::npos);
}

TEST(MigParted, RejectsBadValues) {
    EXPECT_NE(error_of("version: v2\nmig-configs: {}\n").find("unsupported version 'v2'"),
              std::string::npos);
    EXPECT_NE(error_of("mig-configs: {}\n").find("mig-parted config: version: missing field"),
              std::string::npos);
    EXPECT_NE(
        error_of("version: v1\nmig-configs: [1]\n")
            .find("mig-parted config: mig-configs: wrong type: expected a mapping, got a list"),
        std::string::npos);
    EXPECT_NE(
        error_of(
            "version: v1\nmig-configs:\n  a:\n    - devices: all\n      mig-enabled: yes-ish\n")
            .find("mig-configs.a[0].mig-enabled"),
        std::string::npos);
    EXPECT_NE(
        error_of("version: v1\nmig-configs:\n  a:\n    - devices: all\n      mig-enabled: true\n"
                 "      mig-devices:\n        \"1g.18gb\": many\n")
            .find("mig-configs.a[0].mig-devices.1g.18gb"),
        std::string::npos);
    EXPECT_NE(error_of("version: v1\nmig-configs: [\n").find("malformed YAML"), std::string::npos);
}

// Hostile shapes are input errors that say what and where: a key that is a list (once an
// internal error from yaml-cpp's conversion) and nesting deeper than yaml-cpp's guard (once only
// "bad file").
TEST(MigParted, RejectsKeysThatAreNotNamesAndDeepNesting) {
    EXPECT_NE(error_of("version: v1\nmig-configs:\n  ? [a, b]\n  : - devices: all\n"
                       "      mig-enabled: false\n")
                  .find("a key is a list or mapping, not a name at mig-configs"),
              std::string::npos);
    EXPECT_NE(error_of("? {x: 1}\n: v1\n").find("a key is a list or mapping"), std::string::npos);
    // Found by fuzzing: a profile name with NUL bytes was read, but its written form was not.
    EXPECT_NE(error_of("version: v1\nmig-configs:\n  a:\n    - devices: all\n      mig-enabled: "
                       "true\n      mig-devices:\n        \"1g\\0\": 1\n")
                  .find("a key may hold printable ASCII characters only at mig-configs.a[0]"),
              std::string::npos);
    const std::string deep =
        "version: v1\nmig-configs: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
    EXPECT_NE(error_of(deep).find("nested too deeply (a config needs 5 levels) at line 2"),
              std::string::npos)
        << error_of(deep);
}

namespace {
std::string read_fixture(const std::string& name) {
    std::ifstream in(std::string(MIG_TEST_DIR) + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

const EntryVerdict& verdict_of(const std::vector<EntryVerdict>& verdicts, const std::string& config,
                               size_t index) {
    for (const EntryVerdict& v : verdicts) {
        if (v.config == config && v.index == index)
            return v;
    }
    throw std::runtime_error("no verdict for " + config);
}
}  // namespace

TEST(MigParted, EveryEntryOfAnNvidiaStyleFileGetsAVerdict) {
    const std::vector<MigPartedConfig> configs =
        parse_mig_parted(read_fixture("mig-parted-nvidia-style.yaml"));
    const std::vector<EntryVerdict> v = check_mig_parted(configs, builtin_model("h200"));
    ASSERT_EQ(v.size(), 11u);
    using K = EntryVerdict::Kind;
    EXPECT_EQ(verdict_of(v, "all-disabled", 0).kind, K::kMigDisabled);
    EXPECT_EQ(verdict_of(v, "all-enabled", 0).kind, K::kValid);
    EXPECT_TRUE(verdict_of(v, "all-enabled", 0).layout->instances.empty());
    // A B200 config without a device filter: its profiles say whose it is.
    EXPECT_EQ(verdict_of(v, "all-1g.23gb", 0).kind, K::kOtherGpu);
    EXPECT_NE(verdict_of(v, "all-1g.23gb", 0).detail.find("b200"), std::string::npos);
    EXPECT_EQ(verdict_of(v, "all-1g.18gb.me", 0).kind, K::kValid);
    // all-balanced: B200, H200 (ours), H100/A100 80GB, A30 (a scalar filter).
    EXPECT_EQ(verdict_of(v, "all-balanced", 0).kind, K::kOtherGpu);
    EXPECT_NE(verdict_of(v, "all-balanced", 0).detail.find("0x290110DE b200"), std::string::npos);
    EXPECT_EQ(verdict_of(v, "all-balanced", 1).kind, K::kValid);
    EXPECT_EQ(verdict_of(v, "all-balanced", 2).kind, K::kOtherGpu);
    EXPECT_EQ(verdict_of(v, "all-balanced", 3).kind, K::kOtherGpu);
    // Compute instances occupy their GPU instance: 2 x 2g.35gb + 3g.71gb.
    const EntryVerdict& shared = verdict_of(v, "shared-compute", 0);
    EXPECT_EQ(shared.kind, K::kValid) << shared.detail;
    EXPECT_EQ(shared.layout->instances.size(), 3u);
    EXPECT_EQ(verdict_of(v, "shared-compute", 1).kind, K::kMigDisabled);
    // The filter's id in lower case is still the H200's; three 3g.71gb do not fit.
    EXPECT_EQ(verdict_of(v, "too-many", 0).kind, K::kInvalid);

    // On an A30 the A30 entry is the one checked.
    const std::vector<EntryVerdict> a30 = check_mig_parted(configs, builtin_model("a30"));
    EXPECT_EQ(verdict_of(a30, "all-balanced", 3).kind, K::kValid);
    EXPECT_EQ(verdict_of(a30, "all-balanced", 1).kind, K::kOtherGpu);
}

TEST(MigParted, ProfileNamesAreCaseSensitiveAndComputeInstancesMustFit) {
    const GpuModel& h200 = builtin_model("h200");
    const auto verdict = [&](const std::string& devices) {
        return check_mig_parted(parse_mig_parted("version: v1\nmig-configs:\n  c:\n"
                                                 "    - devices: all\n      mig-enabled: true\n"
                                                 "      mig-devices: " +
                                                 devices + "\n"),
                                h200)
            .at(0);
    };
    const EntryVerdict upper = verdict(R"({"1G.18GB": 7})");
    EXPECT_EQ(upper.kind, EntryVerdict::Kind::kInvalid);
    EXPECT_NE(upper.detail.find("case-sensitive: 1g.18gb"), std::string::npos) << upper.detail;
    EXPECT_EQ(verdict(R"({"1g": 7})").kind, EntryVerdict::Kind::kInvalid);  // no short forms
    const EntryVerdict big = verdict(R"({"3c.2g.35gb": 1})");
    EXPECT_EQ(big.kind, EntryVerdict::Kind::kInvalid);
    EXPECT_NE(big.detail.find("does not fit in 2g.35gb"), std::string::npos) << big.detail;
    EXPECT_EQ(verdict(R"({"1c.7g.141gb": 1})").kind, EntryVerdict::Kind::kValid);
}

TEST(MigParted, StrictLikeMigPartedsSchema) {
    const std::string head = "version: v1\nmig-configs:\n  a:\n    - devices: all\n";
    // A quoted count is a string.
    EXPECT_NE(error_of(head + "      mig-enabled: true\n      mig-devices: {\"1g.18gb\": \"7\"}\n")
                  .find("got the string \"7\""),
              std::string::npos);
    EXPECT_NE(error_of(head + "      mig-enabled: \"true\"\n").find("mig-enabled"),
              std::string::npos);
    EXPECT_NE(error_of(head + "      mig-enabled: true\n      mig-devices: {\"1g.18gb\": -1}\n")
                  .find("mig-devices.1g.18gb"),
              std::string::npos);
    // All-zero counts, and MIG enabled without mig-devices.
    EXPECT_NE(error_of(head + "      mig-enabled: true\n      mig-devices: {\"1g.18gb\": 0}\n")
                  .find("every count is 0"),
              std::string::npos);
    EXPECT_NE(error_of(head + "      mig-enabled: true\n").find("a[0].mig-devices"),
              std::string::npos);
    // Duplicate keys: a config name, a profile.
    EXPECT_NE(error_of("version: v1\nmig-configs:\n  a:\n    - {devices: all, mig-enabled: false}\n"
                       "  a:\n    - {devices: all, mig-enabled: false}\n")
                  .find("duplicate key 'a'"),
              std::string::npos);
    EXPECT_NE(error_of(head + "      mig-enabled: true\n"
                              "      mig-devices: {\"1g.18gb\": 1, \"1g.18gb\": 2}\n")
                  .find("duplicate key"),
              std::string::npos);
}

TEST(MigParted, RoundTripKeepsNamesDeviceFiltersAndDeviceLists) {
    const std::vector<MigPartedConfig> configs =
        parse_mig_parted(read_fixture("mig-parted-nvidia-style.yaml"));
    const std::string yaml = write_mig_parted(configs);
    const std::vector<MigPartedConfig> back = parse_mig_parted(yaml);
    ASSERT_EQ(back.size(), configs.size());
    for (size_t i = 0; i < back.size(); ++i) {
        EXPECT_EQ(back[i].name, configs[i].name);
        ASSERT_EQ(back[i].entries.size(), configs[i].entries.size());
        for (size_t j = 0; j < back[i].entries.size(); ++j) {
            EXPECT_EQ(back[i].entries[j].devices, configs[i].entries[j].devices);
            EXPECT_EQ(back[i].entries[j].device_filter, configs[i].entries[j].device_filter);
            EXPECT_EQ(back[i].entries[j].mig_devices, configs[i].entries[j].mig_devices);
        }
    }
    EXPECT_EQ(*back[5].entries[0].devices, (std::vector<unsigned>{4})) << yaml;
}

TEST(MigParted, GeneratedNamesAreLabelSafeAndUnique) {
    EXPECT_EQ(label_safe_name("1g.18gb+me"), "1g.18gb.me");
    EXPECT_EQ(label_safe_name("+a b/c+"), "a-b-c");
    EXPECT_EQ(label_safe_name(std::string(80, 'x')).size(), 63u);
    const GpuModel& h200 = builtin_model("h200");
    const Layout layout = *check_layout(parse_layout("1g.18gb+me", h200), h200).layout;
    const std::string yaml = write_mig_parted({{"1g.18gb+me", layout}, {"1g.18gb+me", layout}});
    const std::vector<MigPartedConfig> back = parse_mig_parted(yaml);  // no duplicate keys
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].name, "1g.18gb.me");
    EXPECT_EQ(back[1].name, "1g.18gb.me-2");
}

// NVIDIA's own default config (the GPU Operator's, tests/mig/nvidia-config-default.yaml): no
// entry is invalid for any model of the catalog, every entry is valid for some model, and each
// board's all-balanced entry is valid on that board.
TEST(MigParted, NvidiasDefaultConfigIsClassifiedOnEveryModel) {
    const std::vector<MigPartedConfig> configs =
        parse_mig_parted(read_fixture("nvidia-config-default.yaml"));
    size_t entries = 0;
    for (const MigPartedConfig& c : configs)
        entries += c.entries.size();
    ASSERT_EQ(entries, 94u);
    using K = EntryVerdict::Kind;
    std::set<std::string> valid_somewhere;
    for (const GpuModel& m : builtin_catalog()) {
        for (const EntryVerdict& v : check_mig_parted(configs, m)) {
            const std::string at = v.config + "[" + std::to_string(v.index) + "]";
            EXPECT_NE(v.kind, K::kInvalid) << m.key << " " << at << ": " << v.detail;
            EXPECT_EQ(v.detail.find("not in migscope's catalog"), std::string::npos) << at;
            if (v.kind == K::kValid || v.kind == K::kMigDisabled)
                valid_somewhere.insert(at);
        }
    }
    std::set<std::string> unclassified;
    for (const MigPartedConfig& c : configs) {
        for (size_t i = 0; i < c.entries.size(); ++i) {
            const std::string at = c.name + "[" + std::to_string(i) + "]";
            if (!valid_somewhere.count(at))
                unclassified.insert(at);
        }
    }
    // Every profile NVIDIA's file names is some catalog model's (1g.24gb+me, 3g.95gb, 4g.95gb and
    // 7g.189gb: GB200's early names).
    EXPECT_TRUE(unclassified.empty()) << *unclassified.begin();

    // all-balanced: the entry whose device-filter names the board is valid on it, no other is.
    for (const GpuModel& m : builtin_catalog()) {
        if (m.pci_device_ids.empty())
            continue;
        size_t valid = 0;
        for (const EntryVerdict& v : check_mig_parted(configs, m)) {
            if (v.config == "all-balanced" && v.kind == K::kValid) {
                ++valid;
                EXPECT_GE(v.layout->instances.size(), 3u) << m.key;
            }
        }
        EXPECT_EQ(valid, 1u) << m.key;
    }
    // NVIDIA's all-1g configs fill the GPU: 7 on the 7-slice boards.
    const auto gb200 = check_mig_parted(configs, builtin_model("gb200"));
    EXPECT_EQ(verdict_of(gb200, "all-1g.23gb", 0).layout->instances.size(), 7u);
    EXPECT_EQ(verdict_of(gb200, "all-1g.47gb", 0).kind, K::kValid);
    EXPECT_EQ(verdict_of(gb200, "all-1g.18gb", 0).kind, K::kOtherGpu);
    EXPECT_EQ(verdict_of(gb200, "all-3g.95gb", 0).kind, K::kOtherGpu);
    const auto gb200_early = check_mig_parted(configs, builtin_model("gb200-189gb"));
    EXPECT_EQ(verdict_of(gb200_early, "all-3g.95gb", 0).layout->instances.size(), 2u);
    EXPECT_EQ(verdict_of(gb200_early, "all-1g.24gb.me", 0).kind, K::kValid);
    const auto h200 = check_mig_parted(configs, builtin_model("h200"));
    EXPECT_EQ(verdict_of(h200, "all-1g.35gb", 0).kind, K::kValid);    // the H200's filter
    EXPECT_EQ(verdict_of(h200, "all-1g.35gb", 1).kind, K::kOtherGpu); // GB300's
    EXPECT_NE(verdict_of(h200, "all-1g.35gb", 1).detail.find("gb300"), std::string::npos);
    EXPECT_EQ(verdict_of(h200, "all-1g.35gb.me", 0).kind, K::kOtherGpu);
}

// The defaults the GPU Operator ConfigMap keeps (made from the catalog): label-safe, unique,
// never invalid on any model, all-balanced valid once per board, and every profile filled.
TEST(MigParted, DefaultConfigsHoldOnEveryModel) {
    const std::vector<MigPartedConfig> defaults = default_mig_configs();
    const std::vector<MigPartedConfig> back = parse_mig_parted(write_mig_parted(defaults));
    ASSERT_EQ(back.size(), defaults.size());
    for (const MigPartedConfig& c : defaults)
        EXPECT_EQ(label_safe_name(c.name), c.name);
    using K = EntryVerdict::Kind;
    for (const GpuModel& m : builtin_catalog()) {
        SCOPED_TRACE(m.key);
        size_t balanced = 0;
        for (const EntryVerdict& v : check_mig_parted(defaults, m)) {
            EXPECT_NE(v.kind, K::kInvalid) << v.config << "[" << v.index << "]: " << v.detail;
            balanced += v.config == "all-balanced" && v.kind == K::kValid;
        }
        // A model without PCI ids (GB200's early names) has no all-balanced entry of its own, and
        // the names it shares with boards that have ids hold those boards' counts: valid, not
        // always filled (all-1g.24gb: 4, as on the H100 NVL).
        const bool addressable = !m.pci_device_ids.empty();
        EXPECT_EQ(balanced, addressable ? 1u : 0u);
        for (const Profile& p : m.profiles) {
            const std::string name = label_safe_name("all-" + p.name);
            const auto verdicts = check_mig_parted(defaults, m);
            const bool filled = std::any_of(verdicts.begin(), verdicts.end(), [&](const auto& v) {
                return v.config == name && v.kind == K::kValid &&
                       (v.layout->instances.size() == p.max_count || !addressable);
            });
            EXPECT_TRUE(filled) << name;
        }
    }
}

// Config names from a user's file are data: a name YAML would read as something else, or one
// holding ": " or "#", is written quoted and reads back the same.
TEST(MigParted, ConfigNamesFromUsersAreQuoted) {
    MigPartedEntry off;
    const std::vector<MigPartedConfig> configs = {
        {"true", {off}}, {"x: {y: 1} # --- \"q\"", {off}}, {"123", {off}}, {"plain-name", {off}}};
    const std::string yaml = write_mig_parted(configs);
    EXPECT_NE(yaml.find("\"true\":"), std::string::npos) << yaml;
    EXPECT_NE(yaml.find("\n  plain-name:"), std::string::npos) << yaml;
    const std::vector<MigPartedConfig> back = parse_mig_parted(yaml);
    ASSERT_EQ(back.size(), configs.size());
    for (size_t i = 0; i < back.size(); ++i)
        EXPECT_EQ(back[i].name, configs[i].name);
}
