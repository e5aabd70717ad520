// Tests of each process's power alone from its job's profile: which profile a job names, the whole
// GPU when time-sliced, the SM share on MPS profiles only, and why there is none.
#include "exporter/profile_power.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

using namespace migscope;
using namespace migscope::exporter;
namespace fs = std::filesystem;

namespace {

plan::PartitionProfile size(const std::string& partition, unsigned sms, double watts) {
    plan::PartitionProfile p;
    p.partition = partition;
    p.sms = sms;
    p.items_per_s = plan::measured_of({1000});
    p.average_power_w = plan::measured_of({watts});
    p.window_s = 5;
    return p;
}

plan::JobProfile job(const std::string& workload, int64_t batch, const std::string& backend,
                     std::vector<plan::PartitionProfile> partitions) {
    plan::JobProfile j;
    j.workload = workload;
    j.mode = "train";
    j.batch = batch;
    j.backend = backend;
    j.item_unit = "images";
    j.items_per_step = static_cast<double>(batch);
    j.partitions = std::move(partitions);
    return j;
}

plan::ProfileSet set_of(std::vector<plan::JobProfile> jobs, double idle_w) {
    plan::ProfileSet s;
    s.gpu_model = "h200";
    s.idle_power_w = plan::measured_of({idle_w});
    s.jobs = std::move(jobs);
    return s;
}

// The H200's green profiles of resnet18 (2026-12-01..03): 16 SMs 206 W, 64 SMs 347 W, whole 448 W.
plan::JobProfile resnet18_green(int64_t batch = 32) {
    return job("resnet18", batch, "green",
               {size("1g.18gb", 16, 206), size("3g.71gb", 64, 347), size("whole GPU", 132, 448)});
}

}  // namespace

TEST(ProfilePowers, TimeSlicedAProcessRunsAloneOnTheWholeGpu) {
    const ProfilePowers powers({set_of({resnet18_green()}, 131)});
    const PowerAlone p = powers.alone("h200", "resnet18:train:32", false, std::nullopt);
    ASSERT_TRUE(p.dynamic_w) << p.missing;
    EXPECT_DOUBLE_EQ(*p.dynamic_w, 448 - 131);
    // Without a batch: the one batch profiled.
    EXPECT_DOUBLE_EQ(powers.alone("h200", "resnet18:train", false, std::nullopt).dynamic_w.value(),
                     317);
    // An MPS share of 1 (or none) is the whole GPU too, whatever backend profiled it.
    EXPECT_DOUBLE_EQ(
        powers.alone("h200", "resnet18:train:32", true, std::nullopt).dynamic_w.value(), 317);
}

TEST(ProfilePowers, AnMpsClientOnItsShareFromMpsProfilesOnly) {
    const plan::JobProfile mps =
        job("resnet18", 32, "mps",
            {size("1g.18gb", 16, 180), size("3g.71gb", 60, 261), size("whole GPU", 132, 448)});
    const ProfilePowers powers({set_of({mps}, 131)});
    // 0.5 × 132 = 66 SMs: 261 W + 6/72 of the way to 448 W.
    EXPECT_NEAR(powers.alone("h200", "resnet18:train:32", true, 0.5).dynamic_w.value(),
                261 + (448 - 261) * 6.0 / 72 - 131, 1e-9);
    // 3g.71gb's 60 SMs as MPS runs them: 45 %, 59.4 SMs, within a percent of the profiled 60.
    EXPECT_DOUBLE_EQ(powers.alone("h200", "resnet18:train:32", true, 0.45).dynamic_w.value(),
                     261 - 131);
    // Green partitions draw otherwise than MPS shares: not used for an MPS client.
    const PowerAlone green = ProfilePowers({set_of({resnet18_green()}, 131)})
                                 .alone("h200", "resnet18:train:32", true, 0.5);
    EXPECT_FALSE(green.dynamic_w);
    EXPECT_NE(green.missing.find("profiled on green partitions, not on MPS"), std::string::npos)
        << green.missing;
    // The first file that can answer does: the green one cannot, the MPS one can.
    const ProfilePowers both({set_of({resnet18_green()}, 131), set_of({mps}, 131)});
    EXPECT_TRUE(both.alone("h200", "resnet18:train:32", true, 0.5).dynamic_w);
}

