// Tests of the planner's model: the figures of hand-computed plans and the bad inputs it refuses.
#include "plan/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "fixture.h"
#include "telemetry/attribution.h"

namespace migscope::plan {
namespace {

using testing::job_profile;
using testing::profile_set;

// a: 200 items/s on the whole GPU (300 W), 100 on 2g (200 W). b: 100 on the whole GPU (250 W),
// 80 on 2g (180 W), 50 on 1g (150 W). Idle 100 W. Batch 10, 100 steps: 1000 items each.
ProfileSet two_jobs() {
    return profile_set(
        {job_profile("a", 10, {{"2g.35gb", {100, 200}}, {"whole GPU", {200, 300}}}),
         job_profile("b", 10,
                     {{"1g.18gb", {50, 150}}, {"2g.35gb", {80, 180}}, {"whole GPU", {100, 250}}})});
}

std::vector<JobRequest> requests() {
    return {{"a", "a", "train", 10, 100, {}, {}}, {"b", "b", "train", 10, 100, {}, {}}};
}

// "mine", a command: 30 s on 1g (160 W), 12 s on the whole GPU (400 W) with 8 s of start-up.
JobProfile command_profile() {
    JobProfile mine =
        job_profile("", 0, {{"1g.18gb", {1 / 30.0, 160}}, {"whole GPU", {1 / 12.0, 400}}});
    mine.name = "mine";
    mine.command = {"python3", "train.py"};
    mine.item_unit = "runs";
    mine.items_per_step = 1;
    mine.partitions[1].startup_s = testing::one(8);
    return mine;
}

// Job "a" of two_jobs() and the command "mine".
std::vector<JobRequest> a_and_mine() {
    JobRequest r;
    r.name = "mine";
    r.command = command_profile().command;
    return {requests()[0], r};
}

mig::Layout layout(const std::string& text) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    return *mig::check_layout(mig::parse_layout(text, h200), h200).layout;
}

TEST(Model, TwoJobsSideBySide) {
    const ProfileSet set = two_jobs();
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {});
    const Prediction r = predict(p, {GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}});
    // a: 1000 items at 100/s = 10 s, dynamic 100 W; b: 1000 at 50/s = 20 s, dynamic 50 W.
    EXPECT_DOUBLE_EQ(r.makespan_s, 20);
    EXPECT_DOUBLE_EQ(r.energy_j, 100 * 20 + 100 * 10 + 50 * 20);
    EXPECT_DOUBLE_EQ(r.edp_js, 4000 * 20);
    // Whole-GPU work: a 5 s done in 10, b 10 s done in 20. Throughput: 15 s of work in 20 s (one
    // after another on the whole GPU takes 15 s: 1); the aggregate counts each partition busy.
    EXPECT_DOUBLE_EQ(r.throughput, 15.0 / 20);
    EXPECT_DOUBLE_EQ(r.aggregate_throughput, 0.5 + 0.5);
    EXPECT_DOUBLE_EQ(r.jobs[0].end_s, 10);
    EXPECT_DOUBLE_EQ(r.jobs[0].speed_fraction, 0.5);
    EXPECT_EQ(r.jobs[1].partition_label, "1g.18gb");
    // As `migscope run` attributes the 20 s window: idle 2000 J by partition size (32 : 16 SMs),
    // and each job's margin (its energy alone: without a correction nothing is left over).
    EXPECT_NEAR(r.jobs[0].energy_j, 2000.0 * 32 / 48 + 100 * 10, 1e-9);
    EXPECT_NEAR(r.jobs[1].energy_j, 2000.0 * 16 / 48 + 50 * 20, 1e-9);
    EXPECT_NEAR(r.idle_energy_j, 0, 1e-9);
    EXPECT_FALSE(r.corrected);
}

TEST(Model, ACommandsWorkIsOneRunOfItWhateverTheStepsSay) {
    ProfileSet set = two_jobs();
    // "mine" runs 30 s on 1g (160 W) and 12 s alone on the whole GPU (400 W), measured on MPS.
    JobProfile mine = command_profile();
    mine.backend = "mps";
    set.jobs.push_back(mine);
    std::vector<JobRequest> jobs = requests();
    JobRequest r;
    r.name = "mine";
    r.command = mine.command;
    r.work_steps = 100;  // a per-job step count does not apply to a command
    jobs.push_back(r);
    const Problem p = make_problem(jobs, set, mig::builtin_model("h200"), {});
    EXPECT_DOUBLE_EQ(p.jobs[2].items, 1);
    EXPECT_DOUBLE_EQ(p.jobs[2].on[0].time_s, 30);  // 1g.18gb: the first size
    EXPECT_DOUBLE_EQ(p.jobs[2].on[p.whole()].time_s, 12);
    bool said = false;
    for (const std::string& note : p.notes)
        said = said || note.find("mps: mine") != std::string::npos;
    EXPECT_TRUE(said) << "the plan says which backend the profiles came from";

    r.command = {"python3", "other.py"};
    jobs.back() = r;
    EXPECT_THROW(make_problem(jobs, set, mig::builtin_model("h200"), {}), Error);
}

