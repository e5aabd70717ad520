// The readers of job history on hand-written fixtures in Slurm 22.05 sacct and kubectl shapes.
#include "stream/history.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.h"

namespace migscope::stream {
namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(STREAM_TEST_DIR) + "/" + name);
    EXPECT_TRUE(in) << name;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        return e.what();
    }
    return "";
}

bool has_note(const HistoryRead& r, const std::string& part) {
    for (const std::string& n : r.notes) {
        if (n.find(part) != std::string::npos)
            return true;
    }
    return false;
}

TEST(Times, CivilAndRfc3339) {
    EXPECT_EQ(parse_time_s("1970-01-01T00:00:00", false), 0.0);
    EXPECT_EQ(parse_time_s("2024-03-01T00:00:00", false).value() -
                  parse_time_s("2024-02-28T00:00:00", false).value(),
              2 * 86400.0);  // 2024 is a leap year
    EXPECT_EQ(parse_time_s("2024-03-04T10:15:00+01:00", true),
              parse_time_s("2024-03-04T09:15:00Z", true));
    EXPECT_DOUBLE_EQ(parse_time_s("2024-03-04T09:15:00.25Z", true).value() -
                         parse_time_s("2024-03-04T09:15:00Z", true).value(),
                     0.25);
    EXPECT_FALSE(parse_time_s("Unknown", false));
    EXPECT_FALSE(parse_time_s("2024-03-04T09:15:00", true));    // Kubernetes times carry a zone
    EXPECT_FALSE(parse_time_s("2024-03-04T09:15:00Z", false));  // sacct's do not
    EXPECT_FALSE(parse_time_s("2024-13-04T09:15:00", false));
    // Days past the month's end and zones past 23:59 are no times.
    EXPECT_FALSE(parse_time_s("2024-02-30T00:00:00", false));
    EXPECT_FALSE(parse_time_s("2023-02-29T00:00:00", false));
    EXPECT_TRUE(parse_time_s("2024-02-29T00:00:00", false));
    EXPECT_FALSE(parse_time_s("2024-04-31T00:00:00", false));
    EXPECT_FALSE(parse_time_s("2024-03-04T09:15:00+25:00", true));
    EXPECT_FALSE(parse_time_s("2024-03-04T09:15:00+01:60", true));
    EXPECT_EQ(parse_slurm_duration_s("00:50:36"), 3036.0);
    EXPECT_EQ(parse_slurm_duration_s("1-01:00:00"), 90000.0);
    EXPECT_EQ(parse_slurm_duration_s("05:07"), 307.0);
    EXPECT_DOUBLE_EQ(parse_slurm_duration_s("00:01.500").value(), 1.5);
    EXPECT_FALSE(parse_slurm_duration_s("UNLIMITED"));
    EXPECT_FALSE(parse_slurm_duration_s("1:2:3:4"));
    EXPECT_FALSE(parse_slurm_duration_s("00:99:99"));  // minutes and seconds below 60
    EXPECT_FALSE(parse_slurm_duration_s("00:00:60"));
    EXPECT_FALSE(parse_slurm_duration_s("1-24:00:00"));  // with days, hours below 24
    EXPECT_EQ(parse_slurm_duration_s("1-23:59:59"), 86400.0 + 86399);
}

