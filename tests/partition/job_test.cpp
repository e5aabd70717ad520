// Job lists: the command-line syntax and strict JSON files.
#include "partition/job.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"

namespace migscope::partition {
namespace {

TEST(JobList, ParsesWorkloadModeAndBatchAndNamesRepeatsUniquely) {
    const auto jobs =
        parse_job_list("resnet50, bert-base:finetune,resnet18:32,resnet18:finetune:8");
    ASSERT_EQ(jobs.size(), 4u);
    EXPECT_EQ(jobs[0].workload, "resnet50");
    EXPECT_EQ(jobs[0].mode, "train");
    EXPECT_FALSE(jobs[0].batch);
    EXPECT_EQ(jobs[1].mode, "finetune");
    EXPECT_EQ(jobs[1].name, "bert-base-ft");
    EXPECT_EQ(jobs[2].batch, 32);
    EXPECT_EQ(jobs[2].name, "resnet18");
    EXPECT_EQ(jobs[3].batch, 8);
    EXPECT_EQ(jobs[3].name, "resnet18-ft");
    const auto same = parse_job_list("resnet18,resnet18");
    EXPECT_EQ(same[1].name, "resnet18#2");
    // A name made unique never takes one a job was given (their logs are named by them).
    std::vector<JobSpec> given(3);
    given[0].name = given[1].name = "a";
    given[2].name = "a#2";
    make_names_unique(given);
    EXPECT_EQ(given[1].name, "a#3");
    EXPECT_EQ(given[2].name, "a#2");
}

TEST(JobList, RejectsBadItemsNamingThem) {
    for (const char* bad : {"resnet18,", "resnet18:fast", "resnet18:0", "a:train:8:9", ":8"}) {
        try {
            parse_job_list(bad);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput) << bad;
        }
    }
    try {
        parse_job_list("resnet18:fast");
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("fast"), std::string::npos);
    }
}

// Job names are text shown in tables, logs and figures: control characters are refused wherever a
// name comes from (a --jobs item, a jobs file's name, workload or default from its command),
// naming the field; so is a name over kMaxJobNameBytes.
TEST(JobNames, ControlCharactersAndOverlongNamesAreRefusedNamingTheField) {
    const auto error_of = [](auto&& parse) {
        try {
            parse();
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(error_of([] {
                  parse_job_list("resnet18,evil\n!touch X");
              }).find("job 'evil\\n!touch X': a job name cannot hold control characters"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_jobs_json(R"({"jobs": [{"command": ["x"], "name": "a\u001b[31m"}]})",
                                  "f.json");
              }).find("f.json: jobs[0].name: a job name cannot hold control characters (byte 27"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_jobs_json(R"({"jobs": [{"command": ["/bin/x\ty"]}]})", "f.json");
              }).find("jobs[0].name: a job name cannot hold control characters"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_jobs_json(R"({"jobs": [{"workload": "x\u007f"}]})", "f.json");
              }).find("jobs[0].workload"),
              std::string::npos);
    // C1 controls (U+009B is a terminal's CSI) and the bidirectional overrides, which print the
    // text after them reversed.
    EXPECT_NE(error_of([] {
                  parse_jobs_json(R"({"jobs": [{"command": ["x"], "name": "a\u009b31m"}]})",
                                  "f.json");
              })
                  .find("jobs[0].name: a job name cannot hold control characters (byte 194 at "
                        "offset 1)"),
              std::string::npos);
    for (const char* bidi : {"\\u202e", "\\u2066", "\\u202a"}) {
        EXPECT_NE(error_of([&] {
                      parse_jobs_json(std::string(R"({"jobs": [{"command": ["x"], "name": "gpt)") +
                                          bidi + "cod\"}]}",
                                      "f.json");
                  })
                      .find("jobs[0].name: a job name cannot hold bidirectional formatting "
                            "characters (U+202A-U+202E, U+2066-U+2069; at offset 3)"),
                  std::string::npos)
            << bidi;
    }
    EXPECT_EQ(
        parse_jobs_json(R"({"jobs": [{"command": ["x"], "name": "a\u2019s"}]})", "f.json")[0].name,
        "a\u2019s");  // other punctuation of that block stays text
    const std::string long_name(kMaxJobNameBytes + 1, 'n');
    EXPECT_NE(error_of([&] {
                  parse_jobs_json(R"({"jobs": [{"command": ["x"], "name": ")" + long_name + "\"}]}",
                                  "f.json");
              }).find("at most 255 bytes"),
              std::string::npos);
    // What a name may hold: any other text, UTF-8 included.
    EXPECT_EQ(parse_jobs_json(R"({"jobs": [{"command": ["x"], "name": "día 1 <b>'\"</b>"}]})",
                              "f.json")[0]
                  .name,
              "día 1 <b>'\"</b>");
}

