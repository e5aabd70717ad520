// Tests of the string helpers.
#include "core/text.h"

#include <gtest/gtest.h>

using namespace migscope::text;

TEST(Text, TrimRemovesOuterWhitespaceOnly) {
    EXPECT_EQ(trim("  a b \t\n"), "a b");
    EXPECT_EQ(trim(""), "");
    EXPECT_EQ(trim("   "), "");
}

TEST(Text, SplitKeepsEmptyFields) {
    EXPECT_EQ(split("a++b", '+'), (std::vector<std::string>{"a", "", "b"}));
    EXPECT_EQ(split("a", '+'), (std::vector<std::string>{"a"}));
    EXPECT_EQ(split("a+", '+'), (std::vector<std::string>{"a", ""}));
}

TEST(Text, ParseUintAcceptsOnlyWholeNumbers) {
    unsigned v = 0;
    EXPECT_TRUE(parse_uint("42", v));
    EXPECT_EQ(v, 42u);
    EXPECT_FALSE(parse_uint("4x", v));
    EXPECT_FALSE(parse_uint("", v));
    EXPECT_FALSE(parse_uint("-1", v));
}

TEST(Text, LowerAndStartsWith) {
    EXPECT_EQ(lower("H200-NVL"), "h200-nvl");
    EXPECT_TRUE(starts_with("me.all", "me"));
    EXPECT_FALSE(starts_with("m", "me"));
}

TEST(Text, ClosestOffersTheNearestKnownWordForATypo) {
    const std::vector<std::string> known = {"resnet18", "resnet50", "bert-base", "--jobs",
                                            "--objective"};
    EXPECT_EQ(closest("resnet81", known), "resnet18");  // two neighbours swapped: one edit
    EXPECT_EQ(closest("--job", known), "--jobs");
    EXPECT_EQ(closest("--objectiv", known), "--objective");
    EXPECT_EQ(closest("bert_base", known), "bert-base");
    EXPECT_FALSE(closest("resnet18", known));   // known already: nothing to suggest
    EXPECT_FALSE(closest("--frobnicate", known));  // too far from everything
    EXPECT_FALSE(closest("", known));
    EXPECT_FALSE(closest("x", {"yy"}));  // one character may change one, not two
    EXPECT_FALSE(closest("resnet50", {"resnet18"}));  // another real name, not a typo of it
    EXPECT_EQ(did_you_mean("resnet5", known), " (did you mean 'resnet50'?)");
    EXPECT_EQ(did_you_mean("gpt", known), "");
}
