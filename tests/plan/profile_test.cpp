// Tests of the planner's profiles: the JSON file, extraction from stored runs, interpolation.
#include "plan/profile.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "fixture.h"

namespace migscope::plan {
namespace {

using testing::job_profile;
using testing::profile_set;

store::RunRecord single_run(int64_t id, const std::string& backend, const std::string& partition,
                            double items_per_s, double power_w, double idle_w,
                            const std::string& status = "ok") {
    store::RunRecord r;
    r.id = id;
    r.started_at = "2026-12-01T10:00:0" + std::to_string(id % 10) + "Z";
    r.backend = backend;
    r.mode = "duration";
    r.window_s = 10;
    r.average_power_w = power_w;
    r.idle_power_w = idle_w;
    r.provenance.gpu_name = "NVIDIA H200";
    r.provenance.driver_version = "580.159.04";
    r.provenance.migscope_version = "0.1.0";
    r.provenance.migscope_commit = "abc";
    store::JobRecord j;
    j.name = "resnet18";
    j.workload = "resnet18";
    j.mode = "train";
    j.batch = 32;
    j.partition = partition;
    j.status = status;
    j.item_unit = "images";
    j.items_per_s = items_per_s;
    j.steps = 10;
    j.items = 320;
    j.peak_memory_bytes = int64_t(3) << 30;
    r.jobs.push_back(j);
    return r;
}

TEST(Profiles, FromRunsTakesMediansOfSingleJobRunsAndCalibratesFromMixes) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {
        single_run(1, "green", "2g.35gb", 100, 200, 90),
        single_run(2, "green", "2g.35gb", 120, 220, 110),
        single_run(3, "green", "2g.35gb", 110, 210, 100),
        single_run(4, "sequential", "whole GPU", 300, 400, 100),
        single_run(5, "green", "1g.18gb", 999, 999, 100, "out of memory"),  // ignored
        single_run(6, "cpu", "cores 0-1", 5, 5, 100),                       // ignored
    };
    // At the default batch (none given): images per step give it.
    runs.push_back(single_run(8, "green", "1g.18gb", 50, 150, 100));
    runs.back().jobs[0].batch.reset();
    // A mix: two resnet18 on 2g, each measured at 80% of its profile; board 100 + 0.5 × 220 W.
    store::RunRecord mix = single_run(7, "green", "2g.35gb", 88, 210, 100);
    mix.jobs.push_back(mix.jobs[0]);
    mix.jobs[1].name = "resnet18#2";
    runs.push_back(mix);

