// Names in deployment files: Kubernetes object names from untrusted job names, and config names
// (nvidia.com/mig.config label values) for every layout of every built-in GPU model.
#include "report/deploy_output.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "mig/catalog.h"
#include "mig/layout.h"

namespace migscope::report {
namespace {

const std::regex kDnsLabel("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
const std::regex kLabelValue("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

TEST(DnsLabel, UntrustedNamesBecomeObjectNames) {
    EXPECT_EQ(dns_label("resnet18"), "resnet18");
    EXPECT_EQ(dns_label("../x"), "x");
    EXPECT_EQ(dns_label("A B\""), "a-b");
    EXPECT_EQ(dns_label("x: {y: 1}"), "x-y-1");
    EXPECT_EQ(dns_label("resnet18#2"), "resnet18-2");
    EXPECT_EQ(dns_label(""), "x");
    EXPECT_EQ(dns_label("---"), "x");
    EXPECT_EQ(dns_label("\xc3\x9cn\xc3\xaf"
                        "code"),
              "n-code");
    const std::string long_name = dns_label(std::string(40, 'a') + "-" + std::string(40, 'b'));
    EXPECT_EQ(long_name.size(), 63u);
    for (const std::string& name :
         std::vector<std::string>{"../x", "A B\"", "-a-", "a-", std::string(200, '-') + "z",
                                  std::string(62, 'a') + "-b"}) {
        const std::string out = dns_label(name);
        EXPECT_TRUE(std::regex_match(out, kDnsLabel)) << name << " -> " << out;
        EXPECT_LE(out.size(), 63u) << name;
    }
}

TEST(LayoutConfigName, EveryLayoutOfEveryModelIsALabelValue) {
    for (const mig::GpuModel& model : mig::builtin_catalog()) {
        std::map<std::string, std::multiset<std::string>> seen;
        for (const mig::Layout& layout :
             mig::enumerate_layouts(model, {mig::MediaProfiles::kInclude, mig::Maximality::kAll})) {
            const std::string name = layout_config_name({layout, {}});
            EXPECT_LE(name.size(), 63u) << name;
            EXPECT_TRUE(std::regex_match(name, kLabelValue)) << name;
            EXPECT_EQ(name.find('+'), std::string::npos) << name;
            std::multiset<std::string> profiles;
            for (const mig::Instance& i : layout.instances)
                profiles.insert(i.profile);
            // One name per set of profiles (mig-parted places them itself), different sets apart.
            const auto [it, added] = seen.emplace(name, profiles);
            EXPECT_TRUE(added || it->second == profiles) << model.key << ": " << name;
        }
    }
    EXPECT_EQ(layout_config_name({std::nullopt, {{0}}}), "all-disabled");
}

TEST(LayoutConfigName, CountsProfilesLargestFirst) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    const auto check = mig::check_layout(mig::parse_layout("4g.71gb+2g.35gb+1g.18gb", h200), h200);
    ASSERT_TRUE(check.layout) << check.reason;
    EXPECT_EQ(layout_config_name({check.layout, {}}), "migscope-1x4g.71gb-1x2g.35gb-1x1g.18gb");
}

// The user's base ConfigMap is read with the strict reader's words, each after the field's path.
TEST(BaseConfig, MissingFieldsAndWrongTypesAreNamedWithTheirPath) {
    const auto message_of = [](const std::string& yaml) {
        try {
            read_base_config(yaml, "b.yaml");
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    const std::string where = "--k8s-base-config 'b.yaml': ";
    EXPECT_EQ(message_of("kind: ConfigMap\n"), where + "metadata: missing field");
    EXPECT_EQ(message_of("kind: ConfigMap\nmetadata: [1]\n"),
              where + "metadata: wrong type: expected a mapping, got a list");
    EXPECT_EQ(message_of("kind: ConfigMap\nmetadata: {}\n"),
              where + "metadata.name: missing field (a ConfigMap, or a mig-parted file)");
    EXPECT_EQ(message_of("kind: ConfigMap\nmetadata: {name: x}\ndata: {config.yaml: [1]}\n"),
              where + "data.config.yaml: wrong type: expected a scalar, got a list");
}

}  // namespace
}  // namespace migscope::report
