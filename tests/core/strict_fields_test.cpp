// Tests of the strict readers' one wording of their errors and of the expected-field bookkeeping.
#include "core/strict_fields.h"

#include <gtest/gtest.h>

using namespace migscope;
using namespace migscope::strict;

namespace {

template <typename F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(StrictFields, PathsJoinKeysAndIndicesAndShowKeysEscaped) {
    EXPECT_EQ(field_path("", "jobs"), "jobs");
    EXPECT_EQ(field_path("jobs[2]", "batch"), "jobs[2].batch");
    EXPECT_EQ(item_path("jobs", 2), "jobs[2]");
    EXPECT_EQ(field_path("", "a\nb"), "a\\nb");  // a key from the user, shown escaped
    EXPECT_EQ(field_path("", std::string(100, 'k')), std::string(64, 'k') + "…");
}

TEST(StrictFields, TheThreeErrorsAreWordedOnce) {
    EXPECT_EQ(std::string(missing_field("jobs[0].workload").what()),
              "jobs[0].workload: missing field");
    EXPECT_EQ(std::string(missing_field("device", "cpu, cuda or cuda:N").what()),
              "device: missing field (cpu, cuda or cuda:N)");
    EXPECT_EQ(std::string(wrong_type("jobs[0].batch", "an integer", "a string").what()),
              "jobs[0].batch: wrong type: expected an integer, got a string");
    EXPECT_EQ(std::string(unexpected_field("x.colour", "colour", {"name", "jobs"}).what()),
              "x.colour: unexpected field (expected one of: name, jobs)");
    EXPECT_EQ(std::string(wrong_format("migscope-profiles", 1, "migscope-model-error", 2).what()),
              "expected format \"migscope-profiles\" version 1, got \"migscope-model-error\" "
              "version 2");
    EXPECT_EQ(std::string(wrong_format("f", 1, "a\nb", 1).what()),  // the user's text escaped
              "expected format \"f\" version 1, got \"a\\nb\" version 1");
    EXPECT_EQ(std::string(unexpected_field("x.y", "y", {}).what()),
              "x.y: unexpected field (expected none)");
    EXPECT_EQ(missing_field("x").kind(), ErrorKind::kInput);
}

TEST(StrictFields, UnexpectedFieldSuggestsTheNearestExpectedOrGivesTheNote) {
    EXPECT_EQ(std::string(unexpected_field("jobs[2].bach", "bach", {"workload", "batch"}).what()),
              "jobs[2].bach: unexpected field (did you mean 'batch'?; expected one of: workload, "
              "batch)");
    EXPECT_EQ(std::string(unexpected_field("jobs[0].model", "model", {"workload"},
                                           "the workload's key is \"workload\"")
                              .what()),
              "jobs[0].model: unexpected field (the workload's key is \"workload\"; expected one "
              "of: workload)");
}

TEST(StrictFields, ExpectedChecksKeysAndAllowsCommentsOnlyWhereAsked) {
    Expected strict_keys{"a", "b"};
    strict_keys.expect("c");
    strict_keys.expect("a");  // once in the list
    EXPECT_EQ(strict_keys.keys(), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_NO_THROW(strict_keys.check("b", "x.b"));
    EXPECT_EQ(message_of([&] { strict_keys.check("_note", "x._note"); }),
              "x._note: unexpected field (expected one of: a, b, c)");
    const Expected with_comments({"a"}, Expected::Comments::kAllowed);
    EXPECT_NO_THROW(with_comments.check("_note", "x._note"));
    EXPECT_EQ(message_of([&] { with_comments.check("other", "x.other"); }),
              "x.other: unexpected field (expected one of: a)");
}