    const ProfileSet set = profiles_from_runs(runs, h200);
    EXPECT_EQ(set.gpu_model, "h200");
    EXPECT_DOUBLE_EQ(set.idle_power_w.value, 100);
    EXPECT_EQ(set.idle_power_w.reps, 6);  // the used runs, the mix included
    ASSERT_EQ(set.jobs.size(), 1u);
    JobProfile j = set.jobs[0];
    EXPECT_EQ(j.workload, "resnet18");
    EXPECT_EQ(j.batch, 32);
    EXPECT_DOUBLE_EQ(j.items_per_step, 32);
    ASSERT_NEAR(*j.peak_memory_gib, 3.0, 1e-9);
    ASSERT_EQ(j.partitions.size(), 3u);
    EXPECT_EQ(j.partitions[0].partition, "1g.18gb");  // the default-batch run: 320/10 = batch 32
    j.partitions.erase(j.partitions.begin());
    EXPECT_EQ(j.partitions[0].partition, "2g.35gb");
    EXPECT_EQ(j.partitions[0].items_per_s.reps, 3);
    EXPECT_EQ(j.partitions[0].sms, 32u);
    EXPECT_DOUBLE_EQ(j.partitions[0].items_per_s.value, 110);
    EXPECT_EQ(j.partitions[0].items_per_s.reps, 3);
    EXPECT_DOUBLE_EQ(j.partitions[0].items_per_s.min, 100);
    EXPECT_DOUBLE_EQ(j.partitions[0].items_per_s.max, 120);
    EXPECT_DOUBLE_EQ(j.partitions[0].average_power_w.value, 210);
    EXPECT_EQ(j.partitions[1].partition, "whole GPU");
    EXPECT_EQ(j.partitions[1].sms, 132u);
    EXPECT_EQ(set.correction.mixes, 1);
    EXPECT_NEAR(set.correction.throughput, 0.8, 1e-12);
    EXPECT_NEAR(set.correction.dynamic_power, 110.0 / 220.0, 1e-12);
    EXPECT_EQ(set.provenance.gpu, "NVIDIA H200");
    EXPECT_EQ(set.provenance.measured_from, "2026-12-01T10:00:01Z");
    EXPECT_EQ(set.provenance.steps, "eager");  // no step mode recorded: runs from before graphs
    EXPECT_FALSE(set.power_limit_w);           // none recorded (stores before schema 7)
    EXPECT_FALSE(j.partitions[0].memory_utilization_pct);  // none recorded (before schema 6)
}

TEST(Profiles, FromRunsKeepsEachSizesMemoryUtilisationWhereRunsRecordedIt) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "green", "2g.35gb", 120, 220, 90),
                                          single_run(3, "green", "2g.35gb", 110, 210, 90),
                                          single_run(4, "sequential", "whole GPU", 300, 400, 90)};
    runs[0].jobs[0].memory_utilization_pct = 14;
    runs[1].jobs[0].memory_utilization_pct = 18;  // run 3: stored before it was recorded
    runs[3].jobs[0].memory_utilization_pct = 35;
    const ProfileSet set = profiles_from_runs(runs, h200);
    const auto& on_2g = set.jobs[0].partitions[0].memory_utilization_pct;
    ASSERT_TRUE(on_2g);
    EXPECT_DOUBLE_EQ(on_2g->value, 16);
    EXPECT_EQ(on_2g->reps, 2);
    EXPECT_DOUBLE_EQ(on_2g->min, 14);
    EXPECT_DOUBLE_EQ(set.jobs[0].partitions[1].memory_utilization_pct->value, 35);
    const ProfileSet back = parse_profiles_json(write_profiles_json(set), "x.json");
    EXPECT_EQ(write_profiles_json(back), write_profiles_json(set));
    EXPECT_DOUBLE_EQ(back.jobs[0].partitions[0].memory_utilization_pct->max, 18);
}

TEST(Profiles, FromRunsTakesTheBoardsPowerLimitAndRefusesTwo) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "sequential", "whole GPU", 300, 400, 90),
                                          single_run(3, "green", "1g.18gb", 50, 150, 90)};
    runs[0].provenance.power_limit_w = 700;
    runs[1].provenance.power_limit_w = 700;  // run 3: stored before limits were recorded
    EXPECT_EQ(profiles_from_runs(runs, h200).power_limit_w, 700);
    runs[2].provenance.power_limit_w = 600;
    try {
        profiles_from_runs(runs, h200);
        FAIL() << "a profile from runs under two power limits";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("(600, 700 W)"), std::string::npos) << e.what();
    }
}

// An H100's runs exported as the H200's profiles would plan one GPU with another's speeds.
TEST(Profiles, FromRunsRefusesRunsOfAnotherGpuModel) {
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "sequential", "whole GPU", 300, 400, 90)};
    runs[1].provenance.gpu_name = "NVIDIA H100 80GB HBM3";
    try {
        profiles_from_runs(runs, mig::builtin_model("h200"));
        FAIL() << "an H100's run in the H200's profiles";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find(
                      "run 2 was measured on NVIDIA H100 80GB HBM3, not on h200 (--gpu-model)"),
                  std::string::npos)
            << e.what();
    }
    runs[1].provenance.gpu_name = "a board of no known model";  // nothing to compare: used
    EXPECT_EQ(profiles_from_runs(runs, mig::builtin_model("h200")).jobs.size(), 1u);
}

TEST(Profiles, FromRunsRefusesToMixEagerAndCudaGraphRunsOfOneJob) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "sequential", "whole GPU", 300, 400, 90)};
    for (store::RunRecord& r : runs)
        r.jobs[0].step_mode = "cuda-graph";
    EXPECT_EQ(profiles_from_runs(runs, h200).provenance.steps, "cuda-graph");
    runs.push_back(single_run(3, "green", "1g.18gb", 50, 150, 90));  // eager (not recorded)
    try {
        profiles_from_runs(runs, h200);
        FAIL() << "a profile from eager and graph runs";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("resnet18:train:32 mix step modes"), std::string::npos)
            << e.what();
    }
}

