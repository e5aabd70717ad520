// The trace format: valid files, every input error naming its field, write -> read round trips.
#include "stream/trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"

namespace migscope::stream {
namespace {

Trace parse(const std::string& jobs, const std::string& top = "\"version\": 1") {
    return parse_trace_json("{" + top + ", \"jobs\": [" + jobs + "]}", "t.json");
}

// The message of the input error parsing `jobs` throws ("" when none is thrown).
std::string error_of(const std::string& jobs, const std::string& top = "\"version\": 1") {
    try {
        parse(jobs, top);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
        return e.what();
    }
    return "";
}

TEST(Trace, ReadsBuiltInAndCommandJobsWithTheirAmounts) {
    const Trace t = parse(
        R"({"arrival_s": 0, "workload": "resnet50", "batch": 64, "work": 500},
           {"arrival_s": 12.5, "workload": "bert-base", "mode": "finetune", "duration_s": 600,
            "deadline_s": 1800, "priority": 3, "_note": "a comment"},
           {"arrival_s": 12.5, "name": "mine", "command": ["python3", "train.py"], "work": 7})",
        R"("version": 1, "source": "hand-written")");
    ASSERT_EQ(t.jobs.size(), 3u);
    EXPECT_EQ(t.source, "hand-written");
    EXPECT_EQ(t.jobs[0].job.workload, "resnet50");
    EXPECT_EQ(t.jobs[0].job.batch, 64);
    EXPECT_EQ(t.jobs[0].work_steps, 500);
    EXPECT_FALSE(t.jobs[0].duration_s);
    EXPECT_EQ(t.jobs[0].priority, 0);
    EXPECT_EQ(t.jobs[1].job.mode, "finetune");
    EXPECT_DOUBLE_EQ(*t.jobs[1].duration_s, 600);
    EXPECT_DOUBLE_EQ(*t.jobs[1].deadline_s, 1800);
    EXPECT_EQ(t.jobs[1].priority, 3);
    EXPECT_EQ(t.jobs[2].job.name, "mine");
    EXPECT_EQ(t.jobs[2].job.command, (std::vector<std::string>{"python3", "train.py"}));
    EXPECT_DOUBLE_EQ(t.jobs[2].arrival_s, 12.5);  // a tie with the job above is sorted
}

TEST(Trace, RepeatedNamesAreMadeUniqueAsInAJobsFile) {
    const Trace t = parse(R"({"arrival_s": 0, "workload": "resnet50", "work": 1},
                             {"arrival_s": 1, "workload": "resnet50", "work": 1},
                             {"arrival_s": 2, "name": "resnet50", "command": ["x"], "work": 1})");
    EXPECT_EQ(t.jobs[0].job.name, "resnet50");
    EXPECT_EQ(t.jobs[1].job.name, "resnet50#2");
    EXPECT_EQ(t.jobs[2].job.name, "resnet50#3");
}

TEST(Trace, EveryErrorNamesItsField) {
    const std::string ok = R"("arrival_s": 0, "workload": "resnet50", "work": 10)";
    struct Case {
        std::string jobs, top, expected;
    };
    const Case cases[] = {
        {"{" + ok + ", \"bach\": 3}", "\"version\": 1",
         "t.json: jobs[0].bach: unexpected field (did you mean 'batch'?; expected one of: "
         "workload, "
         "name, mode, batch, lora_rank, data, checkpoint, item_unit, command, arrival_s, work, "
         "duration_s, deadline_s, priority)"},
        {"{" + ok + "}", "\"version\": 1, \"extra\": 2",
         "t.json: extra: unexpected field (expected one of: version, source, jobs)"},
        {"{" + ok + "}", "\"version\": 2", "t.json: version: 2 is not 1"},
        {"{" + ok + "}", "\"format\": 1", "t.json: version: missing"},
        {"", "\"version\": 1", "t.json: jobs: no jobs"},
        {R"({"arrival_s": 0, "workload": "resnet51", "work": 10})", "\"version\": 1",
         "t.json: jobs[0].workload: unknown workload 'resnet51'"},
        {"{" + ok + "}, " + R"({"arrival_s": -1, "workload": "resnet50", "work": 10})",
         "\"version\": 1", "t.json: jobs[1].arrival_s: must not be negative"},
        {R"({"arrival_s": 5, "workload": "resnet50", "work": 10},
            {"arrival_s": 4, "workload": "resnet50", "work": 10})",
         "\"version\": 1",
         "t.json: jobs[1].arrival_s: 4 is before jobs[0].arrival_s 5: a trace is sorted"},
        {R"({"arrival_s": 5, "workload": "resnet50", "duration_s": 10, "deadline_s": 4})",
         "\"version\": 1", "t.json: jobs[0].deadline_s: 4 is not after the job's arrival_s 5"},
        {R"({"arrival_s": 5, "workload": "resnet50", "duration_s": 10, "deadline_s": 5})",
         "\"version\": 1", "t.json: jobs[0].deadline_s: 5 is not after"},
        {R"({"arrival_s": 0, "workload": "resnet50", "work": 10, "duration_s": 3})",
         "\"version\": 1",
         "t.json: jobs[0]: give exactly one of \"work\" (steps) and \"duration_s\""},
        {R"({"arrival_s": 0, "workload": "resnet50"})", "\"version\": 1",
         "t.json: jobs[0]: give exactly one of \"work\""},
        {R"({"arrival_s": 0, "workload": "resnet50", "work": 0})", "\"version\": 1",
         "t.json: jobs[0].work: must be a whole number of steps from 1 to 1e15, not 0"},
        {R"({"arrival_s": 0, "workload": "resnet50", "work": 9223372036854775807})",
         "\"version\": 1", "t.json: jobs[0].work: must be a whole number of steps from 1 to 1e15"},
        {R"({"arrival_s": 1e300, "workload": "resnet50", "work": 10})", "\"version\": 1",
         "t.json: jobs[0].arrival_s: 1e+300 s is beyond the 1000000000 s (31.7 years)"},
        {R"({"arrival_s": 0, "workload": "resnet50", "duration_s": 1.7e308})", "\"version\": 1",
         "t.json: jobs[0].duration_s: 1.7e+308 s is beyond"},
        {R"({"arrival_s": 0, "workload": "resnet50", "duration_s": 10, "deadline_s": 2e9})",
         "\"version\": 1", "t.json: jobs[0].deadline_s: 2000000000 s is beyond"},
        {R"({"arrival_s": 0, "workload": "resnet50", "work": 10, "arrival_s": 5})",
         "\"version\": 1",
         "t.json: not valid JSON: the key \"arrival_s\" is given twice in one object"},
        {R"({"arrival_s": 0, "workload": "resnet50", "work": 2.5})", "\"version\": 1",
         "t.json: jobs[0].work: wrong type"},
        {R"({"arrival_s": 0, "workload": "resnet50", "duration_s": -2})", "\"version\": 1",
         "t.json: jobs[0].duration_s: must not be negative"},
        {R"({"arrival_s": 0, "workload": "resnet50", "duration_s": 0})", "\"version\": 1",
         "t.json: jobs[0].duration_s: must be above zero"},
        {R"({"workload": "resnet50", "work": 1})", "\"version\": 1",
         "t.json: jobs[0].arrival_s: missing"},
        {R"({"arrival_s": "0", "workload": "resnet50", "work": 1})", "\"version\": 1",
         "t.json: jobs[0].arrival_s: wrong type: expected a number, got a string"},
        {R"({"arrival_s": 0, "work": 1})", "\"version\": 1",
         "t.json: jobs[0]: give exactly one of \"workload\" and \"command\""},
        {R"({"arrival_s": 0, "workload": "resnet50", "mode": "tune", "work": 1})", "\"version\": 1",
         "t.json: jobs[0].mode: mode 'tune' is not train or finetune"},
    };
    for (const Case& c : cases) {
        const std::string message = error_of(c.jobs, c.top);
        EXPECT_EQ(message.rfind(c.expected, 0), 0u)
            << "expected a message starting with: " << c.expected << "\n got: " << message;
    }
}

