// Golden tests of a run's printers (runner/run_output.h, runner/host_output.h): every format of a
// run cell with its baseline, and of a host run of two GPUs, over hand-made results.
#include "runner/run_output.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/golden.h"
#include "runner/host_output.h"

namespace migscope::runner {
namespace {

// A job that ran `window_s` at `items_per_s` images of 32 a step.
JobResult job(const std::string& name, const std::string& partition, double items_per_s,
              double energy_j, double window_s) {
    JobResult j;
    j.spec.name = name;
    j.spec.workload = name;
    j.partition.label = partition;
    j.partition.sms = partition == "3g.71gb" ? 60u : 64u;
    j.item_unit = "images";
    j.items = items_per_s * window_s;
    j.steps = static_cast<int64_t>(j.items / 32);
    j.busy_s = window_s;
    j.items_per_s = items_per_s;
    j.items_per_s_spread_pct = items_per_s > 2000 ? 1.5 : 4.2;
    j.step_time_p50_s = 32 / items_per_s;
    j.step_time_p95_s = 1.1 * 32 / items_per_s;
    j.mfu = 0.31;
    j.peak_memory_bytes = int64_t(6) << 30;
    j.energy_j = energy_j;
    j.energy_per_item_j = energy_j / j.items;
    j.step_mode = "cuda-graph";
    return j;
}

// Two jobs side by side on green partitions for 60 s, and the same jobs one after another.
CellOutcome cell_fixture() {
    CellOutcome c;
    RunResult& run = c.run;
    run.backend = partition::BackendKind::kGreen;
    run.layout = "3g.71gb@4 + 4g.71gb@0";
    run.window_s = 60;
    run.energy.duration_s = 60;
    run.energy.power_samples = 601;
    run.energy.counter_energy_j = 30000;
    run.energy.trace_energy_j = 30090;
    run.energy.disagreement_pct = 0.3;
    run.energy.average_power_w = 500;
    run.idle_power_w = 110;
    run.sm_clock_mhz = 1980;
    run.attribution_method = "idle by partition size, the rest by busy SM seconds";
    run.jobs = {job("resnet18", "4g.71gb", 2400, 16000, 60),
                job("resnet50", "3g.71gb", 700, 14000, 60)};
    run.aggregate_normalised_throughput = 2400.0 / 4000 + 700.0 / 1300;
    run.warnings = {"SM partitions emulate MIG: no L2 or memory-bandwidth isolation"};
    RunResult base = run;
    base.backend = partition::BackendKind::kSequential;
    base.layout = "whole GPU";
    base.window_s = 120;
    base.energy.counter_energy_j = 64000;
    base.energy.trace_energy_j = 64100;
    base.energy.duration_s = 120;
    base.jobs = {job("resnet18", "whole GPU", 4000, 30000, 60),
                 job("resnet50", "whole GPU", 1300, 34000, 60)};
    base.aggregate_normalised_throughput.reset();
    base.warnings.clear();
    c.baseline = base;
    c.doc = {{"run", {{"layout", run.layout}, {"energy_j", 30000}}},
             {"baseline", {{"layout", base.layout}, {"energy_j", 64000}}},
             {"run_dir", "runs/fixture\xff"}};  // a byte that is no UTF-8, as a path may hold
    return c;
}

TEST(RunOutput, AProbeLineNamesItsClockAndTheSpeedOfEachJobThatRanInIt) {
    RunResult run = cell_fixture().run;
    run.jobs[0].without_power_w = 283;
    run.jobs[0].without_sm_clock_mhz = 1740;
    run.jobs[0].without_items_per_s = {std::nullopt, 5530.0};
    run.jobs[1].without_power_w = 701;  // a probe without a clock or a measured step
    run.jobs[1].without_items_per_s = {std::nullopt, std::nullopt};
    std::ostringstream out;
    print_run_table(run, "title", out);
    EXPECT_NE(out.str().find("probe        without resnet18: 283 W board power, SM clock 1740 MHz; "
                             "resnet50 5.53k images/s\n"),
              std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("probe        without resnet50: 701 W board power\n"),
              std::string::npos)
        << out.str();
    const nlohmann::json doc = run_json(run, RecordContext{});
    EXPECT_EQ(doc["jobs"][0]["without_sm_clock_mhz"], 1740.0);
    EXPECT_TRUE(doc["jobs"][0]["without_items_per_s"][0].is_null());
    EXPECT_EQ(doc["jobs"][0]["without_items_per_s"][1], 5530.0);
}

TEST(RunOutput, ACellWithItsBaselineEveryFormat) {
    const CellOutcome cell = cell_fixture();
    test::expect_golden_formats(
        cell_printers(), CellOutput{cell, "migscope run: green 3g.71gb+4g.71gb", "runs/fixture"},
        "run-cell");
}

TEST(RunOutput, AHostRunOfTwoGpusEveryFormat) {
    const CellOutcome cell = cell_fixture();
    HostOutcome h;
    for (unsigned g = 0; g < 2; ++g) {
        GpuOutcome gpu;
        gpu.gpu = g;
        gpu.uuid = "GPU-0000000" + std::to_string(g);
        gpu.run = cell.run;
        h.run.gpus.push_back(gpu);
    }
    h.run.gpus[1].failure = "NVML lost the GPU";
    h.run.total = host_totals(h.run.gpus);
    h.doc = {{"gpus", 2}, {"total_energy_j", 60000}};
    test::expect_golden_formats(host_printers(), HostOutput{h, "migscope run --plan plan.json"},
                                "run-host");
}

}  // namespace
}  // namespace migscope::runner
