// Tests of the built-in MIG catalog: lookups, aliases, device-name matching, table consistency.
#include "mig/catalog.h"

#include <gtest/gtest.h>

#include "core/error.h"

using namespace migscope;
using namespace migscope::mig;

TEST(Catalog, FindsProfilesByFullAndShortName) {
    const GpuModel& h200 = builtin_model("h200");
    ASSERT_NE(h200.find("3G.71GB"), nullptr);
    EXPECT_EQ(h200.find("3g.71gb")->sms, 60u);
    // Short form: fewest memory slices, no media extensions.
    EXPECT_EQ(h200.find("1g")->name, "1g.18gb");
    EXPECT_EQ(h200.find("2g")->name, "2g.35gb");
    EXPECT_EQ(h200.find("7g")->name, "7g.141gb");
    EXPECT_EQ(h200.find("5g"), nullptr);
    EXPECT_EQ(h200.find("1g.18gb+me")->media_extensions, true);
}

TEST(Catalog, RequireNamesTheUnknownToken) {
    const GpuModel& h200 = builtin_model("h200");
    try {
        h200.require("9g.1tb");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("'9g.1tb'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("3g.71gb"), std::string::npos);
    }
}

TEST(Catalog, ModelKeysAndAliases) {
    EXPECT_EQ(builtin_model("H200-141GB").key, "h200");
    EXPECT_EQ(builtin_model("h100").key, "h100-80gb");
    EXPECT_THROW(builtin_model("h900"), Error);
    for (const char* key : {"a30", "a100-40gb", "a100-80gb", "h100-80gb", "h100-80gb-pcie",
                            "h100-94gb", "h200", "b200"}) {
        EXPECT_EQ(builtin_model(key).key, key);
    }
}

TEST(Catalog, MatchesNvmlDeviceNames) {
    auto key = [](const char* name) {
        const GpuModel* m = match_builtin_by_device_name(name);
        return m ? m->key : std::string("none");
    };
    EXPECT_EQ(key("NVIDIA H200"), "h200");
    EXPECT_EQ(key("NVIDIA H200 NVL"), "h200");
    EXPECT_EQ(key("NVIDIA H100 80GB HBM3"), "h100-80gb");
    EXPECT_EQ(key("NVIDIA H100 PCIe"), "h100-80gb-pcie");
    EXPECT_EQ(key("NVIDIA H100 NVL"), "h100-94gb");
    EXPECT_EQ(key("NVIDIA A100-SXM4-40GB"), "a100-40gb");
    EXPECT_EQ(key("NVIDIA A100 80GB PCIe"), "a100-80gb");
    EXPECT_EQ(key("NVIDIA A30"), "a30");
    EXPECT_EQ(key("NVIDIA B200"), "b200");
    EXPECT_EQ(key("NVIDIA GeForce RTX 4090"), "none");
}

// Every table must be self-consistent: placements fit the GPU, counts fit the placements, and the
// H200 figures are the ones measured on our host (`nvidia-smi mig -lgip`/`-lgipp`, MIG disabled).
TEST(Catalog, TablesAreConsistent) {
    for (const GpuModel& m : builtin_catalog()) {
        for (const Profile& p : m.profiles) {
            SCOPED_TRACE(m.key + " " + p.name);
            EXPECT_FALSE(p.placements.empty());
            EXPECT_LE(p.compute_slices, m.compute_slices);
            for (unsigned start : p.placements)
                EXPECT_LE(start + p.memory_slices, m.memory_slices);
            // A profile cannot have more instances than disjoint placements.
            EXPECT_LE(p.max_count * p.memory_slices, m.memory_slices);
            if (p.sms && m.sm_count) {
                EXPECT_LE(*p.sms, *m.sm_count);
            }
            EXPECT_EQ(p.name.substr(0, p.name.find('g')), std::to_string(p.compute_slices));
        }
    }
    const GpuModel& h200 = builtin_model("h200");
    EXPECT_EQ(h200.sm_count, 132u);
    EXPECT_DOUBLE_EQ(*h200.require("1g.35gb").memory_gib, 32.50);
    EXPECT_EQ(h200.require("1g.35gb").sms, 26u);
    EXPECT_EQ(h200.require("3g.71gb").placements, (std::vector<unsigned>{0, 4}));
}

TEST(Catalog, UnknownFiguresStayUnknown) {
    const GpuModel& b200 = builtin_model("b200");
    EXPECT_FALSE(b200.require("3g.90gb").sms.has_value());
    EXPECT_FALSE(b200.require("7g.180gb").memory_gib.has_value());
}

TEST(Catalog, KnowsPciDeviceIdsOfItsBoards) {
    EXPECT_EQ(match_builtin_by_pci_id("0x233510DE")->key, "h200");
    EXPECT_EQ(match_builtin_by_pci_id("0x233b10de")->key, "h200");  // H200 NVL, any case
    EXPECT_EQ(match_builtin_by_pci_id("0x20B710DE")->key, "a30");
    EXPECT_EQ(match_builtin_by_pci_id("0x20B010DE")->key, "a100-40gb");
    EXPECT_EQ(match_builtin_by_pci_id("0x20B510DE")->key, "a100-80gb");
    EXPECT_TRUE(model_has_pci_id(builtin_model("h100-80gb-pcie"), "0x233110DE"));
    EXPECT_EQ(match_builtin_by_pci_id("0x123410DE"), nullptr);
}
