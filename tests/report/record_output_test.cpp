// Golden tests of the stored runs' printers (report/record_output.h): every format of the results
// list, export and show tables, the jobs CSV and one run's JSON, over the report fixture's store.
#include "report/record_output.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "golden.h"
#include "report_fixture.h"
#include "store/store.h"

namespace migscope::report {
namespace {

namespace fs = std::filesystem;

class RecordOutput : public ::testing::Test {
  protected:
    void SetUp() override {
        path_ = fs::path(testing::TempDir()) /
                ("record-output-" + std::to_string(::getpid()) + ".db");
        fs::remove(path_);
        test::write_report_fixture(path_.string());
        store::Store db = store::Store::open(path_.string());
        runs_ = db.list_runs();
        ASSERT_FALSE(runs_.empty());
        // The layout runs with their jobs (the first one of the fixture's that ran several).
        for (const store::RunRecord& r : runs_) {
            if (r.jobs.size() > 1) {
                mix_ = db.get_run(r.id);
                break;
            }
        }
        ASSERT_TRUE(mix_);
    }
    void TearDown() override { fs::remove(path_); }

    fs::path path_;
    std::vector<store::RunRecord> runs_;
    std::optional<store::RunRecord> mix_;
};

// Outputs no table prints.
TEST_F(RecordOutput, TheJobsCsvAndOneRunsJsonMatchTheirGoldenFiles) {
    std::ostringstream jobs;
    print_jobs_csv(runs_, jobs);
    test::expect_golden(jobs.str(), "jobs.csv");
    test::expect_golden(record_json(*mix_).dump(1) + "\n", "run-record.json");
}

TEST_F(RecordOutput, ResultsListEveryFormat) {
    test::expect_golden_formats(runs_list_printers(), runs_, "results-list");
}

// Two runs: one alone, one with several jobs (the whole store's JSON is results-list.json's).
TEST_F(RecordOutput, ResultsExportEveryFormat) {
    const std::vector<store::RunRecord> two = {runs_.front(), *mix_};
    test::expect_golden_formats(runs_export_printers(), two, "results-export");
}

TEST_F(RecordOutput, ResultsShowEveryFormat) {
    const std::vector<store::RunRecord> no_host;
    test::expect_golden_formats(stored_run_printers(), StoredRun{*mix_, no_host}, "results-show");
}

}  // namespace
}  // namespace migscope::report