TEST(Trace, ADocumentThatIsNoObjectIsNamed) {
    try {
        parse_trace_json("[1, 2]", "t.json");
        FAIL() << "an array accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "t.json: expected an object with \"version\" and \"jobs\"");
    }
    EXPECT_THROW(parse_trace_json(R"({"version": 1, "jobs": [3]})", "t.json"), Error);
    EXPECT_THROW(parse_trace_json(R"({"version": 1, "jobs": {}})", "t.json"), Error);
}

TEST(Trace, NonFiniteAndHugeNumbersAreRefused) {
    // JSON has no NaN or infinity; a number beyond a double is not valid JSON for the reader.
    EXPECT_NE(error_of(R"({"arrival_s": NaN, "workload": "resnet50", "work": 1})")
                  .find("t.json: not valid JSON"),
              std::string::npos);
    EXPECT_NE(error_of(R"({"arrival_s": 1e400, "workload": "resnet50", "work": 1})")
                  .find("t.json: not valid JSON"),
              std::string::npos);
    // check_trace sees what code makes, NaN included.
    Trace t;
    t.jobs.resize(1);
    t.jobs[0].job.workload = "resnet50";
    t.jobs[0].job.name = "r";
    t.jobs[0].arrival_s = std::nan("");
    t.jobs[0].work_steps = 1;
    try {
        check_trace(t, "made");
        FAIL() << "NaN arrival accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "made: jobs[0].arrival_s: must be a finite number of seconds");
    }
}

