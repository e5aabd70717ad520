// RAPL power source over a fake powercap tree: package domains summed, wrap-around, no access.
#include "telemetry/rapl_power_source.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace migscope::telemetry {
namespace {

namespace fs = std::filesystem;

class RaplTest : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("migscope-rapl-" + std::to_string(::getpid()));
        fs::create_directories(root_ / "intel-rapl:0");
        fs::create_directories(root_ / "intel-rapl:1");
        fs::create_directories(root_ / "intel-rapl:0:0");  // a subdomain: not counted
        write("intel-rapl:0/max_energy_range_uj", 1000000000);
        write("intel-rapl:1/max_energy_range_uj", 1000000000);
        write("intel-rapl:0:0/energy_uj", 5);
        write("intel-rapl:0/energy_uj", 999000000);  // 999 J, 1 J from wrapping
        write("intel-rapl:1/energy_uj", 10000000);
    }
    void TearDown() override { fs::remove_all(root_); }
    void write(const std::string& rel, unsigned long long value) {
        std::ofstream(root_ / rel) << value << '\n';
    }
    fs::path root_;
};

TEST_F(RaplTest, SumsPackagesSinceStartAcrossAWrap) {
    RaplPowerSource source(root_.string());
    EXPECT_DOUBLE_EQ(*source.read(SampleScope::kAll).energy_j, 0.0);
    write("intel-rapl:0/energy_uj", 2000000);   // wrapped: +1 J +2 J
    write("intel-rapl:1/energy_uj", 15000000);  // +5 J
    const Sample s = source.read(SampleScope::kAll);
    EXPECT_NEAR(*s.energy_j, 8.0, 1e-9);
    ASSERT_TRUE(s.power_instant_w);
    EXPECT_GT(*s.power_instant_w, 0.0);
}

TEST_F(RaplTest, NoDomainsIsUnavailable) {
    try {
        RaplPowerSource source((root_ / "missing").string());
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
    }
}

}  // namespace
}  // namespace migscope::telemetry