// A number no double holds is bad JSON naming the file (it was an internal error).
TEST(JobsJson, ANumberOutOfRangeIsBadInput) {
    try {
        parse_jobs_json(R"({"jobs": [{"workload": "mlp", "batch": 1e400}]})", "f.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("f.json: not valid JSON"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("1e400"), std::string::npos);
    }
}

// A key one object gives twice is refused: nlohmann-json alone kept the last value silently. The
// same key in two objects is no repeat.
TEST(JobsJson, AKeyGivenTwiceInOneObjectIsBadInput) {
    try {
        parse_jobs_json(R"({"jobs": [{"workload": "mlp", "batch": 1, "batch": 64}]})", "f.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_EQ(std::string(e.what()),
                  "f.json: not valid JSON: the key \"batch\" is given twice in one object");
    }
    EXPECT_EQ(parse_jobs_json(R"({"jobs": [{"workload": "mlp", "batch": 1},
                                            {"workload": "mlp", "batch": 2, "name": "b"}]})",
                              "f.json")
                  .size(),
              2u);
}

TEST(JobsJson, ReadsBuiltInAndExternalJobs) {
    const auto jobs = parse_jobs_json(R"({"jobs": [
        {"workload": "gpt2-medium", "mode": "finetune", "batch": 4, "lora_rank": 16,
         "checkpoint": "base.safetensors"},
        {"command": ["python3", "train.py", "--fast"], "name": "mine", "item_unit": "images"}]})",
                                      "jobs.json");
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_FALSE(jobs[0].item_unit);
    EXPECT_EQ(jobs[1].item_unit, "images");
    EXPECT_EQ(jobs[0].lora_rank, 16);
    EXPECT_EQ(jobs[0].checkpoint, "base.safetensors");
    EXPECT_TRUE(jobs[1].external());
    EXPECT_EQ(jobs[1].command.size(), 3u);
    EXPECT_EQ(jobs[1].name, "mine");
}

TEST(JobsJson, ListAndFileTogetherKeepTheListFirstWithUniqueNames) {
    const std::string file = ::testing::TempDir() + "/jobs-from-options.json";
    std::ofstream(file) << R"({"jobs": [{"workload": "resnet18"}, {"command": ["x"], "name": "x"}]})";
    const auto jobs = jobs_from_options("resnet18,bert-base", file);
    ASSERT_EQ(jobs.size(), 4u);
    EXPECT_EQ(jobs[0].name, "resnet18");
    EXPECT_EQ(jobs[2].name, "resnet18#2");  // the file's, renamed
    EXPECT_TRUE(jobs[3].external());
    EXPECT_EQ(jobs_from_options("", file).size(), 2u);
    EXPECT_EQ(jobs_from_options("mlp", "").size(), 1u);
    EXPECT_THROW(jobs_from_options("", ""), Error);
}

TEST(JobsJson, RejectsUnknownKeysWithTheirPath) {
    try {
        parse_jobs_json(R"({"jobs": [{"workload": "resnet18"}, {"workload": "x", "bach": 3}]})",
                        "jobs.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "jobs.json: jobs[1].bach: unexpected field (did you mean 'batch'?; expected one "
                  "of: workload, name, mode, batch, lora_rank, data, checkpoint, item_unit, "
                  "command)");
    }
    const auto message_of = [](const std::string& text) {
        try {
            parse_jobs_json(text, "f.json");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message_of(R"({"jobs": [], "extra": 1})"),
              "f.json: extra: unexpected field (expected one of: jobs)");
    EXPECT_EQ(message_of(R"({})"), "f.json: jobs: missing field");
    EXPECT_EQ(message_of(R"({"jobs": {}})"),
              "f.json: jobs: wrong type: expected an array, got an object");
    EXPECT_EQ(message_of(R"({"jobs": [3]})"),
              "f.json: jobs[0]: wrong type: expected an object, got an integer");
    EXPECT_EQ(message_of(R"({"jobs": [{"workload": "mlp", "batch": "8"}]})"),
              "f.json: jobs[0].batch: wrong type: expected an integer, got a string");
    EXPECT_EQ(message_of(R"({"jobs": [{"workload": 3}]})"),
              "f.json: jobs[0].workload: wrong type: expected a string, got an integer");
    EXPECT_EQ(message_of(R"({"jobs": [{"workload": "mlp", "b\nx": 1}]})"),
              "f.json: jobs[0].b\\nx: unexpected field (expected one of: workload, name, mode, "
              "batch, lora_rank, data, checkpoint, item_unit, command)");
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"workload": "a", "command": ["b"]}]})", "f"), Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"command": ["b"], "batch": 3}]})", "f"), Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"command": ["b"], "checkpoint": "c"}]})", "f"),
                 Error);
    // A built-in workload reports its own unit.
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"workload": "mlp", "item_unit": "x"}]})", "f"),
                 Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [{"command": ["b"], "item_unit": "a\nb"}]})", "f"),
                 Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": []})", "f"), Error);
    EXPECT_THROW(parse_jobs_json(R"({"jobs": [], "extra": 1})", "f"), Error);
    EXPECT_THROW(parse_jobs_json("{not json", "f"), Error);
}

}  // namespace
}  // namespace migscope::partition
