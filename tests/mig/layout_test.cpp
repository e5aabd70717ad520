// Tests of layout parsing, validation reasons, automatic placement and enumeration, against cases
// worked by hand on 7-slice GPUs (and the 4-slice A30).
#include "mig/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "mig/mig_parted.h"

using namespace migscope;
using namespace migscope::mig;

namespace {
const GpuModel& h200() {
    return builtin_model("h200");
}

LayoutCheck check(const std::string& text, const GpuModel& model = h200()) {
    return check_layout(parse_layout(text, model), model);
}

// Multiset of compute sizes, e.g. "4+2+1", ignoring which memory variant of 1g is used.
std::string sizes(const Layout& layout, const GpuModel& model) {
    std::vector<unsigned> g;
    for (const Instance& i : layout.instances)
        g.push_back(model.require(i.profile).compute_slices);
    std::sort(g.rbegin(), g.rend());
    std::string out;
    for (unsigned x : g)
        out += (out.empty() ? "" : "+") + std::to_string(x);
    return out;
}
}  // namespace

TEST(Layout, HandWorkedValidCases) {
    EXPECT_EQ(to_string(*check("4g+3g").layout), "4g.71gb@0+3g.71gb@4");
    EXPECT_EQ(to_string(*check("3g+3g").layout), "3g.71gb@0+3g.71gb@4");
    EXPECT_EQ(to_string(*check("4g.71gb+2g.35gb+1g.18gb").layout), "4g.71gb@0+2g.35gb@4+1g.18gb@6");
    EXPECT_EQ(to_string(*check("3g+2g+2g").layout), "2g.35gb@0+2g.35gb@2+3g.71gb@4");
    EXPECT_EQ(check("7x1g").layout->instances.size(), 7u);
    EXPECT_TRUE(check("7g").layout.has_value());
    EXPECT_TRUE(check("1g.18gb+me+6x1g").layout.has_value());
}

TEST(Layout, HandWorkedInvalidCasesSayWhy) {
    LayoutCheck four_four = check("4g+4g");
    ASSERT_FALSE(four_four.layout);
    EXPECT_NE(four_four.reason.find("4g.71gb appears 2 times"), std::string::npos);

    LayoutCheck three_three_one = check("3g+3g+1g");
    ASSERT_FALSE(three_three_one.layout);
    EXPECT_NE(three_three_one.reason.find("memory slices sum to 9"), std::string::npos);

    LayoutCheck four_two_two = check("4g+2g+2g");
    ASSERT_FALSE(four_two_two.layout);
    EXPECT_NE(four_two_two.reason.find("compute slices sum to 8"), std::string::npos);

    EXPECT_FALSE(check("8x1g").layout);
    EXPECT_FALSE(check("2x1g.18gb+me").layout);
}

TEST(Layout, PlacementConflictsNameBothInstances) {
    LayoutCheck overlap = check("3g@0+4g@0");
    ASSERT_FALSE(overlap.layout);
    EXPECT_NE(overlap.reason.find("4g.71gb@0 overlaps 3g.71gb@0 on memory slices 0-3"),
              std::string::npos)
        << overlap.reason;

    LayoutCheck bad_start = check("3g.71gb@2");
    ASSERT_FALSE(bad_start.layout);
    EXPECT_NE(bad_start.reason.find("allowed: 0, 4"), std::string::npos) << bad_start.reason;

    // Sums fit, but with the 1g fixed at slice 4 the 3g must take 0-3 and no 2g window is left.
    LayoutCheck blocked = check("1g@4+3g+2g");
    ASSERT_FALSE(blocked.layout);
    EXPECT_NE(blocked.reason.find("no placement fits 2g.35gb"), std::string::npos)
        << blocked.reason;
    EXPECT_NE(blocked.reason.find("1g.18gb@4"), std::string::npos) << blocked.reason;
}

TEST(Layout, FixedPlacementsAreKept) {
    LayoutCheck c = check("1g@6+3g+2g");
    ASSERT_TRUE(c.layout) << c.reason;
    EXPECT_EQ(to_string(*c.layout), "3g.71gb@0+2g.35gb@4+1g.18gb@6");
}

