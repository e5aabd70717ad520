// Test fixture: a results store with realistic synthetic runs for the report, written through the
// Store API: scaling runs, two layouts with three repetitions each and their baselines, traces.
#pragma once

#include <string>

namespace migscope::test {

// What the fixture holds, for the tests' expectations.
struct ReportFixture {
    // resnet50 train and bert-base train + finetune, alone on 16, 32 and 60 SMs (green, two
    // repetitions each; one resnet50 run on 16 SMs more, without energy) and on the whole GPU
    // (sequential runs and the layouts' baselines).
    static constexpr int kScalingWorkloads = 2;
    // green 4g.71gb+3g.71gb and 3g.71gb+3g.71gb, resnet50:train:32 with bert-base:finetune:8.
    static constexpr int kLayouts = 2;
    static constexpr int kRepetitions = 3;
    // Two per workload, energy and speedup bars and one Pareto plot for the one job set, one
    // power trace per layout.
    static constexpr int kFigures = 2 * kScalingWorkloads + 3 + kLayouts;
    // The warning of the run without energy.
    static constexpr const char* kNoEnergyWarning = "no power source: energy not measured";
};

// Creates the store at `db_path` (which must not exist) and fills it.
void write_report_fixture(const std::string& db_path);

}  // namespace migscope::test
