// Slurm's GRES type names for MIG devices: the forms slurmd's NVML autodetection gives (from
// Slurm's gpu_nvml.c and types seen on real clusters), and a site's templates.
#include "report/slurm_gres.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "core/error.h"
#include "mig/catalog.h"

namespace migscope::report {
namespace {

std::string type(const char* model, const char* profile, const char* naming = "nvml") {
    const mig::GpuModel& m = mig::builtin_model(model);
    return slurm_gres_type(m, m.require(profile), naming);
}

TEST(SlurmGpuName, LowerCaseUnderscoresAndMigParentsCutAtTheFirstDash) {
    EXPECT_EQ(slurm_gpu_name("NVIDIA H200", SlurmGpuName::kWholeGpu), "nvidia_h200");
    EXPECT_EQ(slurm_gpu_name("NVIDIA H200 NVL", SlurmGpuName::kMigParent), "nvidia_h200_nvl");
    EXPECT_EQ(slurm_gpu_name("NVIDIA A100-SXM4-80GB", SlurmGpuName::kWholeGpu),
              "nvidia_a100-sxm4-80gb");
    EXPECT_EQ(slurm_gpu_name("NVIDIA A100-SXM4-80GB", SlurmGpuName::kMigParent), "nvidia_a100");
    EXPECT_EQ(slurm_gpu_name("NVIDIA A100 80GB PCIe", SlurmGpuName::kMigParent),
              "nvidia_a100_80gb_pcie");
}

TEST(SlurmGresType, NvmlNamesAsSlurmdReportsThem) {
    // Slurm 23.02.6 and later: the GPU's name and NVIDIA's profile (the MIG device's NVML name).
    EXPECT_EQ(type("h200", "3g.71gb"), "nvidia_h200_3g.71gb");
    EXPECT_EQ(type("h200", "2g.35gb"), "nvidia_h200_2g.35gb");
    EXPECT_EQ(type("h100-80gb", "3g.40gb"), "nvidia_h100_80gb_hbm3_3g.40gb");
    EXPECT_EQ(type("h100-80gb", "1g.10gb"), "nvidia_h100_80gb_hbm3_1g.10gb");
    EXPECT_EQ(type("a100-80gb", "3g.40gb"), "nvidia_a100_3g.40gb");
    EXPECT_EQ(type("h100-94gb", "1g.12gb"), "nvidia_h100_nvl_1g.12gb");
    // Slurm 21.08 to 23.02.5: slices and memory in GiB, rounded (FACTS.md: H200 3g = 69.75 GiB).
    EXPECT_EQ(type("h200", "3g.71gb", "nvml-legacy"), "nvidia_h200_3g.70gb");
    EXPECT_EQ(type("h200", "1g.18gb", "nvml-legacy"), "nvidia_h200_1g.16gb");
    EXPECT_EQ(type("h200", "2g.35gb", "nvml-legacy"), "nvidia_h200_2g.33gb");  // 32.5: away
    EXPECT_EQ(type("h100-80gb", "3g.40gb", "nvml-legacy"), "nvidia_h100_80gb_hbm3_3g.40gb");
    EXPECT_EQ(type("a100-80gb", "3g.40gb", "nvml-legacy"), "nvidia_a100_3g.39gb");
    EXPECT_EQ(type("a100-80gb", "7g.80gb", "nvml-legacy"), "nvidia_a100_7g.79gb");
    EXPECT_EQ(type("a100-40gb", "3g.20gb", "nvml-legacy"), "nvidia_a100_3g.20gb");
}

TEST(SlurmGresType, SiteTemplates) {
    EXPECT_EQ(type("h200", "3g.71gb", "nvidia_h200_nvl_{profile}"), "nvidia_h200_nvl_3g.71gb");
    EXPECT_EQ(type("h200", "3g.71gb", "{profile}"), "3g.71gb");
    EXPECT_EQ(type("h200", "4g.71gb", "h200-{size}"), "h200-4g.70gb");
    EXPECT_EQ(type("h200", "1g.18gb", "{gpu}_{gpu}"), "nvidia_h200_nvidia_h200");
    for (const char* bad : {"{model}", "{gpu", "a b{profile}", "{profile}:2", "{profile},x", "",
                            "x\n{profile}", "{profile}=1", "#{profile}"}) {
        EXPECT_THROW(type("h200", "3g.71gb", bad), Error) << bad;
    }
    // Unknown memory: no legacy name; the NVML form needs none.
    EXPECT_THROW(type("b200", "7g.180gb", "nvml-legacy"), Error);
    EXPECT_EQ(type("b200", "7g.180gb"), "nvidia_b200_7g.180gb");
}

TEST(SlurmGresType, EveryProfileOfEveryModelIsATypeAndSizesStayApart) {
    const std::regex kType("[A-Za-z0-9._+-]+");
    for (const mig::GpuModel& model : mig::builtin_catalog()) {
        if (nvml_board_name(model).empty()) {
            // A board whose NVML name is not known: the NVML naming is refused, not guessed.
            EXPECT_EQ(model.key, "h100-96gb");
            EXPECT_THROW(slurm_gres_type(model, model.profiles.front()), Error);
            continue;
        }
        std::set<std::string> seen;
        for (const mig::Profile& p : model.profiles) {
            const std::string t = slurm_gres_type(model, p);
            EXPECT_TRUE(std::regex_match(t, kType)) << t;
            EXPECT_TRUE(seen.insert(t).second) << model.key << ": " << t;
        }
    }
}

}  // namespace
}  // namespace migscope::report