// The activity probe slows a job and lowers its power: a profile says whether its runs had it, and
// never mixes runs with it and runs without.
TEST(Profiles, FromRunsSaysWhetherTheRunsHadTheActivityProbeAndNeverMixesIt) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "sequential", "whole GPU", 300, 400, 90)};
    EXPECT_EQ(profiles_from_runs(runs, h200).provenance.cuda_injection, "unknown");
    for (store::RunRecord& r : runs)
        r.provenance.cuda_injection = "migscope-activity kernels";
    const ProfileSet probed = profiles_from_runs(runs, h200);
    EXPECT_EQ(probed.provenance.cuda_injection, "migscope-activity kernels");
    EXPECT_EQ(parse_profiles_json(write_profiles_json(probed), "x.json").provenance.cuda_injection,
              "migscope-activity kernels");
    runs[1].provenance.cuda_injection = "none";
    try {
        profiles_from_runs(runs, h200);
        FAIL() << "a profile from runs with and without the probe";
    } catch (const Error& e) {
        EXPECT_NE(
            std::string(e.what()).find("mix CUDA injections (migscope-activity kernels, none)"),
            std::string::npos)
            << e.what();
    }
    runs[0].provenance.cuda_injection.reset();  // stored before schema 8: joined, not refused
    EXPECT_EQ(profiles_from_runs(runs, h200).provenance.cuda_injection, "none, unknown");
}

// A built-in job's time between counted steps (span over busy time) goes into its profile, and an
// estimate's rate is over the span: items over the steps' own time overstates it.
TEST(Profiles, TheTimeBetweenStepsSlowsTheEstimatedRate) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "green", "2g.35gb", 100, 200, 90),
                                          single_run(3, "sequential", "whole GPU", 300, 400, 90)};
    for (store::RunRecord& r : runs)
        r.jobs[0].busy_s = 3.2;
    runs[0].jobs[0].span_s = 3.2 * 1.02;
    runs[1].jobs[0].span_s = 3.2 * 1.01;  // run 3: stored before spans were recorded
    const ProfileSet set = profiles_from_runs(runs, h200);
    const JobProfile& job = set.jobs.at(0);
    const PartitionProfile* two = nullptr;
    for (const PartitionProfile& p : job.partitions)
        two = p.partition == "2g.35gb" ? &p : two;
    ASSERT_TRUE(two && two->between_steps_share);
    EXPECT_NEAR(two->between_steps_share->value, 0.015, 1e-9);
    EXPECT_NEAR(two->between_steps_share->max, 0.02, 1e-9);
    const std::optional<Estimate> e = estimate(job, "2g.35gb", two->sms);
    ASSERT_TRUE(e);
    EXPECT_NEAR(e->items_per_s, 100 / 1.015, 1e-9);
    EXPECT_NEAR(estimate(job, "2g.35gb", two->sms, Spread::kSlowest)->items_per_s, 100 / 1.02,
                1e-9);
    EXPECT_NEAR(estimate(job, "whole GPU", 132)->items_per_s, 300, 1e-9) << "none recorded";
    const ProfileSet back = parse_profiles_json(write_profiles_json(set), "x.json");
    EXPECT_EQ(write_profiles_json(back), write_profiles_json(set));
}

TEST(Profiles, IdlePowerComesFromRunsOfOneIdleStateClocksUpFirst) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 400, 80),
                                          single_run(2, "green", "2g.35gb", 100, 400, 130),
                                          single_run(3, "green", "2g.35gb", 100, 400, 134),
                                          single_run(4, "green", "2g.35gb", 100, 400, 119)};
    runs[0].idle_state = "deep";
    runs[1].idle_state = "clocks-up";
    runs[2].idle_state = "clocks-up";  // run 4: stored before states were recorded
    ProfileSet set = profiles_from_runs(runs, h200);
    EXPECT_EQ(set.idle_state, "clocks-up");
    EXPECT_DOUBLE_EQ(set.idle_power_w.value, 132);
    EXPECT_EQ(set.idle_power_w.reps, 2);
    EXPECT_DOUBLE_EQ(set.idle_power_w.min, 130);

    runs.erase(runs.begin() + 1, runs.begin() + 3);  // deep idle before runs without a state
    set = profiles_from_runs(runs, h200);
    EXPECT_EQ(set.idle_state, "deep");
    EXPECT_DOUBLE_EQ(set.idle_power_w.value, 80);
    runs.erase(runs.begin());
    set = profiles_from_runs(runs, h200);
    EXPECT_EQ(set.idle_state, "");
    EXPECT_DOUBLE_EQ(set.idle_power_w.value, 119);
}