TEST(Model, ACommandsStartUpIsNotSlowedDownInAMix) {
    ProfileSet set = two_jobs();
    set.correction = {0.8, 0.5, 3};
    // "mine": 30 s on 1g (160 W) and 12 s on the whole GPU, 5 s of each start-up.
    JobProfile mine = command_profile();
    mine.partitions[0].startup_s = testing::one(5);
    mine.partitions[1].startup_s = testing::one(5);
    set.jobs.push_back(mine);
    const Problem p = make_problem(a_and_mine(), set, mig::builtin_model("h200"), {});
    EXPECT_DOUBLE_EQ(p.jobs[1].on[0].startup_s, 5);
    const Prediction mix = predict(p, {GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}});
    // a: 10 s ÷ 0.8 = 12.5 s. mine: its 5 s start-up as alone, then 7.5 s at 0.8 (6 s of its
    // rest), then alone once a is done: the other 19 s; 31.5 s (not 5 + 25 ÷ 0.8 = 36.25 s, nor
    // 30 ÷ 0.8 = 37.5 s).
    EXPECT_DOUBLE_EQ(mix.jobs[0].end_s, 12.5);
    EXPECT_DOUBLE_EQ(mix.jobs[1].end_s, 31.5);
    EXPECT_DOUBLE_EQ(mix.makespan_s, 31.5);
    EXPECT_DOUBLE_EQ(mix.jobs[1].speed_fraction, 12 / 31.5);
    // The min-speed constraint counts its whole rest as in a mix.
    EXPECT_DOUBLE_EQ(p.jobs[1].on[0].speed_fraction, 12 / 36.25);
    // Dynamic power × the power correction while both run, alone after.
    EXPECT_DOUBLE_EQ(mix.energy_j, 100 * 31.5 + (100 + 60) * 0.5 * 12.5 + 60 * 19);
    // Alone on its partition nothing is corrected: its profiled run.
    const Prediction alone = predict(p, {GpuPlan{layout("2g.35gb+1g.18gb"), {{0, 1}, {}}}});
    EXPECT_FALSE(alone.corrected);
}

TEST(Model, ACommandsStartUpIsTakenOverEverySizeItWasMeasuredOn) {
    ProfileSet set = two_jobs();
    // "mine": 30 s on 1g with 5 s of start-up, 12 s on the whole GPU with 8 s: its start-up is
    // the median of both, 6.5 s, and its rest each size's own (25 and 4 s).
    JobProfile mine = command_profile();
    mine.partitions[0].startup_s = testing::one(5);
    set.jobs.push_back(mine);
    const Problem p = make_problem(a_and_mine(), set, mig::builtin_model("h200"), {});
    const JobOnSize& on_1g = p.jobs[1].on[0];
    const JobOnSize& whole = p.jobs[1].on[p.whole()];
    EXPECT_DOUBLE_EQ(on_1g.startup_s, 6.5);
    EXPECT_DOUBLE_EQ(on_1g.time_s, 25 + 6.5);
    EXPECT_DOUBLE_EQ(whole.startup_s, 6.5);
    EXPECT_DOUBLE_EQ(whole.time_s, 4 + 6.5);
}

