// Tests of the plan file reader's errors: each names the file and the field, in the strict
// reader's words.
#include "runner/plan_file.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace migscope::runner {
namespace {

std::string message_of(const std::string& text) {
    try {
        parse_plan_file(text, "p.json", PlanFileOptions{});
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "accepted";
}

TEST(PlanFile, MissingFieldsAndWrongTypesAreNamedWithTheFileAndPath) {
    EXPECT_EQ(message_of("{}"),
              "p.json: backend: missing field (is this a `migscope plan --format json` file of "
              "this version?)");
    EXPECT_EQ(message_of(R"({"backend": 3})"),
              "p.json: backend: wrong type: expected a string, got an integer");
    EXPECT_EQ(message_of(R"({"backend": "mig", "jobs": {}})"),
              "p.json: jobs: wrong type: expected an array, got an object");
}

}  // namespace
}  // namespace migscope::runner
