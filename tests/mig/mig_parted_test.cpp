// Tests of the strict mig-parted reader and the writer (round trip, error paths).
#include "mig/mig_parted.h"

#include <gtest/gtest.h>

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
        EXPECT_EQ(configs[i].name, named[i].first);
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
            .find("mig-configs.a[0].mig-devcies"),
        std::string::npos);
    EXPECT_NE(error_of("version: v1\nextra: 1\nmig-configs: {}\n").find("unknown key 'extra'"),
              std::string::npos);
}

TEST(MigParted, RejectsBadValues) {
    EXPECT_NE(error_of("version: v2\nmig-configs: {}\n").find("unsupported version 'v2'"),
              std::string::npos);
    EXPECT_NE(error_of("mig-configs: {}\n").find("at version"), std::string::npos);
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