TEST(Model, QueuedJobsStartWhenThePartitionFrees) {
    const ProfileSet set = two_jobs();
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {});
    const Prediction r = predict(p, {GpuPlan{layout("2g.35gb"), {{0, 1}}}});
    EXPECT_DOUBLE_EQ(r.jobs[1].start_s, 10);
    EXPECT_DOUBLE_EQ(r.jobs[1].end_s, 22.5);
    EXPECT_DOUBLE_EQ(r.energy_j, 100 * 22.5 + 100 * 10 + 80 * 12.5);
    EXPECT_DOUBLE_EQ(r.throughput, (5.0 + 10.0) / 22.5);
    EXPECT_DOUBLE_EQ(r.aggregate_throughput, (5.0 + 10.0) / 22.5);
    // A queue: `migscope run` probes no mix, so neither does the planner; it splits the dynamic
    // energy by partition size × busy seconds (a 888.9 J of 2000 rather than its own 1000 J).
    telemetry::AttributionInput run;
    run.energy_j = r.energy_j;
    run.duration_s = 22.5;
    run.idle_power_w = 100;
    run.partition_sms = {32, 32};
    run.busy_s = {10, 12.5};
    run.partition_share = {10 / 22.5, 12.5 / 22.5};
    const telemetry::Attribution a = telemetry::attribute_energy(run);
    EXPECT_NEAR(r.jobs[0].energy_j, a.energy_j[0], 1e-9);
    EXPECT_NEAR(r.jobs[1].energy_j, a.energy_j[1], 1e-9);
    EXPECT_NEAR(r.jobs[0].energy_j, 2250 * 10 / 22.5 + 2000 * 10 / 22.5, 1e-9);
}

TEST(Model, TheWholeGpuRunsJobsOneAfterAnotherAndScoresThroughputOne) {
    const ProfileSet set = two_jobs();
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {});
    const Prediction r = predict(p, {GpuPlan{std::nullopt, {{0, 1}}}});
    EXPECT_DOUBLE_EQ(r.makespan_s, 15);
    EXPECT_DOUBLE_EQ(r.energy_j, 300 * 5 + 250 * 10);
    EXPECT_DOUBLE_EQ(r.throughput, 1);
    EXPECT_DOUBLE_EQ(r.aggregate_throughput, 1);
    EXPECT_NEAR(r.idle_energy_j, 0, 1e-9);
}

TEST(Model, CorrectionsApplyOnlyWhenTwoPartitionsAreBusy) {
    ProfileSet set = two_jobs();
    set.correction = {0.8, 0.5, 3};
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {});
    const Prediction mix = predict(p, {GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}});
    // Both busy: a's 10 s take 12.5 s, b does 10 of its 20 s; then b alone: 10 s more.
    // Dynamic power (100 + 50) × 0.5 W while both run, b's 50 W after.
    EXPECT_DOUBLE_EQ(mix.jobs[0].end_s, 12.5);
    EXPECT_DOUBLE_EQ(mix.makespan_s, 22.5);
    EXPECT_DOUBLE_EQ(mix.energy_j, 100 * 22.5 + 150 * 0.5 * 12.5 + 50 * 10);
    EXPECT_TRUE(mix.corrected);
    // As `migscope run` attributes it: idle by partition size (32 : 16 SMs); each job's margin
    // is the GPU's 1437.5 J of dynamic energy minus the 1000 J its partner alone draws; the
    // 562.5 J left by time (12.5 : 22.5 s).
    EXPECT_NEAR(mix.jobs[0].energy_j, 2250.0 * 32 / 48 + 437.5 + 562.5 * 12.5 / 35, 1e-9);
    EXPECT_NEAR(mix.jobs[1].energy_j, 2250.0 * 16 / 48 + 437.5 + 562.5 * 22.5 / 35, 1e-9);
    EXPECT_NEAR(mix.jobs[0].energy_j + mix.jobs[1].energy_j, mix.energy_j, 1e-9);
    const Prediction alone = predict(p, {GpuPlan{layout("2g.35gb+1g.18gb"), {{0, 1}, {}}}});
    EXPECT_DOUBLE_EQ(alone.makespan_s, 22.5);
    EXPECT_FALSE(alone.corrected);
}

TEST(Model, ABoardAboveItsPowerLimitRunsEveryJobAtALowerClock) {
    ProfileSet set = two_jobs();
    set.power_limit_w = 200;
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {});
    const Plan plan = {GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}};
    // Together they want 100 + 150 W dynamic: the clock falls to r with 100 + 150 × r^k = 200.
    const double r = std::pow(100.0 / 150.0, 1 / kCapClockExponent);
    EXPECT_DOUBLE_EQ(cap_clock_ratio(100, 150, 200), r);
    EXPECT_DOUBLE_EQ(cap_clock_ratio(100, 100, 200), 1);
    EXPECT_DOUBLE_EQ(cap_clock_ratio(100, 150, std::nullopt), 1);
    // a's 10 s take 10 / r; b does 10 of its 20 s by then and the rest alone, under the limit.
    const Prediction capped = predict(p, plan);
    EXPECT_NEAR(capped.jobs[0].end_s, 10 / r, 1e-9);
    EXPECT_NEAR(capped.makespan_s, 10 / r + 10, 1e-9);
    // The board draws its limit while both run.
    EXPECT_NEAR(capped.energy_j, 200 * 10 / r + (100 + 50) * 10, 1e-9);
    set.power_limit_w.reset();
    EXPECT_DOUBLE_EQ(
        predict(make_problem(requests(), set, mig::builtin_model("h200"), {}), plan).makespan_s,
        20);
    // A limit at or below the idle power is not a board's.
    set.power_limit_w = 100;
    EXPECT_THROW(make_problem(requests(), set, mig::builtin_model("h200"), {}), Error);
}

