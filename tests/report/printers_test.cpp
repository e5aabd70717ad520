// Golden tests of the printers tables of gpus and layouts (core/printers.h): each format each
// table registers against golden/OUTPUT.FORMAT; a format added without its golden file fails.
// The stored runs' tables are walked in record_output_test.cpp, other modules' in their own tests.
#include <gtest/gtest.h>


#include "golden.h"
#include "mig/layout.h"
#include "mig/mig_parted.h"
#include "report/gpu_output.h"
#include "report/layout_output.h"

namespace migscope::report {
namespace {

// Two GPUs as gpus_json writes them: one that answers everything, one that answers little.
nlohmann::json gpus_fixture() {
    nlohmann::json whole = {{"index", 0},
                            {"name", "NVIDIA H200"},
                            {"uuid", "GPU-11111111-2222-3333-4444-555555555555"},
                            {"catalog_model", "h200"},
                            {"sm_count", 132},
                            {"sm_count_source", "catalog"},
                            {"memory_total_mib", 143771.0},
                            {"memory_used_mib", 512.25},
                            {"mig_mode_current", "enabled"},
                            {"mig_mode_pending", "disabled"},
                            {"power_limit_w", 700.0},
                            {"power_instant_w", 92.5},
                            {"power_average_w", 90.0},
                            {"energy_counter_j", 123456.789},
                            {"sm_clock_mhz", 1980},
                            {"memory_clock_mhz", 3201},
                            {"gpu_utilization_pct", 7},
                            {"memory_utilization_pct", 1},
                            {"temperature_c", 31},
                            {"throttle_reasons", {"gpu_idle"}}};
    nlohmann::json little = whole;
    little["index"] = 1;
    for (const char* key :
         {"name", "uuid", "catalog_model", "sm_count", "sm_count_source", "memory_total_mib",
          "memory_used_mib", "power_limit_w", "power_instant_w", "power_average_w",
          "energy_counter_j", "sm_clock_mhz", "memory_clock_mhz", "gpu_utilization_pct",
          "memory_utilization_pct", "temperature_c", "throttle_reasons"})
        little[key] = nullptr;
    little["mig_mode_current"] = "unsupported";
    little["mig_mode_pending"] = "unsupported";
    return {{"driver_version", "580.95.05"},
            {"cuda_driver_version", "13.0"},
            {"nvml_library", "libnvidia-ml.so.1"},
            {"gpus", {whole, little}}};
}

TEST(GpuPrinters, EveryFormat) {
    test::expect_golden_formats(gpus_printers(), gpus_fixture(), "gpus");
}

TEST(LayoutPrinters, TheListEveryFormat) {
    const mig::GpuModel& model = mig::builtin_model("h200");
    mig::EnumerateOptions options;
    options.maximality = mig::Maximality::kMaximalOnly;
    const std::vector<mig::Layout> layouts = mig::enumerate_layouts(model, options);
    ASSERT_FALSE(layouts.empty());
    test::expect_golden_formats(layout_list_printers(), LayoutList{layouts, model}, "layouts");
}

TEST(LayoutPrinters, ChecksEveryFormat) {
    const mig::GpuModel& model = mig::builtin_model("h200");
    std::vector<std::pair<std::string, mig::LayoutCheck>> checks;
    for (const std::string request : {"3g@4+2x1g", "4g.71gb+4g.71gb", "4g.71gb+2g.35gb+1g.18gb"})
        checks.emplace_back(request, mig::check_layout(mig::parse_layout(request, model), model));
    ASSERT_FALSE(checks[1].second.layout);  // two 4g do not fit: one invalid line
    test::expect_golden_formats(layout_check_printers(), LayoutChecks{checks, model},
                                "layouts-check");
}

TEST(LayoutPrinters, AMigPartedFileEveryFormat) {
    const mig::GpuModel& model = mig::builtin_model("h200");
    const std::vector<mig::MigPartedConfig> configs = mig::parse_mig_parted(R"(
version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false
  mixed:
    - devices: [0, 1]
      mig-enabled: true
      mig-devices:
        "3g.71gb": 1
        "2g.35gb": 1
        "1g.18gb": 2
  too-big:
    - devices: all
      mig-enabled: true
      mig-devices:
        "4g.71gb": 2
)");
    const std::vector<mig::EntryVerdict> verdicts = mig::check_mig_parted(configs, model);
    test::expect_golden_formats(mig_parted_check_printers(),
                                MigPartedCheck{configs, verdicts, model}, "layouts-mig-parted");
}

// One --format option serves the list, --check and --mig-parted.
TEST(LayoutPrinters, TheThreeOutputsOfferTheSameFormats) {
    EXPECT_EQ(layout_check_printers().names(), layout_list_printers().names());
    EXPECT_EQ(mig_parted_check_printers().names(), layout_list_printers().names());
}

}  // namespace
}  // namespace migscope::report