TEST(Sacct, KeepsGpuJobsThatRanAndSkipsSteps) {
    const HistoryRead r = read_sacct(fixture("sacct-22.05.txt"), "sacct.txt", {});
    // 7 jobs read (steps not counted): 4101 and 4104 are built-in names; bert-ft and train-vit
    // map to none; 4103 has no GPU; 4105 is pending and 4107 running.
    ASSERT_EQ(r.trace.jobs.size(), 2u);
    EXPECT_EQ(r.trace.jobs[0].job.workload, "resnet50");
    EXPECT_EQ(r.trace.jobs[0].arrival_s, 0.0);
    EXPECT_EQ(r.trace.jobs[0].duration_s, 50 * 60 + 36.0);  // Elapsed 00:50:36
    EXPECT_EQ(r.trace.jobs[1].job.workload, "gpt2-xl");
    // Submitted 2024-03-04T23:55:00, 14:42:57 after the first job.
    EXPECT_EQ(r.trace.jobs[1].arrival_s, 14 * 3600 + 42 * 60 + 57.0);
    EXPECT_EQ(r.trace.jobs[1].duration_s, 25 * 3600.0);  // 1-01:00:00, though it timed out
    EXPECT_FALSE(r.trace.jobs[1].deadline_s);            // Timelimit is no deadline
    EXPECT_TRUE(has_note(r, "2 jobs traced of 7 read"));
    EXPECT_TRUE(has_note(r, "skipped 7 job steps"));
    EXPECT_TRUE(has_note(r, "skipped 1 jobs without a GPU"));
    EXPECT_TRUE(has_note(r, "skipped 2 jobs that did not run to an end"));
    EXPECT_TRUE(has_note(r, "skipped 2 jobs whose name maps to no workload"));
    EXPECT_TRUE(has_note(r, "bert-ft x1"));
}

TEST(Sacct, MapsNamesToWorkloads) {
    HistoryOptions o;
    o.rules = parse_name_rules({"bert-ft=bert-base:finetune:16", "train-*=vit-b16"});
    const HistoryRead r = read_sacct(fixture("sacct-22.05.txt"), "sacct.txt", o);
    ASSERT_EQ(r.trace.jobs.size(), 4u);
    EXPECT_EQ(r.trace.jobs[1].job.name, "bert-ft");
    EXPECT_EQ(r.trace.jobs[1].job.workload, "bert-base");
    EXPECT_EQ(r.trace.jobs[1].job.mode, "finetune");
    EXPECT_EQ(r.trace.jobs[1].job.batch, 16);
    EXPECT_EQ(r.trace.jobs[1].arrival_s, 17 * 60 + 57.0);  // 09:30:00 - 09:12:03
    EXPECT_EQ(r.trace.jobs[1].duration_s, 70 * 60.0);
    EXPECT_EQ(r.trace.jobs[2].job.name, "train-vit");  // the array task 4106_1, cancelled
    EXPECT_EQ(r.trace.jobs[2].job.workload, "vit-b16");
    EXPECT_EQ(r.trace.jobs[2].duration_s, 300.0);
    // The trace it makes is a valid trace file.
    const Trace back = parse_trace_json(write_trace_json(r.trace), "back");
    EXPECT_EQ(back.jobs.size(), 4u);
}

TEST(Sacct, BadLinesAreNamedByLineNumber) {
    EXPECT_EQ(error_of([] { read_sacct(fixture("sacct-bad-line.txt"), "s.txt", {}); }),
              "s.txt:3: 9 fields, the header has 8 (a '|' in a job name breaks the columns)");
    const std::string header = "JobID|JobName|Submit|Elapsed|AllocTRES\n";
    EXPECT_EQ(error_of([&] {
                  read_sacct(header + "1|resnet18|yesterday|00:01:00|gres/gpu=1\n", "s.txt", {});
              }),
              "s.txt:2: Submit: 'yesterday' is not a time (YYYY-MM-DDTHH:MM:SS)");
    EXPECT_EQ(error_of([&] {
                  read_sacct(header + "\n1|resnet18|2024-01-01T00:00:00|ages|gres/gpu=1\n", "s.txt",
                             {});
              }),
              "s.txt:3: Elapsed: 'ages' is not a duration ([D-]HH:MM:SS)");
    EXPECT_NE(error_of([] {
                  read_sacct("1|resnet18|2024-01-01T00:00:00|00:01:00\n", "s.txt", {});
              }).find("s.txt:1: the header has no jobid column"),
              std::string::npos);  // --noheader output
    EXPECT_NE(error_of([&] {
                  read_sacct(header + "1|mine|2024-01-01T00:00:00|00:01:00|gres/gpu=1\n", "s.txt",
                             {});
              }).find("s.txt: no job left to trace out of 1 read"),
              std::string::npos);
}

