// Tests of a request's typed layout: parsed once into catalog profiles, printed as given or
// canonical, and parsed back to the same value.
#include "partition/layout.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::partition {
namespace {

const mig::GpuModel& h200() {
    return mig::builtin_model("h200");
}

std::string error_of(const std::string& text) {
    try {
        Layout::parse(text, h200());
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "accepted";
}

TEST(Layout, NoneIsEmptyWithoutText) {
    const Layout none;
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none.size(), 0u);
    EXPECT_EQ(none.text(), "");
    EXPECT_EQ(none.canonical_text(), "");
    EXPECT_TRUE(none.terms().empty());
    EXPECT_EQ(none, Layout());
}

TEST(Layout, ParsesIntoCatalogProfilesAndKeepsItsTextAsGiven) {
    const Layout l = Layout::parse("4g@0 + 2g + 2x1g.18gb", h200());
    EXPECT_EQ(l.text(), "4g@0 + 2g + 2x1g.18gb");  // what runs print and store
    EXPECT_EQ(l.model_key(), "h200");
    ASSERT_EQ(l.size(), 4u);
    EXPECT_EQ(l.parts()[0].profile.name, "4g.71gb");
    EXPECT_EQ(l.parts()[0].start, 0u);
    EXPECT_EQ(l.parts()[1].profile.name, "2g.35gb");
    EXPECT_FALSE(l.parts()[1].start);
    EXPECT_EQ(l.parts()[3].profile.name, "1g.18gb");
    // The catalog's profile itself, looked up once: its SMs and memory are at hand.
    EXPECT_EQ(l.parts()[0].profile.sms, h200().require("4g.71gb").sms);
    EXPECT_EQ(l.parts()[3].profile.memory_gib, h200().require("1g.18gb").memory_gib);
    EXPECT_EQ(l.canonical_text(), "4g.71gb@0+2g.35gb+1g.18gb+1g.18gb");
}

TEST(Layout, TermsCarryTheCanonicalNamesAndStarts) {
    const std::vector<mig::LayoutTerm> terms = Layout::parse("3g@4+1g", h200()).terms();
    ASSERT_EQ(terms.size(), 2u);
    EXPECT_EQ(terms[0].profile, "3g.71gb");
    EXPECT_EQ(terms[0].start, 4u);
    EXPECT_EQ(terms[1].profile, "1g.18gb");
    EXPECT_FALSE(terms[1].start);
}

TEST(Layout, PrintsAndParsesBackToTheSameValue) {
    for (const char* text : {"3g.71gb+2g.35gb+1g.18gb", "4g.71gb@0+2g.35gb@4+1g.18gb@6",
                             "7x1g.18gb", "1g.18gb+me+3g.71gb", "7g.141gb"}) {
        const Layout l = Layout::parse(text, h200());
        EXPECT_EQ(Layout::parse(l.text(), h200()), l) << text;
        const Layout canonical = l.canonical();
        EXPECT_EQ(canonical.text(), l.canonical_text()) << text;
        EXPECT_EQ(Layout::parse(canonical.text(), h200()), canonical) << text;
        EXPECT_EQ(canonical.terms().size(), l.terms().size()) << text;
    }
}

TEST(Layout, ValuesDifferByTextProfilesAndStarts) {
    EXPECT_NE(Layout::parse("3g+1g", h200()), Layout::parse("3g.71gb+1g.18gb", h200()));
    EXPECT_EQ(Layout::parse("3g+1g", h200()).canonical(), Layout::parse("3g.71gb+1g.18gb", h200()));
    EXPECT_NE(Layout::parse("3g.71gb@4", h200()), Layout::parse("3g.71gb@0", h200()));
    EXPECT_NE(Layout::parse("1g.18gb", h200()), Layout::parse("2g.35gb", h200()).canonical());
}

TEST(Layout, ErrorsNameTheOffendingTokenAsTheLayoutParserDoes) {
    EXPECT_NE(error_of("").find("empty layout"), std::string::npos);
    EXPECT_NE(error_of("3g+9g").find("9g"), std::string::npos);
    EXPECT_NE(error_of("3g@x").find("x"), std::string::npos);
}

TEST(Layout, ParsingDoesNotAskWhetherThePartitionsFitTogether) {
    // Two 4g do not fit one H200: mig::check_layout says so where partitions are made.
    const Layout l = Layout::parse("4g.71gb+4g.71gb", h200());
    EXPECT_EQ(l.size(), 2u);
    EXPECT_FALSE(mig::check_layout(l.terms(), h200()).layout);
}

}  // namespace
}  // namespace migscope::partition
