// `migscope report` end to end: a report from a stored fixture, checked in headless Chromium
// (it loads, every plot is there, no console messages), and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/report_fixture.h"
#include "run_process.h"
#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using migscope::test::ReportFixture;

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// The program's path from PATH; empty when it is not installed.
std::string find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const fs::path candidate = fs::path(dir) / name;
        if (!dir.empty() && access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    }
    return "";
}

class ReportCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(testing::TempDir()) /
               ("report-" +
                std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "results.db").string();
    }
    ProcessResult migscope(std::vector<std::string> args,
                           const std::map<std::string, std::string>& env = {}) {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        return run_process(args, env);
    }
    fs::path dir_;
    std::string db_;
};

TEST_F(ReportCommand, WritesAReportThatHeadlessChromiumLoadsWithEveryPlot) {
    migscope::test::write_report_fixture(db_);
    const fs::path html = dir_ / "report.html";
    const ProcessResult r = migscope({"report", db_, "-o", html.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, html.string() + "\n");
    EXPECT_NE(r.err.find("report: drawing " + std::to_string(ReportFixture::kFigures) + " plots"),
              std::string::npos)
        << r.err;
    // The plots are also files beside the page: report-plots/NAME.svg and .png.
    size_t svgs = 0, pngs = 0;
    for (const auto& entry : fs::directory_iterator(dir_ / "report-plots")) {
        svgs += entry.path().extension() == ".svg" && fs::file_size(entry.path()) > 0;
        pngs += entry.path().extension() == ".png" && fs::file_size(entry.path()) > 0;
    }
    EXPECT_EQ(svgs, static_cast<size_t>(ReportFixture::kFigures));
    EXPECT_EQ(pngs, static_cast<size_t>(ReportFixture::kFigures));

    // CI installs chromium (scripts/install-deps.sh): its absence is a failure, not a skip.
    const std::string chromium = find_program("chromium");
    ASSERT_FALSE(chromium.empty())
        << "chromium not found in PATH: install the Debian package chromium (install-deps.sh)";
    const ProcessResult browser = run_process(
        {"/usr/bin/timeout", "120", chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--enable-logging=stderr", "--v=0", "--user-data-dir=" + (dir_ / "chromium").string(),
         "--dump-dom", "file://" + html.string()});
    ASSERT_EQ(browser.exit_code, 0) << browser.err;
    const std::string& dom = browser.out;
    EXPECT_NE(dom.find("</html>"), std::string::npos) << dom.substr(0, 500);
    EXPECT_EQ(count(dom, "<svg"), static_cast<size_t>(ReportFixture::kFigures));
    // The page's own script ran and found every plot in place.
    EXPECT_NE(dom.find("data-report-check=\"ok\""), std::string::npos) << dom.substr(0, 500);
    // Chromium logs every console message and uncaught error as "CONSOLE"; the page logs none.
    EXPECT_EQ(browser.err.find("CONSOLE"), std::string::npos) << browser.err;
    EXPECT_EQ(browser.err.find("Uncaught"), std::string::npos) << browser.err;
}

TEST_F(ReportCommand, PlotsGoWherePlotsDirSaysAndThePageLinksThere) {
    migscope::test::write_report_fixture(db_);
    const ProcessResult r = migscope(
        {"report", db_, "-o", (dir_ / "r.html").string(), "--plots-dir", (dir_ / "figs").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir_ / "figs" / "pareto-1.svg"));
    EXPECT_TRUE(fs::exists(dir_ / "figs" / "pareto-1.png"));
    std::ifstream in(dir_ / "r.html");
    std::stringstream page;
    page << in.rdbuf();
    EXPECT_NE(page.str().find("href=\"figs/pareto-1.svg\""), std::string::npos);
}

TEST_F(ReportCommand, AnEmptyStoreGivesAPageWithoutPlots) {
    migscope::store::Store::open(db_, migscope::store::OpenMode::kCreate);
    const ProcessResult r = migscope({"report", db_, "-o", (dir_ / "r.html").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(dir_ / "r.html");
    std::stringstream page;
    page << in.rdbuf();
    EXPECT_NE(page.str().find("data-figures=\"0\""), std::string::npos);
}

TEST_F(ReportCommand, BadInputExitsTwoNamingTheProblem) {
    ProcessResult r =
        migscope({"report", (dir_ / "missing.db").string(), "-o", (dir_ / "r.html").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("missing.db"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "r.html"));

    std::ofstream(dir_ / "not-a-db.txt") << "hello, this is not SQLite\n";
    r = migscope({"report", (dir_ / "not-a-db.txt").string(), "-o", (dir_ / "r.html").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not-a-db.txt"), std::string::npos) << r.err;

    r = migscope({"report"});
    EXPECT_EQ(r.exit_code, 2);

    r = migscope({"report", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("--plots-dir"), std::string::npos);
    EXPECT_NE(r.out.find("gnuplot"), std::string::npos);
}

TEST_F(ReportCommand, WithoutGnuplotExitsThreeNamingThePackageAndLeavesNoPage) {
    migscope::test::write_report_fixture(db_);
    const ProcessResult r = migscope({"report", db_, "-o", (dir_ / "r.html").string()},
                                     {{"PATH", (dir_ / "empty-path").string()}});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("gnuplot-nox"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "r.html"));
}

}  // namespace