TEST(Sacct, WithoutTresColumnsEveryJobIsKeptAndSaid) {
    const HistoryRead r = read_sacct(
        "JobID|JobName|Submit|Start|End\n7|mlp|2024-01-01T00:00:00|2024-01-01T00:00:10|"
        "2024-01-01T00:01:10\n",
        "s.txt", {});
    ASSERT_EQ(r.trace.jobs.size(), 1u);
    EXPECT_EQ(r.trace.jobs[0].duration_s, 60.0);  // End - Start without Elapsed
    EXPECT_TRUE(has_note(r, "no AllocTRES or ReqTRES column"));
}

// `sacct --duplicates` lists a requeued job once per run under one JobID: the job is traced once.
TEST(Sacct, ARepeatedJobIdIsTracedOnceAndSaid) {
    const std::string header = "JobID|JobName|Submit|Elapsed|AllocTRES\n";
    const HistoryRead r = read_sacct(header +
                                         "5|resnet18|2024-01-01T00:00:00|00:01:00|gres/gpu=1\n"
                                         "5|resnet18|2024-01-01T00:00:00|00:02:00|gres/gpu=1\n",
                                     "s.txt", {});
    ASSERT_EQ(r.trace.jobs.size(), 1u);
    EXPECT_EQ(r.trace.jobs[0].duration_s, 60.0);
    EXPECT_TRUE(has_note(r, "skipped 1 rows repeating a JobID above (the first kept"));
}

TEST(NameRules, BadItemsAreNamed) {
    EXPECT_NE(error_of([] { parse_name_rules({"bert-ft"}); }).find("--map 'bert-ft': expected"),
              std::string::npos);
    EXPECT_NE(
        error_of([] { parse_name_rules({"x=resnet51"}); }).find("unknown workload 'resnet51'"),
        std::string::npos);
    const auto rules = parse_name_rules({"a*=mlp", "abc=resnet18"});
    EXPECT_EQ(job_for_name(rules, "abc")->workload, "mlp");  // the first match wins
    EXPECT_EQ(job_for_name(rules, "resnet50")->workload, "resnet50");
    EXPECT_FALSE(job_for_name(rules, "zzz"));
}

TEST(Kubectl, ReadsCompletedGpuJobs) {
    const HistoryRead r = read_kubectl_jobs(fixture("kubectl-jobs.json"), "jobs.json", {});
    ASSERT_EQ(r.trace.jobs.size(), 3u);
    const TraceJob& resnet = r.trace.jobs[0];
    EXPECT_EQ(resnet.job.name, "resnet50-train-20240304");
    EXPECT_EQ(resnet.job.workload, "resnet50");  // the annotation, batch included
    EXPECT_EQ(resnet.job.batch, 128);
    EXPECT_EQ(resnet.arrival_s, 0.0);
    EXPECT_EQ(resnet.duration_s, 2400.0);  // startTime to completionTime
    const TraceJob& gpt2 = r.trace.jobs[1];
    EXPECT_EQ(gpt2.job.workload, "gpt2-medium");  // the label
    EXPECT_EQ(gpt2.arrival_s, 330.0);
    const TraceJob& own = r.trace.jobs[2];
    EXPECT_TRUE(own.job.external());
    EXPECT_EQ(own.job.command,
              (std::vector<std::string>{"python3", "/app/train.py", "--epochs", "3"}));
    EXPECT_EQ(own.arrival_s, 900.0);  // 10:15:00+01:00 is 09:15:00Z
    EXPECT_EQ(own.duration_s, 3600.0);
    EXPECT_TRUE(has_note(r, "3 jobs traced of 6 read"));
    EXPECT_TRUE(has_note(r, "skipped 1 jobs without a GPU"));
    EXPECT_TRUE(has_note(r, "skipped 1 jobs without status.startTime and status.completionTime"));
    EXPECT_TRUE(has_note(r, "entrypoint-only x1"));
}

