// Tests of CSV / JSON-lines trace output: one schema, empty values, relative time and energy.
#include "report/trace_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

using namespace migscope;
using namespace migscope::report;

namespace {
telemetry::Sample sample(SteadyTime origin) {
    telemetry::Sample s;
    s.time = origin + std::chrono::milliseconds(1500);
    s.power_instant_w = 650.5;
    s.energy_j = 1000.0 + 975.75;
    s.sm_clock_mhz = 1980;
    s.clocks_event_reasons = 4;
    return s;
}
}  // namespace

TEST(TraceWriter, CsvHasOneColumnPerFieldAndEmptyCellsForMissingValues) {
    std::ostringstream out;
    const SteadyTime origin = SteadyClock::now();
    TraceWriter writer(out, TraceFormat::kCsv, origin, 1000.0);
    writer.write_header();
    writer.write(sample(origin));
    std::istringstream lines(out.str());
    std::string header, row;
    std::getline(lines, header);
    std::getline(lines, row);
    EXPECT_EQ(header.rfind("t_s,energy_j,power_instant_w,power_average_w,sm_clock_mhz", 0), 0u);
    const auto columns = [](const std::string& s) {
        return std::count(s.begin(), s.end(), ',') + 1;
    };
    EXPECT_EQ(columns(header), columns(row));
    EXPECT_EQ(columns(header), static_cast<long>(trace_fields().size() + 2));
    EXPECT_EQ(row.rfind("1.500000,975.75,650.5,,1980,", 0), 0u) << row;
}

TEST(TraceWriter, JsonLinesUseNullForMissingValues) {
    std::ostringstream out;
    const SteadyTime origin = SteadyClock::now();
    TraceWriter writer(out, TraceFormat::kJsonLines, origin, std::nullopt);
    writer.write_header();
    writer.write(sample(origin));
    const nlohmann::json j = nlohmann::json::parse(out.str());
    EXPECT_DOUBLE_EQ(j["t_s"].get<double>(), 1.5);
    EXPECT_TRUE(j["energy_j"].is_null());  // no energy origin given
    EXPECT_DOUBLE_EQ(j["power_instant_w"].get<double>(), 650.5);
    EXPECT_TRUE(j["power_average_w"].is_null());
    EXPECT_EQ(j["clocks_event_reasons"].get<int>(), 4);
    EXPECT_EQ(j.size(), trace_fields().size() + 2);
}