TEST(Profiles, FromRunsRefusesRunsWithoutIdlePowerOrSingleJobs) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    store::RunRecord r = single_run(1, "green", "2g.35gb", 100, 200, 90);
    r.idle_power_w.reset();
    EXPECT_THROW(profiles_from_runs({r}, h200), Error);
    EXPECT_THROW(profiles_from_runs({}, h200), Error);
}

// A job run at its workload's default batch stores none: one image or sample per item gives it
// from the items per step; tokens do not, and the run is named with why it is not profiled.
TEST(Profiles, ABatchNotRecordedComesFromImagesOrSamplesPerStepElseTheRunIsNamed) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    store::RunRecord mlp = single_run(1, "mps", "3g.71gb", 3e5, 500, 130);
    mlp.jobs[0].name = "mlp";
    mlp.jobs[0].workload = "mlp";
    mlp.jobs[0].batch.reset();
    mlp.jobs[0].item_unit = "samples";
    mlp.jobs[0].steps = 447;
    mlp.jobs[0].items = 447.0 * 8192;
    EXPECT_EQ(stored_batch(mlp.jobs[0]), 8192);
    EXPECT_EQ(why_single_job_unused(mlp), "");
    const ProfileSet set = profiles_from_runs({mlp}, h200);
    ASSERT_EQ(set.jobs.size(), 1u);
    EXPECT_EQ(set.jobs[0].label(), "mlp:train:8192");

    store::RunRecord bert = mlp;
    bert.jobs[0].name = "bert-base";
    bert.jobs[0].workload = "bert-base";
    bert.jobs[0].item_unit = "tokens";
    EXPECT_FALSE(stored_batch(bert.jobs[0]).has_value());
    EXPECT_NE(why_single_job_unused(bert).find("no batch recorded"), std::string::npos)
        << why_single_job_unused(bert);
    bert.interrupted = true;
    EXPECT_EQ(why_single_job_unused(bert), "interrupted");
}

// An external command profiled on MPS: one fixed-work run per size, timed from launch to end.
store::RunRecord command_run(int64_t id, const std::string& backend, const std::string& partition,
                             double run_s, double power_w) {
    store::RunRecord r = single_run(id, backend, partition, 0, power_w, 100);
    r.mode = "work";
    r.window_s = run_s;
    store::JobRecord& j = r.jobs[0];
    j.name = "mine";
    j.workload.reset();
    j.command = {"python3", "train.py", "--steps", "300"};
    j.mode = "train";
    j.batch.reset();
    j.item_unit = "images";  // what its progress lines said: not the planner's unit
    j.items_per_s = 5000;
    j.steps = 300;
    j.busy_s = 0.75 * run_s;  // in its reported steps; the rest was start-up
    j.finish_s = run_s;
    j.peak_memory_bytes.reset();
    return r;
}