TEST(Model, JobsWantingMoreThanTheMemoryBandwidthShareIt) {
    ProfileSet set = two_jobs();
    set.correction = {0.8, 0.5, 3};
    set.jobs[0].partitions[0].memory_utilization_pct = testing::one(70);  // a on 2g.35gb
    set.jobs[1].partitions[0].memory_utilization_pct = testing::one(80);  // b on 1g.18gb
    const Plan plan = {GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}};
    const auto predicted = [&] {
        return predict(make_problem(requests(), set, mig::builtin_model("h200"), {}), plan);
    };
    // Together they want 150 % of the bandwidth: both run at 100/150 of their speed alone, below
    // the correction's 0.8. a's 10 s take 15 s; b does 10 of its 20 s by then and the rest alone
    // (80 %: no sharing) in 10 s. The power is the correction's: memory-bound jobs still draw it.
    const Prediction shared = predicted();
    EXPECT_NEAR(shared.jobs[0].end_s, 15, 1e-9);
    EXPECT_NEAR(shared.makespan_s, 25, 1e-9);
    EXPECT_NEAR(shared.energy_j, 100 * 25 + 150 * 0.5 * 15 + 50 * 10, 1e-9);
    // A job whose memory use was not measured counts as none: 80 % alone shares nothing, and the
    // plan is the correction's alone (CorrectionsApplyOnlyWhenTwoPartitionsAreBusy).
    set.jobs[0].partitions[0].memory_utilization_pct.reset();
    EXPECT_DOUBLE_EQ(predicted().makespan_s, 22.5);
    // Under a power limit that slows the clock further, the clock decides: 100 + 75 × r^k = 150.
    set.jobs[0].partitions[0].memory_utilization_pct = testing::one(70);
    set.power_limit_w = 150;
    const double r = std::pow(50.0 / 75, 1 / kCapClockExponent);
    ASSERT_LT(0.8 * r, 100.0 / 150);
    EXPECT_NEAR(predicted().jobs[0].end_s, 10 / (0.8 * r), 1e-9);
}

TEST(Model, WeightsAreSecondsOfWholeGpuWork) {
    const ProfileSet set = two_jobs();
    const Problem p =
        make_problem({{"a", "a", "train", {}, {}, 30.0, {}}}, set, mig::builtin_model("h200"), {});
    EXPECT_DOUBLE_EQ(p.jobs[0].items, 30 * 200);
    EXPECT_DOUBLE_EQ(p.jobs[0].on[p.whole()].time_s, 30);
}

TEST(Model, SizesAreTheModelsProfilesThenTheWholeGpu) {
    const ProfileSet set = two_jobs();
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {});
    std::vector<std::string> labels;
    for (const Size& s : p.sizes)
        labels.push_back(s.label);
    EXPECT_EQ(labels, (std::vector<std::string>{"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb",
                                                "4g.71gb", "whole GPU"}));
    // a is not profiled below 2g; b's 1g.35gb is interpolated; both are said.
    EXPECT_FALSE(p.jobs[0].on[0].usable);
    EXPECT_TRUE(p.jobs[1].on[1].interpolated);
    std::string notes;
    for (const std::string& n : p.notes)
        notes += n + "\n";
    EXPECT_NE(notes.find("job 'b' on 1g.35gb"), std::string::npos) << notes;
    EXPECT_NE(notes.find("corrections are 1"), std::string::npos) << notes;
    for (const mig::Layout& l : p.layouts())
        EXPECT_NE(mig::to_string(l), "7g.141gb@0");
}