TEST(Trace, WriteThenReadGivesTheSameTrace) {
    Trace t;
    t.source = "test";
    TraceJob a;
    a.arrival_s = 0.1;  // not exact in binary: must come back bit for bit
    a.job.workload = "gpt2-xl";
    a.job.mode = "finetune";
    a.job.name = "gpt2-xl-ft";
    a.job.lora_rank = 16;
    a.work_steps = 123456789012;
    TraceJob b;
    b.arrival_s = 1.0 / 3.0;
    b.job.name = "own \"job\"; rm -rf /";  // a name stays text, quotes and all
    b.job.command = {"python3", "-c", "print('hi')"};
    b.job.item_unit = "samples";
    b.duration_s = 2.0 / 7.0;
    b.deadline_s = 99.25;
    b.priority = -2;
    t.jobs = {a, b};
    const std::string text = write_trace_json(t);
    const Trace back = parse_trace_json(text, "round");
    ASSERT_EQ(back.jobs.size(), 2u);
    EXPECT_EQ(back.source, "test");
    EXPECT_EQ(back.jobs[0].arrival_s, 0.1);
    EXPECT_EQ(back.jobs[0].job.workload, "gpt2-xl");
    EXPECT_EQ(back.jobs[0].job.mode, "finetune");
    EXPECT_EQ(back.jobs[0].job.lora_rank, 16);
    EXPECT_EQ(back.jobs[0].work_steps, 123456789012);
    EXPECT_EQ(back.jobs[1].arrival_s, 1.0 / 3.0);
    EXPECT_EQ(back.jobs[1].job.name, b.job.name);
    EXPECT_EQ(back.jobs[1].job.command, b.job.command);
    EXPECT_EQ(back.jobs[1].job.item_unit, "samples");
    EXPECT_EQ(back.jobs[1].duration_s, 2.0 / 7.0);
    EXPECT_EQ(back.jobs[1].deadline_s, 99.25);
    EXPECT_EQ(back.jobs[1].priority, -2);
    EXPECT_EQ(write_trace_json(back), text);  // and writes back the same text
}

TEST(Trace, SummaryCountsSpanRateAndWorkloads) {
    const Trace t = parse(R"({"arrival_s": 100, "workload": "resnet50", "work": 10},
                             {"arrival_s": 1900, "workload": "bert-base", "mode": "finetune", "duration_s": 60, "deadline_s": 4000},
                             {"arrival_s": 3700, "workload": "resnet50", "work": 30},
                             {"arrival_s": 3700, "name": "x", "command": ["x"], "duration_s": 40})");
    const TraceSummary s = summarize(t);
    EXPECT_EQ(s.jobs, 4);
    EXPECT_DOUBLE_EQ(s.span_s, 3600);
    EXPECT_DOUBLE_EQ(s.arrival_rate_per_h, 3);  // three gaps in one hour
    EXPECT_EQ(s.jobs_with_work, 2);
    EXPECT_DOUBLE_EQ(s.total_work_steps, 40);
    EXPECT_EQ(s.jobs_with_duration, 2);
    EXPECT_DOUBLE_EQ(s.total_duration_s, 100);
    EXPECT_EQ(s.jobs_with_deadline, 1);
    ASSERT_EQ(s.workloads.size(), 3u);
    EXPECT_EQ(s.workloads[0].workload, "resnet50");
    EXPECT_EQ(s.workloads[0].jobs, 2);
    EXPECT_EQ(s.workloads[1].workload, "bert-base:finetune");
    EXPECT_EQ(s.workloads[2].workload, "command");
}

}  // namespace
}  // namespace migscope::stream