TEST(Profiles, ACommandsProfileIsItsRunTimeOnEachSizeAndSaysItsBackend) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {
        command_run(1, "mps", "1g.18gb", 40, 200), command_run(2, "mps", "1g.18gb", 50, 220),
        command_run(3, "mps", "1g.18gb", 45, 210), command_run(4, "sequential", "whole GPU", 10, 500),
        single_run(5, "mps", "2g.35gb", 100, 200, 100),
        single_run(6, "sequential", "whole GPU", 300, 400, 100)};
    const ProfileSet set = profiles_from_runs(runs, h200);
    ASSERT_EQ(set.jobs.size(), 2u);
    const JobProfile& mine = set.require_command("mine", {"python3", "train.py", "--steps", "300"});
    EXPECT_TRUE(mine.external());
    EXPECT_EQ(mine.label(), "mine");
    EXPECT_EQ(mine.backend, "mps");
    EXPECT_EQ(mine.item_unit, "runs");
    EXPECT_DOUBLE_EQ(mine.items_per_step, 1);
    ASSERT_EQ(mine.partitions.size(), 2u);
    EXPECT_DOUBLE_EQ(mine.partitions[0].items_per_s.value, 1 / 45.0);  // median run time
    EXPECT_EQ(mine.partitions[0].items_per_s.reps, 3);
    EXPECT_DOUBLE_EQ(mine.partitions[1].items_per_s.value, 1 / 10.0);
    EXPECT_DOUBLE_EQ(mine.partitions[1].average_power_w.value, 500);
    ASSERT_TRUE(mine.partitions[0].startup_s);  // the run outside its reported steps
    EXPECT_DOUBLE_EQ(mine.partitions[0].startup_s->value, 0.25 * 45);
    EXPECT_DOUBLE_EQ(mine.partitions[0].startup_s->min, 0.25 * 40);
    // The estimate takes the start-up over both sizes (the median of 11.25 and 2.5 s) and each
    // size's run less its own start-up.
    const Estimate whole = *estimate(mine, "whole GPU", 132);
    EXPECT_DOUBLE_EQ(whole.startup_s, (0.25 * 45 + 0.25 * 10) / 2);
    EXPECT_DOUBLE_EQ(1 / whole.items_per_s, 10 - 0.25 * 10 + whole.startup_s);
    EXPECT_DOUBLE_EQ(estimate(mine, "whole GPU", 132, Spread::kFastest)->startup_s, 0.25 * 10);
    EXPECT_DOUBLE_EQ(estimate(mine, "1g.18gb", 16, Spread::kSlowest)->startup_s, 0.25 * 50);
    EXPECT_EQ(set.require("r", "resnet18", "train", 32).backend, "mps");
    EXPECT_THROW(set.require("mine", "mine", "train", std::nullopt), Error);  // not a workload

    // The file keeps the command and its backend.
    const ProfileSet back = parse_profiles_json(write_profiles_json(set), "x.json");
    EXPECT_EQ(write_profiles_json(back), write_profiles_json(set));

    // A command that reports no steps has no start-up apart from its run.
    for (store::RunRecord& r : runs)
        r.jobs[0].steps = 0;
    EXPECT_FALSE(profiles_from_runs(runs, h200)
                     .require_command("mine", {"python3", "train.py", "--steps", "300"})
                     .partitions[0]
                     .startup_s);

    // Its argv changed since it was profiled: its work may have too.
    try {
        set.require_command("mine", {"python3", "train.py", "--steps", "600"});
        FAIL() << "a changed command was planned from an old profile";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("--steps 300"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("--steps 600"), std::string::npos) << e.what();
    }
    try {
        set.require_command("theirs", {"x"});
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("profiled commands: mine"), std::string::npos)
            << e.what();
    }
}

TEST(Profiles, FromRunsRefusesAJobProfiledOnTwoBackendsOrWithTwoCommands) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    std::vector<store::RunRecord> runs = {single_run(1, "green", "2g.35gb", 100, 200, 90),
                                          single_run(2, "mps", "1g.18gb", 50, 150, 90),
                                          single_run(3, "sequential", "whole GPU", 300, 400, 90)};
    try {
        profiles_from_runs(runs, h200);
        FAIL() << "a profile from green and mps runs";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("more than one backend (green, mps)"),
                  std::string::npos)
            << e.what();
    }
    std::vector<store::RunRecord> commands = {command_run(1, "mps", "1g.18gb", 40, 200),
                                              command_run(2, "sequential", "whole GPU", 10, 500)};
    commands[1].jobs[0].command.back() = "600";
    EXPECT_THROW(profiles_from_runs(commands, h200), Error);
}

TEST(Profiles, JsonRoundTripsAndRejectsUnknownKeysWithTheirPath) {
    ProfileSet set = profile_set(
        {job_profile("resnet18", 32, {{"1g.18gb", {50, 150}}, {"whole GPU", {200, 400}}}, 3.5)});
    set.correction = {0.9, 0.8, 4};
    set.provenance.command = "migscope profile export";
    set.provenance.steps = "cuda-graph";
    set.idle_state = "clocks-up";
    set.power_limit_w = 700;
    const ProfileSet back = parse_profiles_json(write_profiles_json(set), "x.json");
    EXPECT_EQ(write_profiles_json(back), write_profiles_json(set));
    EXPECT_EQ(back.power_limit_w, 700);
    set.power_limit_w.reset();  // written as null, read as none
    EXPECT_FALSE(parse_profiles_json(write_profiles_json(set), "x.json").power_limit_w);
    EXPECT_EQ(back.provenance.steps, "cuda-graph");
    EXPECT_EQ(back.idle_state, "clocks-up");
    EXPECT_DOUBLE_EQ(back.correction.dynamic_power, 0.8);
    EXPECT_EQ(back.jobs[0].partitions[1].partition, "whole GPU");

    std::string text = write_profiles_json(set);
    const std::string bad = text.replace(text.find("\"batch\""), 7, "\"bach\"");
    try {
        parse_profiles_json(bad, "x.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("jobs[0]"), std::string::npos) << e.what();
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
    }
    std::string v2 = write_profiles_json(set);
    v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
    try {
        parse_profiles_json(v2, "x.json");
        FAIL() << "version 2 was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "x.json: expected format \"migscope-profiles\" version 1, got "
                               "\"migscope-profiles\" version 2");
    }
    // The header is read like every field: a missing one names the file too.
    try {
        parse_profiles_json(R"({"version": 1})", "x.json");
        FAIL() << "a file without its format was read";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "x.json: format: missing field");
    }
    EXPECT_THROW(parse_profiles_json("{", "x.json"), Error);
    std::string state = write_profiles_json(set);
    state.replace(state.find("\"clocks-up\""), 11, "\"warm\"");
    try {
        parse_profiles_json(state, "x.json");
        FAIL() << "an unknown idle state was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("idle_state"), std::string::npos) << e.what();
    }
}

