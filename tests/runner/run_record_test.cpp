// A runner result converted into a results-store record: every field, empties kept empty.
#include "runner/run_record.h"

#include <gtest/gtest.h>

#include <regex>

namespace migscope::runner {
namespace {

RunResult sample_run() {
    RunResult run;
    run.backend = partition::BackendKind::kGreen;
    run.mode = RunMode::kWork;
    run.layout = "3g.71gb+1g.18gb";
    run.window_s = 12.5;
    run.energy.counter_energy_j = 5000;
    run.energy.trace_energy_j = 5010;
    run.energy.disagreement_pct = 0.2;
    run.energy.average_power_w = 400;
    run.energy.peak_power_w = 450;
    run.energy.power_samples = 125;
    run.energy.max_gap_s = 0.11;
    run.energy.warnings = {"energy warning"};
    run.idle_power_w = 100;
    run.idle.clocks_up = telemetry::IdlePower{100, 98, 102, 20};
    run.idle.deep = telemetry::IdlePower{80, 79, 81, 10};
    run.sm_clock_mhz = 1755;
    run.attribution_method = "method";
    run.aggregate_normalised_throughput = 1.2;
    run.interrupted = true;
    run.warnings = {"run warning"};
    JobResult built_in;
    built_in.spec.name = "r";
    built_in.spec.workload = "resnet18";
    built_in.spec.batch = 32;
    built_in.partition.label = "3g.71gb";
    built_in.partition.sms = 60;
    built_in.partition.memory_gib = 70.5;
    built_in.sms = 56;
    built_in.item_unit = "images";
    built_in.steps = 10;
    built_in.items = 320;
    built_in.busy_s = 2;
    built_in.items_per_s = 160;
    built_in.step_time_p50_s = 0.2;
    built_in.step_time_p95_s = 0.25;
    built_in.mfu = 0.3;
    built_in.peak_memory_bytes = 1LL << 33;
    built_in.finish_s = 2.1;
    built_in.energy_j = 3000;
    built_in.energy_per_item_j = 9.375;
    built_in.normalised_throughput = 0.7;
    built_in.sm_clock_mhz = 1740;
    JobResult external;
    external.spec.name = "mine";
    external.spec.command = {"python3", "train.py"};
    external.partition.label = "1g.18gb";
    external.status = JobStatus::kCrashed;
    external.message = "exit status 1";
    run.jobs = {built_in, external};
    run.trace_origin = SteadyTime{} + std::chrono::seconds(100);
    telemetry::Sample a;
    a.time = run.trace_origin + std::chrono::milliseconds(250);
    a.power_instant_w = 300;
    a.power_average_w = 290;
    a.energy_j = 1e6;
    a.sm_clock_mhz = 1700;
    a.memory_used_mib = 2048;
    a.gpu_utilization_pct = 97;
    a.memory_utilization_pct = 43;
    telemetry::Sample b;
    b.time = run.trace_origin + std::chrono::milliseconds(350);
    run.trace = {a, b};
    return run;
}

TEST(RunRecord, CarriesEveryFieldAndTheCallersContext) {
    RecordContext context;
    context.started_at = "2026-11-30T03:34:15Z";
    context.provenance.migscope_version = "0.4.0";
    context.provenance.gpu_name = "NVIDIA H200";
    context.role = store::RunRole::kBaseline;
    context.parent_id = 7;
    context.label = "cell 3";
    RunResult run = sample_run();
    run.torch_version = "2.11.0";
    const store::RunRecord r = to_run_record(run, context);
    EXPECT_EQ(r.started_at, "2026-11-30T03:34:15Z");
    EXPECT_EQ(r.provenance.gpu_name, "NVIDIA H200");
    EXPECT_EQ(r.provenance.torch_version, "2.11.0");  // the workers', over the caller's empty one
    EXPECT_EQ(r.role, store::RunRole::kBaseline);
    EXPECT_EQ(r.parent_id, 7);
    EXPECT_EQ(r.label, "cell 3");
    EXPECT_EQ(r.backend, "green");
    EXPECT_EQ(r.mode, "work");
    EXPECT_EQ(r.layout, "3g.71gb+1g.18gb");
    EXPECT_EQ(r.window_s, 12.5);
    EXPECT_EQ(r.counter_energy_j, 5000);
    EXPECT_EQ(r.trace_energy_j, 5010);
    EXPECT_EQ(r.disagreement_pct, 0.2);
    EXPECT_EQ(r.average_power_w, 400);
    EXPECT_EQ(r.peak_power_w, 450);
    EXPECT_EQ(r.power_samples, 125);
    EXPECT_EQ(r.max_gap_s, 0.11);
    EXPECT_EQ(r.idle_power_w, 100);
    EXPECT_EQ(r.idle_state, "clocks-up");
    EXPECT_EQ(r.deep_idle_power_w, 80);
    EXPECT_EQ(r.sm_clock_mhz, 1755);
    EXPECT_EQ(r.attribution_method, "method");
    EXPECT_EQ(r.aggregate_normalised_throughput, 1.2);
    EXPECT_TRUE(r.interrupted);
    EXPECT_EQ(r.warnings, (std::vector<std::string>{"run warning", "energy warning"}));

    ASSERT_EQ(r.jobs.size(), 2u);
    const store::JobRecord& j = r.jobs[0];
    EXPECT_EQ(j.name, "r");
    EXPECT_EQ(j.workload, "resnet18");
    EXPECT_EQ(j.mode, "train");
    EXPECT_EQ(j.batch, 32);
    EXPECT_EQ(j.partition, "3g.71gb");
    EXPECT_EQ(j.sms_requested, 60);
    EXPECT_EQ(j.sms, 56);
    EXPECT_EQ(j.memory_limit_gib, 70.5);
    EXPECT_EQ(j.status, "ok");
    EXPECT_EQ(j.item_unit, "images");
    EXPECT_EQ(j.steps, 10);
    EXPECT_EQ(j.items, 320);
    EXPECT_EQ(j.busy_s, 2);
    EXPECT_EQ(j.items_per_s, 160);
    EXPECT_EQ(j.step_time_p50_s, 0.2);
    EXPECT_EQ(j.step_time_p95_s, 0.25);
    EXPECT_EQ(j.mfu, 0.3);
    EXPECT_EQ(j.peak_memory_bytes, 1LL << 33);
    EXPECT_EQ(j.finish_s, 2.1);
    EXPECT_EQ(j.energy_j, 3000);
    EXPECT_EQ(j.energy_per_item_j, 9.375);
    EXPECT_EQ(j.normalised_throughput, 0.7);
    EXPECT_EQ(j.sm_clock_mhz, 1740);

    const store::JobRecord& e = r.jobs[1];
    EXPECT_FALSE(e.workload);
    EXPECT_EQ(e.command, (std::vector<std::string>{"python3", "train.py"}));
    EXPECT_EQ(e.status, to_string(JobStatus::kCrashed));
    EXPECT_EQ(e.message, "exit status 1");
    EXPECT_FALSE(e.batch);
    EXPECT_FALSE(e.sms_requested);
    EXPECT_FALSE(e.items_per_s);
    EXPECT_FALSE(e.energy_j);

    ASSERT_EQ(r.trace.size(), 2u);
    EXPECT_NEAR(r.trace[0].t_s, 0.25, 1e-9);
    EXPECT_EQ(r.trace[0].power_instant_w, 300);
    EXPECT_EQ(r.trace[0].power_average_w, 290);
    EXPECT_EQ(r.trace[0].energy_j, 1e6);
    EXPECT_EQ(r.trace[0].sm_clock_mhz, 1700);
    EXPECT_EQ(r.trace[0].memory_used_mib, 2048);
    EXPECT_EQ(r.trace[0].gpu_utilization_pct, 97);
    EXPECT_EQ(r.trace[0].memory_utilization_pct, 43);
    EXPECT_NEAR(r.trace[1].t_s, 0.35, 1e-9);
    EXPECT_FALSE(r.trace[1].power_instant_w);
    EXPECT_FALSE(r.trace[1].sm_clock_mhz);
    EXPECT_FALSE(r.trace[1].memory_utilization_pct);
}

TEST(RunRecord, NoLayoutIsNullAndTimeIsUtcIso8601) {
    RunResult run = sample_run();
    run.layout.clear();
    EXPECT_FALSE(to_run_record(run, {}).layout);
    EXPECT_TRUE(
        std::regex_match(utc_now_iso8601(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

}  // namespace
}  // namespace migscope::runner
