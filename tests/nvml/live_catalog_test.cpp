// Tests of building a MIG model from NVML profile records and of the disagreement report.
#include "nvml/live_catalog.h"

#include <gtest/gtest.h>

#include "mig/layout.h"

using namespace migscope;
using namespace migscope::nvml;

namespace {
// The H200's profiles as NVML reports them (ids, slices, SMs, MiB, placements), no names.
std::vector<NvmlProfile> h200_records() {
    auto rec = [](unsigned e, unsigned id, unsigned g, unsigned n, unsigned sms,
                  unsigned long long mib, std::vector<api::GpuInstancePlacement> pl) {
        return NvmlProfile{e, id, g, n, sms, mib, "", std::move(pl)};
    };
    return {
        rec(0, 19, 1, 7, 16, 16384, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}),
        rec(1, 14, 2, 3, 32, 33280, {{0, 2}, {2, 2}, {4, 2}}),
        rec(2, 9, 3, 2, 60, 71424, {{0, 4}, {4, 4}}),
        rec(3, 5, 4, 1, 64, 71424, {{0, 4}}),
        rec(4, 0, 7, 1, 132, 143360, {{0, 8}}),
        rec(7, 20, 1, 1, 16, 16384, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}),
        rec(9, 15, 1, 4, 26, 33280, {{0, 2}, {2, 2}, {4, 2}, {6, 2}}),
    };
}
}  // namespace

TEST(LiveCatalog, H200RecordsAgreeWithTheTable) {
    const mig::GpuModel& table = mig::builtin_model("h200");
    LiveModel live = model_from_profiles(h200_records(), "h200", "NVIDIA H200", &table);
    EXPECT_TRUE(live.disagreements.empty()) << live.disagreements.front();
    EXPECT_TRUE(live.notes.empty());
    EXPECT_EQ(live.model.memory_slices, 8u);
    EXPECT_EQ(live.model.compute_slices, 7u);
    EXPECT_EQ(live.model.require("3g.71gb").placements, (std::vector<unsigned>{0, 4}));
    EXPECT_TRUE(live.model.require("1g.18gb+me").media_extensions);
    // Same layouts as from the table.
    EXPECT_EQ(mig::enumerate_layouts(live.model).size(), mig::enumerate_layouts(table).size());
}

TEST(LiveCatalog, ReportsEachDisagreement) {
    std::vector<NvmlProfile> records = h200_records();
    records[2].multiprocessor_count = 56;  // 3g SMs
    records[1].placements.pop_back();      // 2g loses start 4
    records[4].name = "7g.140gb";          // driver names the 7g differently
    records.pop_back();                    // no 1g.35gb
    const mig::GpuModel& table = mig::builtin_model("h200");
    LiveModel live = model_from_profiles(records, "h200", "NVIDIA H200", &table);
    auto has = [&](const std::string& text) {
        for (const std::string& d : live.disagreements) {
            if (d.find(text) != std::string::npos)
                return true;
        }
        return false;
    };
    EXPECT_TRUE(has("3g.71gb: SMs table 60, NVML 56"));
    EXPECT_TRUE(has("2g.35gb: placements table {0,2,4}, NVML {0,2}"));
    EXPECT_TRUE(has("7g.140gb: name table 7g.141gb, NVML 7g.140gb"));
    EXPECT_TRUE(has("lists 1g.35gb, which NVML does not offer"));
    EXPECT_EQ(live.disagreements.size(), 4u);
    // NVML's data wins.
    EXPECT_EQ(live.model.require("3g.71gb").sms, 56u);
}

TEST(LiveCatalog, DriverNamesLoseTheirMigPrefix) {
    // Driver 580 on our H200 names profiles "MIG 3g.71gb" even with MIG disabled.
    std::vector<NvmlProfile> records = h200_records();
    records[2].name = "MIG 3g.71gb";
    const mig::GpuModel& table = mig::builtin_model("h200");
    LiveModel live = model_from_profiles(records, "h200", "NVIDIA H200", &table);
    EXPECT_TRUE(live.disagreements.empty()) << live.disagreements.front();
    EXPECT_NE(live.model.find("3g.71gb"), nullptr);
}

TEST(LiveCatalog, UnknownGpuGetsSynthesisedNamesAndSaysSo) {
    LiveModel live = model_from_profiles(h200_records(), "nvidia future", "NVIDIA Future", nullptr);
    EXPECT_TRUE(live.disagreements.empty());
    EXPECT_EQ(live.notes.size(), 7u);
    EXPECT_NE(live.model.find("3g.70gb"), nullptr);     // 69.75 GiB rounds to 70
    EXPECT_NE(live.model.find("1g.16gb+me"), nullptr);  // enum 7 is the media variant
    EXPECT_FALSE(live.model.sm_count.has_value());
}