TEST(Layout, ParseErrorsNameTheToken) {
    auto message = [](const std::string& text) {
        try {
            parse_layout(text, h200());
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("4g+5g").find("'5g'"), std::string::npos);
    EXPECT_NE(message("4g++3g").find("empty term 2"), std::string::npos);
    EXPECT_NE(message("3g@x").find("'3g@x'"), std::string::npos);
    EXPECT_NE(message("").find("empty layout"), std::string::npos);
    EXPECT_NE(message("0x1g").find("'0x1g'"), std::string::npos);
}

TEST(Layout, EnumerationCountsMatchIndependentCount) {
    // 77 multisets of {1g, 1g with two memory slices, 2g, 3g, 4g, 7g}; 37 without the two-slice
    // 1g (counted by a separate script from the placements in NVIDIA's MIG user guide).
    EXPECT_EQ(enumerate_layouts(h200()).size(), 77u);
    GpuModel without = h200();
    std::erase_if(without.profiles, [](const Profile& p) { return p.name == "1g.35gb"; });
    EXPECT_EQ(enumerate_layouts(without).size(), 37u);
    // Every listed layout passes the checker with its own placements.
    for (const Layout& l : enumerate_layouts(h200())) {
        std::vector<LayoutTerm> terms;
        for (const Instance& i : l.instances)
            terms.push_back({i.profile, i.start});
        EXPECT_TRUE(check_layout(terms, h200()).layout.has_value()) << to_string(l);
    }
}

TEST(Layout, MaximalLayoutsWithoutTwoSlice1g) {
    GpuModel model = h200();
    std::erase_if(model.profiles, [](const Profile& p) { return p.name == "1g.35gb"; });
    std::set<std::string> got;
    for (const Layout& l :
         enumerate_layouts(model, {MediaProfiles::kExclude, Maximality::kMaximalOnly})) {
        got.insert(sizes(l, model));
    }
    const std::set<std::string> expected = {"7",       "4+3",       "4+2+1",       "4+1+1+1",
                                            "3+3",     "3+2+2",     "3+2+1+1",     "3+1+1+1+1",
                                            "2+2+2+1", "2+2+1+1+1", "2+1+1+1+1+1", "1+1+1+1+1+1+1"};
    EXPECT_EQ(got, expected);
}

TEST(Layout, MediaVariantsOnlyWhenAsked) {
    auto has_media = [](const std::vector<Layout>& layouts) {
        for (const Layout& l : layouts) {
            for (const Instance& i : l.instances) {
                if (i.profile.find("+me") != std::string::npos)
                    return true;
            }
        }
        return false;
    };
    EXPECT_FALSE(has_media(enumerate_layouts(h200())));
    EXPECT_TRUE(has_media(enumerate_layouts(h200(), {MediaProfiles::kInclude, Maximality::kAll})));
}

TEST(Layout, FourSliceGpu) {
    const GpuModel& a30 = builtin_model("a30");
    EXPECT_TRUE(check("2g+2g", a30).layout.has_value());
    EXPECT_TRUE(check("2g+1g+1g", a30).layout.has_value());
    EXPECT_FALSE(check("4g+1g", a30).layout.has_value());
    // {4}, {2,2}, {2,1,1}, {1,1,1,1} are the maximal ones.
    EXPECT_EQ(enumerate_layouts(a30, {MediaProfiles::kExclude, Maximality::kMaximalOnly}).size(),
              4u);
}

TEST(Layout, TheWholeGpuIsOneInstanceOfEveryComputeSlice) {
    EXPECT_TRUE(is_whole_gpu(*check("7g").layout, h200()));
    EXPECT_FALSE(is_whole_gpu(*check("4g+3g").layout, h200()));
    EXPECT_FALSE(is_whole_gpu(*check("4g").layout, h200()));
    const GpuModel& a30 = builtin_model("a30");
    EXPECT_TRUE(is_whole_gpu(*check("4g", a30).layout, a30));
}

// Huge repeat counts are refused before anything is made (they once took 31 s and 5.2 GB, or
// ended in bad_alloc); counts a user could mean are still explained by the check.
TEST(Layout, HugeRepeatCountsAreRefusedBeforeExpansion) {
    for (const char* text : {"100000000x1g", "4294967295x1g.18gb", "65x1g"}) {
        try {
            parse_layout(text, h200());
            ADD_FAILURE() << text << " was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput) << text;
            EXPECT_NE(std::string(e.what()).find("at most 64"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(parse_layout("99999999999999999999x1g", h200()), Error);  // not a count at all
    const LayoutCheck eight = check("8x1g");
    EXPECT_FALSE(eight.layout);
    EXPECT_NE(eight.reason.find("1g.18gb appears 8 times"), std::string::npos) << eight.reason;
    MigPartedEntry entry;
    entry.mig_enabled = true;
    entry.mig_devices["1g.18gb"] = 4000000000u;
    EXPECT_THROW(terms_of(entry, h200()), Error);
}