TEST(ProfilePowers, WhyThereIsNone) {
    const ProfilePowers powers({set_of({resnet18_green(32), resnet18_green(256)}, 131)});
    EXPECT_NE(
        powers.alone("h200", "", false, std::nullopt).missing.find("names no job (MIGSCOPE_JOB)"),
        std::string::npos);
    // Two batches profiled: "resnet18:train" names neither.
    EXPECT_EQ(powers.alone("h200", "resnet18:train", false, std::nullopt).missing,
              "no --profiles file profiles job 'resnet18:train'");
    EXPECT_TRUE(powers.alone("h200", "resnet18:train:256", false, std::nullopt).dynamic_w);
    const ProfilePowers partial(
        {set_of({job("vit-b16", 16, "green", {size("3g.71gb", 64, 418)})}, 131)});
    EXPECT_EQ(partial.alone("h200", "vit-b16:train:16", false, std::nullopt).missing,
              "job 'vit-b16:train:16' has no whole-GPU profile");
    EXPECT_TRUE(ProfilePowers().empty());
}

// Profiles answer for their own GPU model only: an H200's are no H100's power alone or idle.
TEST(ProfilePowers, OnlyProfilesOfTheGpusModelAnswer) {
    plan::ProfileSet set = set_of({resnet18_green()}, 131);
    set.idle_state = "clocks-up";
    const ProfilePowers powers({set});
    EXPECT_EQ(powers.alone("h100-80gb", "resnet18:train:32", false, std::nullopt).missing,
              "a --profiles file holds profiles of h200, not of this GPU (h100-80gb)");
    EXPECT_FALSE(powers.alone("", "resnet18:train:32", false, std::nullopt).dynamic_w);
    EXPECT_EQ(powers.clocks_up_idle_w("h200"), 131);
    EXPECT_FALSE(powers.clocks_up_idle_w("h100-80gb"));
    // An idle power measured in another state (deep idle) is not the clocks-up one.
    set.idle_state = "deep";
    EXPECT_FALSE(ProfilePowers({set}).clocks_up_idle_w("h200"));
}

TEST(ProfilePowers, AFileThatIsNoProfilesIsAnInputErrorNamingIt) {
    const fs::path path =
        fs::temp_directory_path() / ("migscope-profile-power-" + std::to_string(::getpid()));
    std::ofstream(path) << "{\"format\": \"something else\"}";
    try {
        ProfilePowers::from_files({path.string()});
        FAIL() << "a file that is no profiles was read";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
    fs::remove(path);
}

// The activity probe slows a job and lowers its power (resnet18:32 alone on an H100: 392.7 W with
// kernel records against 434.2 W without): profiles made without it come with a caveat.
TEST(ProfilePowers, ProfilesMadeWithoutTheProbeComeWithACaveat) {
    plan::ProfileSet set = set_of({resnet18_green()}, 131);
    set.provenance.measured_from = "2026-12-05T16:31:00Z";
    set.provenance.measured_to = "2026-12-05T16:34:00Z";
    for (const auto& [injection, said] : std::vector<std::pair<std::string, std::string>>{
             {"none", "ran without the activity probe (cuda_injection: none)"},
             {"", "do not say whether their runs loaded the activity probe"},
             {"unknown", "do not say whether their runs loaded the activity probe"},
             {"migscope-activity kernels", ""},
             {"migscope-activity kernels-sampled", ""},
             {"migscope-activity graphs", ""}}) {
        set.provenance.cuda_injection = injection;
        const PowerAlone p =
            ProfilePowers({set}).alone("h200", "resnet18:train:32", false, std::nullopt);
        ASSERT_TRUE(p.dynamic_w) << p.missing;
        if (said.empty()) {
            EXPECT_EQ(p.caveat, "") << injection;
            // Not said by the process's probe, or the same kind: nothing to say.
            EXPECT_EQ(ProfilePowers({set})
                          .alone("h200", "resnet18:train:32", false, std::nullopt,
                                 injection.substr(injection.rfind(' ') + 1))
                          .caveat,
                      "");
        } else {
            EXPECT_NE(p.caveat.find(said), std::string::npos) << injection << ": " << p.caveat;
            EXPECT_NE(p.caveat.find("2026-12-05T16:31:00Z"), std::string::npos) << p.caveat;
        }
    }
    // Profiled under the kernel records, run under the graph records: their costs differ.
    set.provenance.cuda_injection = "migscope-activity kernels";
    EXPECT_NE(ProfilePowers({set})
                  .alone("h200", "resnet18:train:32", false, std::nullopt, "graphs")
                  .caveat.find("ran under the probe recording kernels, processes whose probe "
                               "records graphs"),
              std::string::npos);
    // Sampled kernel records cost less than all of them (H100: -2.8 % power against -5.8 %).
    EXPECT_NE(ProfilePowers({set})
                  .alone("h200", "resnet18:train:32", false, std::nullopt, "kernels-sampled")
                  .caveat.find("processes whose probe records kernels-sampled"),
              std::string::npos);
}
