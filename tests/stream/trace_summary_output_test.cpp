// Tests of `stream check`'s output: a trace's summary as JSON and as text, its workloads listed up
// to eight.
#include "stream/trace_summary_output.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/golden.h"

namespace migscope::stream {
namespace {

// Four jobs over an hour: two in steps, two in seconds, one due.
Trace small_trace() {
    return parse_trace_json(R"({"version": 1, "source": "sacct\u001b", "jobs": [
        {"arrival_s": 100, "workload": "resnet50", "work": 10},
        {"arrival_s": 1900, "workload": "bert-base", "mode": "finetune", "duration_s": 60,
         "deadline_s": 4000},
        {"arrival_s": 3700, "workload": "resnet50", "work": 30},
        {"arrival_s": 3700, "name": "x", "command": ["x"], "duration_s": 40}]})",
                            "small.json");
}

std::string summary_text(const std::string& path, const Trace& trace) {
    std::ostringstream out;
    write_trace_summary(path, trace, out);
    return out.str();
}

TEST(TraceSummaryOutput, JsonHasEveryFigureAndTheWorkloads) {
    const nlohmann::ordered_json j = trace_summary_json("traces/small.json", small_trace());
    EXPECT_EQ(j["file"], "traces/small.json");
    EXPECT_EQ(j["version"], kTraceVersion);
    EXPECT_EQ(j["source"], "sacct\x1b");
    EXPECT_EQ(j["jobs"], 4);
    EXPECT_EQ(j["span_s"], 3600.0);
    EXPECT_EQ(j["arrival_rate_per_h"], 3.0);
    EXPECT_EQ(j["total_work_steps"], 40.0);
    EXPECT_EQ(j["total_duration_s"], 100.0);
    EXPECT_EQ(j["jobs_with_deadline"], 1);
    EXPECT_EQ(j["workloads"].dump(), R"({"resnet50":2,"bert-base:finetune":1,"command":1})");
}

TEST(TraceSummaryOutput, TextSaysTheTraceIsValidAndSummarizesIt) {
    EXPECT_EQ(summary_text("traces/small\n.json", small_trace()),
              "traces/small\\n.json: valid trace (version 1), 4 jobs\n"
              "  source      sacct\\x1b\n"
              "  arrivals    100 s to 61.7 min (span 60 min), 3 per hour\n"
              "  amounts     2 in steps (total 40), 2 in seconds (total 100 s)\n"
              "  deadlines   1 jobs\n"
              "  workloads   resnet50 2, bert-base:finetune 1, command 1\n");
}

TEST(TraceSummaryOutput, TextListsEightWorkloadsAndCountsTheRest) {
    Trace trace;
    for (const char* workload :
         {"resnet18", "resnet50", "vit-b16", "bert-base", "gpt2-medium", "gpt2-tiny", "mlp",
          "resnet18:finetune", "resnet50:finetune", "bert-base:finetune"}) {
        std::string text = workload;
        TraceJob job;
        job.job.workload = text.substr(0, text.find(':'));
        job.job.mode = text.find(':') == std::string::npos ? "train" : "finetune";
        job.work_steps = 1;
        trace.jobs.push_back(job);
    }
    const std::string text = summary_text("t.json", trace);
    EXPECT_NE(text.find("  workloads   "), std::string::npos) << text;
    EXPECT_NE(text.find(", 2 more\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("  source"), std::string::npos) << text;  // none given
}

TEST(TraceSummaryOutput, EveryFormatMatchesItsGoldenFile) {
    const Trace trace = small_trace();
    const std::string path = "traces/small.json";
    test::expect_golden_formats(trace_summary_printers(), CheckedTrace{path, trace},
                                "stream-check");
}

}  // namespace
}  // namespace migscope::stream