// Green contexts get their MIG profile's SMs (the driver grants a split off a green context
// exactly: 1g.35gb runs on 26, between the measured 1g.18gb and 2g.35gb); a size measured on a
// green context granted more (3g.71gb alone: 64) serves the size with those SMs (4g.71gb).
TEST(Model, GreenContextsGetTheirProfilesSmsAndAProfileCountsWhatItRanOn) {
    ProfileSet set = profile_set({job_profile("a", 10,
                                              {{"1g.18gb", {50, 150}},
                                               {"2g.35gb", {80, 180}},
                                               {"3g.71gb", {120, 220}},
                                               {"whole GPU", {200, 300}}})});
    set.jobs[0].partitions[2].sms = 64;  // 3g.71gb, measured as a layout's first split
    const Problem p = make_problem({{"a", "a", "train", 10, 100, {}, {}}}, set,
                                   mig::builtin_model("h200"), {}, PartitionKind::kGreen);
    std::vector<unsigned> sms;
    for (const Size& s : p.sizes)
        sms.push_back(s.sms);
    EXPECT_EQ(sms, (std::vector<unsigned>{16, 26, 32, 60, 64, 132}));
    const JobModel& a = p.jobs[0];
    // 1g.35gb: 26 SMs, 10/16 of the way from 50 to 80 items/s.
    EXPECT_TRUE(a.on[p.size_index("1g.35gb")].interpolated);
    EXPECT_DOUBLE_EQ(a.on[p.size_index("1g.35gb")].time_s, 1000.0 / (50 + 30 * 10.0 / 16));
    // 4g.71gb: the 64 SMs 3g.71gb ran on; 3g.71gb itself (60): between 32 and 64.
    EXPECT_FALSE(a.on[p.size_index("4g.71gb")].interpolated);
    EXPECT_DOUBLE_EQ(a.on[p.size_index("4g.71gb")].time_s, 1000.0 / 120);
    EXPECT_TRUE(a.on[p.size_index("3g.71gb")].interpolated);
    EXPECT_DOUBLE_EQ(a.on[p.size_index("3g.71gb")].time_s, 1000.0 / (80 + 40 * 28.0 / 32));
    std::string notes;
    for (const std::string& n : p.notes)
        notes += n + "\n";
    EXPECT_NE(notes.find("green contexts: each partition gets its MIG profile's SMs"),
              std::string::npos)
        << notes;
}

TEST(Model, BadInputNamesTheJobOrTheConstraint) {
    const mig::GpuModel& h200 = mig::builtin_model("h200");
    ProfileSet set = two_jobs();
    auto message = [&](const std::vector<JobRequest>& jobs, Constraints c = {}) {
        try {
            make_problem(jobs, set, h200, c);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::kInput);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message({{"x", "nope", "train", 10, 5, {}, {}}}).find("job 'x'"), std::string::npos);
    EXPECT_NE(message({{"a", "a", "train", 99, 5, {}, {}}}).find("batch 10, not 99"),
              std::string::npos);
    EXPECT_NE(message(requests(), {1.5}).find("impossible constraint"), std::string::npos);
    EXPECT_NE(message({{"a", "a", "train", 10, 0, {}, {}}}).find("work must be positive"),
              std::string::npos);
    set.jobs[0].peak_memory_gib = 200;
    EXPECT_NE(message(requests()).find("job 'a' fits no partition"), std::string::npos);
    set.jobs[0].peak_memory_gib.reset();
    set.jobs[1].partitions.pop_back();  // b without its whole-GPU profile
    EXPECT_NE(message(requests()).find("job 'b': no whole-GPU profile"), std::string::npos);
}

TEST(Model, MinSpeedAndMemoryMakePartitionsUnusable) {
    ProfileSet set = two_jobs();
    set.jobs[1].peak_memory_gib = 20;  // does not fit 1g.18gb's 16 GiB
    const Problem p = make_problem(requests(), set, mig::builtin_model("h200"), {0.6});
    EXPECT_FALSE(p.jobs[0].on[p.size_index("2g.35gb")].usable);  // keeps 0.5
    EXPECT_NE(p.jobs[0].on[p.size_index("2g.35gb")].refusal.find("min speed"), std::string::npos);
    EXPECT_TRUE(p.jobs[1].on[p.size_index("2g.35gb")].usable);  // keeps 0.8
    EXPECT_NE(p.jobs[1].on[p.size_index("1g.18gb")].refusal.find("20.0 GiB"), std::string::npos);
    EXPECT_THROW(predict(p, {GpuPlan{layout("2g.35gb+1g.18gb"), {{0}, {1}}}}), Error);
}

}  // namespace
}  // namespace migscope::plan
