// Tests of the strict reader's nlohmann-json adapter (core/json_fields.h).
#include "core/json_fields.h"

#include <gtest/gtest.h>

using namespace migscope;
using nlohmann::json;

namespace {

template <typename F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(JsonFields, ReadsTypedFieldsAndRefusesTheRest) {
    const json j = json::parse(R"({"name": "a", "batch": 8, "ratio": 0.5, "_comment": "x"})");
    Fields f(j, "jobs[1]");
    EXPECT_EQ(f.get<std::string>("name"), "a");
    EXPECT_EQ(f.get<int>("batch"), 8);
    EXPECT_EQ(f.optional<double>("ratio"), 0.5);
    EXPECT_EQ(f.optional<double>("absent"), std::nullopt);
    EXPECT_NO_THROW(f.check_keys());  // "_comment" is a comment

    const json typo = json::parse(R"({"workload": "a", "bach": 8})");
    Fields g(typo, "jobs[2]");
    g.get<std::string>("workload");
    g.optional<int>("batch");
    EXPECT_EQ(message_of([&] { g.check_keys(); }),
              "jobs[2].bach: unexpected field (did you mean 'batch'?; expected one of: workload, "
              "batch)");
}

TEST(JsonFields, MissingFieldAndWrongTypeNameThePath) {
    const json j = json::parse(R"({"batch": "8", "n": 1.5})");
    Fields f(j, "jobs[0]");
    EXPECT_EQ(message_of([&] { f.get<std::string>("workload"); }),
              "jobs[0].workload: missing field");
    EXPECT_EQ(message_of([&] { f.get<int>("batch"); }),
              "jobs[0].batch: wrong type: expected an integer, got a string");
    EXPECT_EQ(message_of([&] { f.get<int>("n"); }),
              "jobs[0].n: wrong type: expected an integer, got a number");
    EXPECT_EQ(message_of([&] { Fields top(json::array(), ""); }),
              "(top level): wrong type: expected an object, got an array");
    EXPECT_EQ(message_of([&] { Fields p(json(3), "provenance"); }),
              "provenance: wrong type: expected an object, got an integer");
}

TEST(JsonFields, AVersionedDocumentsHeaderIsItsFormatAndVersion) {
    const auto header = [](const std::string& text) {
        return message_of([&] {
            const json j = json::parse(text);
            Fields top(j, "");
            top.require_format("migscope-x", 1);
            top.check_keys();  // "format" and "version" are expected fields
        });
    };
    EXPECT_EQ(header(R"({"format": "migscope-x", "version": 1})"), "(no error)");
    EXPECT_EQ(header(R"({"format": "migscope-y", "version": 1})"),
              "expected format \"migscope-x\" version 1, got \"migscope-y\" version 1");
    EXPECT_EQ(header(R"({"format": "migscope-x", "version": 2})"),
              "expected format \"migscope-x\" version 1, got \"migscope-x\" version 2");
    EXPECT_EQ(header(R"({"version": 1})"), "format: missing field");
    EXPECT_EQ(header(R"({"format": "migscope-x", "version": "1"})"),
              "version: wrong type: expected an integer, got a string");
}

TEST(JsonFields, AnArrayFieldMustBeAnArray) {
    const json j = json::parse(R"({"jobs": [1, 2], "sources": "a"})");
    Fields f(j, "plan");
    EXPECT_EQ(f.array("jobs").size(), 2u);
    EXPECT_EQ(message_of([&] { f.array("sources"); }),
              "plan.sources: wrong type: expected an array, got a string");
    EXPECT_EQ(message_of([&] { f.array("absent"); }), "plan.absent: missing field");
}

TEST(JsonFields, CheckJsonKeysUsesTheGivenExpectations) {
    const json j = json::parse(R"({"jobs": [], "extra": 1})");
    EXPECT_EQ(message_of([&] { check_json_keys(j, "", strict::Expected{"jobs"}); }),
              "extra: unexpected field (expected one of: jobs)");
    EXPECT_EQ(message_of([&] {
                  check_json_keys(j, "", strict::Expected{"jobs", "extra"});
              }),
              "(no error)");
}
