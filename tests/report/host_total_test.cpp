// The host total of a host run's stored GPU rows: energy summed with the idle tail of GPUs done
// sooner, the slowest GPU's makespan, jobs summed, a failed GPU included and named; and where an
// operator sees it: `results list` and `show`, and the report's runs table.
#include "report/host_total.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/findings.h"
#include "report/html.h"
#include "report/record_output.h"

namespace migscope::report {
namespace {

store::RunRecord gpu_row(int64_t id, int64_t gpu, double window_s, std::optional<double> energy_j,
                         const std::string& job_status) {
    store::RunRecord r;
    r.id = id;
    r.started_at = "2026-12-02T10:00:00Z";
    r.host_run_id = 7;
    r.gpu_index = gpu;
    r.backend = "green";
    r.mode = "work";
    r.layout = "3g.71gb+1g.18gb";
    r.window_s = window_s;
    r.counter_energy_j = energy_j;
    r.idle_power_w = 100;
    r.label = "triple";
    for (const char* name : {"resnet18", "bert-base"}) {
        store::JobRecord j;
        j.name = name;
        j.partition = "3g.71gb";
        j.status = job_status;
        r.jobs.push_back(j);
    }
    return r;
}

// Host run 7 on GPUs 0-2 (fixed work): GPU 2 fell off the bus after 30 s.
std::vector<store::RunRecord> three_gpus_one_failed() {
    return {gpu_row(7, 0, 100, 50000, "ok"), gpu_row(8, 1, 80, 40000, "ok"),
            gpu_row(9, 2, 30, 15000, "gpu failed")};
}

// A run of one GPU (no host run): id 10.
store::RunRecord one_gpu_run(double energy_j) {
    store::RunRecord r = gpu_row(10, 0, 5, energy_j, "ok");
    r.host_run_id.reset();
    r.gpu_index.reset();
    return r;
}

TEST(HostTotal, SumsEnergyAndJobsTakesTheSlowestMakespanAndNamesAFailedGpu) {
    const HostTotals t = host_totals(three_gpus_one_failed());
    EXPECT_EQ(t.mode, HostMode::kWork);
    EXPECT_EQ(t.gpus, 3);
    EXPECT_DOUBLE_EQ(t.window_s, 100);
    EXPECT_DOUBLE_EQ(t.measured_energy_j, 105000);
    // GPU 1 waits 20 s and GPU 2 70 s for GPU 0, each at its 100 W idle.
    EXPECT_DOUBLE_EQ(t.idle_tail_j, 9000);
    ASSERT_TRUE(t.energy_j);
    EXPECT_DOUBLE_EQ(*t.energy_j, 114000);
    EXPECT_EQ(t.jobs, 6);
    EXPECT_EQ(t.jobs_ok, 4);
    EXPECT_EQ(t.failed_gpus, std::vector<int64_t>{2});
    EXPECT_EQ(host_total_role(7, t), "host run 7, 3 GPUs (GPU 2 failed)");
    const std::string note = host_total_note(t);
    EXPECT_NE(note.find("includes GPU 2, which failed"), std::string::npos) << note;
    EXPECT_NE(note.find("a partial total"), std::string::npos) << note;
    EXPECT_NE(note.find("makespan the slowest GPU's (100.00 s)"), std::string::npos) << note;
    EXPECT_NE(note.find("9.00 kJ idle of GPUs done sooner"), std::string::npos) << note;
    EXPECT_NE(note.find("4 of 6 ok"), std::string::npos) << note;

    // Over a duration window each GPU is measured as long: no tail.
    std::vector<store::RunRecord> rows = three_gpus_one_failed();
    for (store::RunRecord& r : rows)
        r.mode = "duration";
    EXPECT_EQ(host_totals(rows).energy_j, 105000);
    EXPECT_EQ(host_total_note(host_totals(rows)).find("idle of GPUs"), std::string::npos);
}

TEST(HostTotal, AFailedGpuWithoutEnergyLeavesNoTotalAndSaysWhy) {
    std::vector<store::RunRecord> rows = three_gpus_one_failed();
    rows[2].counter_energy_j.reset();
    const HostTotals t = host_totals(rows);
    EXPECT_FALSE(t.energy_j);
    EXPECT_DOUBLE_EQ(t.window_s, 100);
    EXPECT_EQ(t.jobs, 6);
    const std::string note = host_total_note(t);
    EXPECT_NE(note.find("no total energy (GPU 2: board energy not measured (it failed)"),
              std::string::npos)
        << note;
}

TEST(HostTotal, HostRunsGroupRowsByHostRunIdLeavingOneGpuRunsOut) {
    std::vector<store::RunRecord> runs = three_gpus_one_failed();
    runs.push_back(one_gpu_run(100));
    std::vector<store::RunRecord> baseline = three_gpus_one_failed();
    for (size_t i = 0; i < baseline.size(); ++i) {
        baseline[i].id = 11 + static_cast<int64_t>(i);
        baseline[i].host_run_id = 11;
        baseline[i].role = store::RunRole::kBaseline;
        baseline[i].parent_id = 7;
    }
    runs.insert(runs.end(), baseline.begin(), baseline.end());
    const auto hosts = host_runs(runs);
    ASSERT_EQ(hosts.size(), 2u);
    EXPECT_EQ(hosts[0].first, 7);
    EXPECT_EQ(hosts[0].second.size(), 3u);
    EXPECT_EQ(hosts[1].first, 11);
    EXPECT_EQ(hosts[1].second.back().id, 13);
}

TEST(HostTotal, ResultsListHasTheHostRowAfterItsLastGpuAndSaysWhatItIncludes) {
    std::vector<store::RunRecord> runs = three_gpus_one_failed();
    const store::RunRecord single = one_gpu_run(1000);
    runs.push_back(single);
    std::ostringstream out;
    print_runs_table(runs, out);
    const std::string text = out.str();
    const size_t gpu2 = text.find("run, GPU 2 of host run 7");
    const size_t host = text.find("host run 7, 3 GPUs (GPU 2 failed)");
    const size_t one = text.find("\n10  2026");
    ASSERT_NE(gpu2, std::string::npos) << text;
    ASSERT_NE(host, std::string::npos) << text;
    ASSERT_NE(one, std::string::npos) << text;
    EXPECT_LT(gpu2, host);
    EXPECT_LT(host, one);  // right after its last GPU row
    const std::string host_line = text.substr(host, text.find('\n', host) - host);
    EXPECT_NE(host_line.find("114.00 kJ"), std::string::npos) << host_line;
    EXPECT_NE(host_line.find("100.00 s"), std::string::npos) << host_line;
    EXPECT_NE(host_line.find("4 ok, 2 gpu failed"), std::string::npos) << host_line;
    EXPECT_NE(host_line.find(" 6 "), std::string::npos) << host_line;  // jobs summed
    EXPECT_NE(text.find("host run 7, 3 GPUs (GPU 2 failed): host total of 3 GPUs"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("includes GPU 2, which failed"), std::string::npos) << text;
    // A list without host runs has no host rows.
    std::ostringstream plain;
    print_runs_table({single}, plain);
    EXPECT_EQ(plain.str().find("host"), std::string::npos) << plain.str();
}

TEST(HostTotal, ResultsShowOfAGpuRowEndsWithTheHostTotal) {
    const std::vector<store::RunRecord> rows = three_gpus_one_failed();
    std::ostringstream out;
    print_run_record(rows[1], rows, out);
    const std::string text = out.str();
    EXPECT_NE(text.find("run 8 (run, GPU 1 of host run 7)"), std::string::npos) << text;
    EXPECT_NE(text.find("host run 7, 3 GPUs (GPU 2 failed) (runs 7 (GPU 0), 8 (GPU 1), 9 (GPU "
                        "2)): makespan 100.00 s, energy 114000 J, 6 jobs (4 ok, 2 gpu failed)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("includes GPU 2, which failed"), std::string::npos) << text;
    std::ostringstream alone;
    print_run_record(rows[1], {}, alone);
    EXPECT_EQ(alone.str().find("host run 7, 3 GPUs"), std::string::npos);
}

TEST(HostTotal, TheReportsRunsTableHasTheHostRow) {
    ReportInput in;
    in.source = "results.db";
    in.generator = "migscope test";
    in.runs = three_gpus_one_failed();
    in.findings = analyse(in.runs);
    std::ostringstream page;
    write_html(in, page);
    const std::string html = page.str();
    const size_t row = html.find("<tr class=\"host\">");
    ASSERT_NE(row, std::string::npos);
    const std::string host = html.substr(row, html.find("</tr>", row) - row);
    EXPECT_NE(host.find("host run 7, 3 GPUs (GPU 2 failed)"), std::string::npos) << host;
    EXPECT_NE(host.find(">114000<"), std::string::npos) << host;
    EXPECT_NE(host.find("6 jobs (summed)"), std::string::npos) << host;
    EXPECT_NE(host.find("includes GPU 2, which failed"), std::string::npos) << host;
    EXPECT_GT(row, html.find("run, GPU 2 of host run 7"));
}

}  // namespace
}  // namespace migscope::report