TEST(Kubectl, MapOverridesNoneButTheUnannotated) {
    HistoryOptions o;
    o.rules = parse_name_rules({"custom-*=resnet18", "resnet50-*=mlp"});
    const HistoryRead r = read_kubectl_jobs(fixture("kubectl-jobs.json"), "jobs.json", o);
    EXPECT_EQ(r.trace.jobs[0].job.workload, "resnet50");  // the annotation wins over --map
    EXPECT_EQ(r.trace.jobs[2].job.workload, "resnet18");  // --map wins over the command
}

TEST(Kubectl, ErrorsNameTheItemsField) {
    const std::string job = R"({"kind": "Job", "metadata": {"name": "j", "creationTimestamp": "%T"},
        "spec": {"template": {"spec": {"containers": [{"command": ["x"],
        "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}},
        "status": {"startTime": "2024-01-01T00:00:00Z", "completionTime": "2024-01-01T00:01:00Z"}})";
    auto list = [&](const std::string& created) {
        std::string j = job;
        j.replace(j.find("%T"), 2, created);
        return R"({"kind": "List", "items": [)" + j + "]}";
    };
    EXPECT_EQ(read_kubectl_jobs(list("2024-01-01T00:00:00Z"), "k", {}).trace.jobs.size(), 1u);
    std::string twice = list("2024-01-01T00:00:00Z");  // one Job listed twice: traced once
    const size_t items = twice.find('[') + 1;
    twice.insert(twice.rfind(']'), "," + twice.substr(items, twice.rfind(']') - items));
    const HistoryRead once = read_kubectl_jobs(twice, "k", {});
    EXPECT_EQ(once.trace.jobs.size(), 1u);
    EXPECT_TRUE(has_note(once, "skipped 1 Jobs listed twice (namespace and name; the first kept)"));
    EXPECT_EQ(error_of([&] { read_kubectl_jobs(list("monday"), "k", {}); }),
              "k: items[0].metadata.creationTimestamp: 'monday' is not an RFC 3339 time "
              "(2024-03-05T14:02:11Z)");
    EXPECT_NE(error_of([] {
                  read_kubectl_jobs(R"({"kind": "PodList", "items": []})", "k", {});
              }).find("k: kind 'PodList'"),
              std::string::npos);
    EXPECT_NE(error_of([] { read_kubectl_jobs(R"({"kind": 3})", "k", {}); }).find("k: "),
              std::string::npos);
    std::string string_command = list("2024-01-01T00:00:00Z");
    string_command.replace(string_command.find(R"(["x"])"), 5, R"("x")");
    EXPECT_EQ(error_of([&] { read_kubectl_jobs(string_command, "k", {}); }),
              "k: items[0].spec.template.spec.containers[0].command: expected an array of strings");
    std::string annotated = list("2024-01-01T00:00:00Z");
    annotated.replace(annotated.find(R"("name": "j")"), 11,
                      R"("name": "j", "annotations": {"migscope.io/workload": "resnet5"})");
    EXPECT_NE(error_of([&] { read_kubectl_jobs(annotated, "k", {}); })
                  .find("k: items[0].metadata.annotations.migscope.io/workload: workload: unknown "
                        "workload 'resnet5'"),
              std::string::npos);
    std::string backwards = list("2024-01-01T00:00:00Z");
    backwards.replace(backwards.find("00:01:00Z"), 9, "00:00:00Z");
    backwards.replace(backwards.find(R"("startTime": "2024-01-01T00:00:00Z")"), 35,
                      R"("startTime": "2024-01-01T00:02:00Z")");
    EXPECT_EQ(error_of([&] { read_kubectl_jobs(backwards, "k", {}); }),
              "k: items[0].status.completionTime: before status.startTime");
}

}  // namespace
}  // namespace migscope::stream