TEST(Profiles, EstimateIsMeasuredInterpolatedBySmsOrRefusedOutsideTheRange) {
    const JobProfile j = job_profile(
        "a", 8, {{"1g.18gb", {100, 150}}, {"3g.71gb", {240, 290}}, {"whole GPU", {500, 400}}});
    const auto measured = estimate(j, "1g.18gb", 16);
    ASSERT_TRUE(measured);
    EXPECT_FALSE(measured->interpolated);
    EXPECT_DOUBLE_EQ(measured->items_per_s, 100);
    const auto between = estimate(j, "2g.35gb", 32);  // 16 → 60 SMs: 16/44 of the way
    ASSERT_TRUE(between);
    EXPECT_TRUE(between->interpolated);
    EXPECT_NEAR(between->items_per_s, 100 + 140.0 * 16 / 44, 1e-9);
    EXPECT_NEAR(between->average_power_w, 150 + 140.0 * 16 / 44, 1e-9);
    EXPECT_FALSE(between->memory_utilization_pct);  // measured on neither side
    JobProfile memory = j;
    memory.partitions[0].memory_utilization_pct = testing::one(10);
    EXPECT_FALSE(estimate(memory, "2g.35gb", 32)->memory_utilization_pct);  // on one side only
    memory.partitions[1].memory_utilization_pct = testing::one(32);
    EXPECT_NEAR(*estimate(memory, "2g.35gb", 32)->memory_utilization_pct, 10 + 22.0 * 16 / 44,
                1e-9);
    EXPECT_DOUBLE_EQ(*estimate(memory, "1g.18gb", 16)->memory_utilization_pct, 10);
    const JobProfile no_small =
        job_profile("b", 8, {{"3g.71gb", {240, 290}}, {"whole GPU", {500, 400}}});
    EXPECT_FALSE(estimate(no_small, "1g.18gb", 16));
    const auto same_sms = estimate(no_small, "7g.141gb", 132);  // the whole GPU's SMs
    ASSERT_TRUE(same_sms);
    EXPECT_DOUBLE_EQ(same_sms->items_per_s, 500);
}

TEST(Profiles, AnotherPartitionWithTheSameSmsCountsAsMeasured) {
    // Green contexts give 3g.71gb 64 SMs on an H200, as 4g.71gb has.
    JobProfile j = job_profile("a", 8, {{"3g.71gb", {240, 290}}, {"whole GPU", {500, 400}}});
    j.partitions.front().sms = 64;
    const auto same = estimate(j, "4g.71gb", 64);
    ASSERT_TRUE(same);
    EXPECT_FALSE(same->interpolated);
    EXPECT_DOUBLE_EQ(same->items_per_s, 240);
}

TEST(Profiles, RequireNamesTheJobAndWhatIsKnown) {
    const ProfileSet set = profile_set({job_profile("resnet18", 32, {{"whole GPU", {1, 1}}}),
                                        job_profile("resnet18", 256, {{"whole GPU", {1, 1}}})});
    EXPECT_EQ(set.require("r", "resnet18", "train", 256).batch, 256);
    try {
        set.require("mine", "resnet99", "train", 32);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("job 'mine'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("resnet99"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("resnet18:train"), std::string::npos);
    }
    try {
        set.require("r", "resnet18", "train", std::nullopt);  // two batches: which one?
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("32, 256"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace migscope::plan
