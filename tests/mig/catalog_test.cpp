// Tests of the built-in MIG catalog: lookups, aliases, device-name matching, table consistency.
#include "mig/catalog.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "mig/layout.h"

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

// The models NVIDIA's GPU Operator config names (config-default.yaml), beside the older tables:
// keys, aliases, NVML names and PCI ids, each from that file and the MIG user guide.
TEST(Catalog, CoversEveryModelOfNvidiasDefaultConfig) {
    for (const char* key : {"gh200-96gb", "h100-96gb", "h20", "gh200-144gb", "gb200",
                            "gb200-189gb", "b300", "gb300", "rtx-pro-6000"}) {
        EXPECT_EQ(builtin_model(key).key, key);
    }
    EXPECT_EQ(builtin_model("h800").key, "h100-80gb");
    EXPECT_EQ(builtin_model("H800-NVL").key, "h100-94gb");
    EXPECT_EQ(builtin_model("a800-80gb").key, "a100-80gb");
    EXPECT_EQ(builtin_model("gh200").key, "gh200-96gb");
    const std::vector<std::pair<const char*, const char*>> ids = {
        {"0x234210DE", "gh200-96gb"}, {"0x233D10DE", "h100-96gb"}, {"0x232910DE", "h20"},
        {"0x234810DE", "gh200-144gb"}, {"0x294110DE", "gb200"},    {"0x318210DE", "b300"},
        {"0x31C210DE", "gb300"},      {"0x2BB510DE", "rtx-pro-6000"}, {"0x290110DE", "b200"},
        {"0x232410DE", "h100-80gb"},  {"0x233A10DE", "h100-94gb"}, {"0x20B610DE", "h100-96gb"}};
    for (const auto& [id, key] : ids) {
        ASSERT_NE(match_builtin_by_pci_id(id), nullptr) << id;
        EXPECT_EQ(match_builtin_by_pci_id(id)->key, key) << id;
    }
    auto key = [](const char* name) {
        const GpuModel* m = match_builtin_by_device_name(name);
        return m ? m->key : std::string("none");
    };
    // "GH200" holds "H200" and "GB200" holds "B200": the longer names win.
    EXPECT_EQ(key("NVIDIA GH200 480GB"), "gh200-96gb");
    EXPECT_EQ(key("NVIDIA GH200 144G HBM3e"), "gh200-144gb");
    EXPECT_EQ(key("NVIDIA GB200"), "gb200");
    EXPECT_EQ(key("NVIDIA H20"), "h20");
    EXPECT_EQ(key("NVIDIA H200"), "h200");
    EXPECT_EQ(key("NVIDIA H800"), "h100-80gb");
    EXPECT_EQ(key("NVIDIA B300 SXM6 AC"), "b300");
    EXPECT_EQ(key("NVIDIA GB300"), "gb300");
    EXPECT_EQ(key("NVIDIA RTX PRO 6000 Blackwell Server Edition"), "rtx-pro-6000");

    const GpuModel& gb200 = builtin_model("gb200");
    EXPECT_EQ(gb200.find("1g")->name, "1g.23gb");
    EXPECT_EQ(gb200.require("3g.93gb").placements, (std::vector<unsigned>{0, 4}));
    EXPECT_FALSE(gb200.require("7g.186gb").memory_gib.has_value());  // not published: unknown
    // The rows of NVIDIA's published `-lgip` tables (mig-parted issue 227, gpu-operator PR 1303,
    // mig-parted PR 139).
    EXPECT_EQ(gb200.require("2g.47gb").sms, 38u);
    EXPECT_DOUBLE_EQ(*gb200.require("1g.47gb").memory_gib, 45.50);
    const GpuModel& gb200_early = builtin_model("gb200-189gb");
    EXPECT_TRUE(gb200_early.pci_device_ids.empty());  // the production board's id is gb200's
    EXPECT_DOUBLE_EQ(*gb200_early.require("1g.24gb").memory_gib, 20.00);
    EXPECT_EQ(gb200_early.require("7g.189gb").placements, (std::vector<unsigned>{0}));
    EXPECT_EQ(builtin_model("gh200-144gb").require("1g.36gb").sms, 26u);
    EXPECT_FALSE(builtin_model("gh200-144gb").require("3g.72gb").sms.has_value());
    const GpuModel& rtx = builtin_model("rtx-pro-6000");
    EXPECT_EQ(rtx.compute_slices, 4u);
    EXPECT_TRUE(rtx.require("1g.24gb+me.all").media_extensions);
    EXPECT_EQ(rtx.require("2g.48gb+gfx").max_count, 2u);
}

// Each model's layouts hold by its own rules: as many 1g as compute slices, the 4g+3g (or 2x2g)
// split, the whole GPU, and no more compute slices than the GPU has in any maximal layout.
TEST(Catalog, EveryModelsLayoutsAreValidByItsOwnRules) {
    for (const GpuModel& m : builtin_catalog()) {
        SCOPED_TRACE(m.key);
        const Profile* one = m.find("1g");
        ASSERT_NE(one, nullptr);
        const std::string all_ones = std::to_string(m.compute_slices) + "x" + one->name;
        const LayoutCheck ones = check_layout(parse_layout(all_ones, m), m);
        ASSERT_TRUE(ones.layout) << all_ones << ": " << ones.reason;
        EXPECT_EQ(ones.layout->instances.size(), m.compute_slices);
        const std::string split = m.compute_slices == 7 ? "4g+3g" : "2x2g";
        EXPECT_TRUE(check_layout(parse_layout(split, m), m).layout) << split;
        const std::string whole = std::to_string(m.compute_slices) + "g";
        EXPECT_TRUE(check_layout(parse_layout(whole, m), m).layout) << whole;
        const std::string too_many = std::to_string(m.compute_slices + 1) + "x" + one->name;
        EXPECT_FALSE(check_layout(parse_layout(too_many, m), m).layout) << too_many;
        const std::vector<Layout> maximal =
            enumerate_layouts(m, {MediaProfiles::kInclude, Maximality::kMaximalOnly});
        ASSERT_FALSE(maximal.empty());
        for (const Layout& layout : maximal) {
            unsigned compute = 0;
            for (const Instance& i : layout.instances)
                compute += m.require(i.profile).compute_slices;
            EXPECT_LE(compute, m.compute_slices) << to_string(layout);
            EXPECT_TRUE(check_layout(parse_layout(to_string(layout), m), m).layout)
                << to_string(layout);
        }
    }
    // Suffixes after '+' stay on their profile: "+gfx" and "+me.all" are not layout terms.
    const GpuModel& rtx = builtin_model("rtx-pro-6000");
    const LayoutCheck gfx = check_layout(parse_layout("2g.48gb+gfx+1g.24gb+me.all+1g.24gb", rtx), rtx);
    ASSERT_TRUE(gfx.layout) << gfx.reason;
    EXPECT_EQ(gfx.layout->instances.size(), 3u);
}
