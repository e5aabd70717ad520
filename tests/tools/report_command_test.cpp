// `migscope report` end to end: a report from a stored fixture, checked in headless Chromium at
// 1400 px (every plot drawn with its data, nothing wider than the window, no console messages),
// the SVG/PNG export, a machine without gnuplot, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "browser_check.h"
#include "report/report_fixture.h"
#include "run_process.h"
#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using migscope::test::ReportFixture;

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

TEST_F(ReportCommand, WritesAReportWhosePlotsHeadlessChromiumDraws) {
    migscope::test::write_report_fixture(db_);
    const fs::path html = dir_ / "report.html";
    // Nothing beside migscope is needed: not even gnuplot on the PATH.
    const ProcessResult r =
        migscope({"report", db_, "-o", html.string()}, {{"PATH", (dir_ / "empty-path").string()}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, html.string() + "\n");
    EXPECT_NE(
        r.err.find("report: " + std::to_string(ReportFixture::kFigures) + " plots in the page"),
        std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "report-plots"));  // no export unless asked

    // CI installs chromium (scripts/install-deps.sh test): its absence is a failure, not a skip.
    const std::string chromium = find_program("chromium");
    ASSERT_FALSE(chromium.empty())
        << "chromium not found in PATH: install the Debian package chromium (install-deps.sh)";
    const BrowserCheck check =
        load_in_chromium(chromium, html.string(), (dir_ / "chromium").string());
    const ProcessResult& browser = check.browser;
    ASSERT_EQ(browser.exit_code, 0) << browser.err;
    const std::string& dom = browser.out;
    EXPECT_NE(dom.find("</html>"), std::string::npos) << dom.substr(0, 500);
    EXPECT_EQ(check.canvases, static_cast<size_t>(ReportFixture::kFigures));
    // The page's script drew every chart and found ink under each one's first data point.
    EXPECT_EQ(check.plots_drawn, ReportFixture::kFigures) << dom.substr(0, 500);
    EXPECT_TRUE(check.ok) << dom.substr(0, 500);
    // Nothing is wider than the 1400 px window: wide tables scroll inside their box.
    EXPECT_GT(check.page_width, 0);
    EXPECT_LE(check.page_width, 1400);
    // Chromium logs every console message and uncaught error as "CONSOLE"; the page logs none.
    EXPECT_EQ(browser.err.find("CONSOLE"), std::string::npos) << browser.err;
    EXPECT_EQ(browser.err.find("Uncaught"), std::string::npos) << browser.err;
}

TEST_F(ReportCommand, PlotsDirExportsSvgAndPngThatThePageLinks) {
    migscope::test::write_report_fixture(db_);
    const ProcessResult r = migscope(
        {"report", db_, "-o", (dir_ / "r.html").string(), "--plots-dir", (dir_ / "figs").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    size_t svgs = 0, pngs = 0;
    for (const auto& entry : fs::directory_iterator(dir_ / "figs")) {
        svgs += entry.path().extension() == ".svg" && fs::file_size(entry.path()) > 0;
        pngs += entry.path().extension() == ".png" && fs::file_size(entry.path()) > 0;
    }
    EXPECT_EQ(svgs, static_cast<size_t>(ReportFixture::kFigures));
    EXPECT_EQ(pngs, static_cast<size_t>(ReportFixture::kFigures));
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

TEST_F(ReportCommand, MarkdownWritesTheTablesWithoutGnuplotAndRefusesPlots) {
    migscope::test::write_report_fixture(db_);
    const fs::path md = dir_ / "results.md";
    ProcessResult r = migscope({"report", db_, "--format", "markdown", "-o", md.string()},
                               {{"PATH", (dir_ / "empty-path").string()}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, md.string() + "\n");
    std::ifstream in(md);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("## Verdict"), std::string::npos);
    EXPECT_NE(text.str().find("| jobs | layout | work |"), std::string::npos);
    EXPECT_EQ(text.str().find("<canvas"), std::string::npos);

    r = migscope({"report", db_, "--format", "markdown", "--plots-dir", (dir_ / "p").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--plots-dir"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "p"));
    r = migscope({"report", db_, "--format", "pdf"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("pdf"), std::string::npos) << r.err;
}

TEST_F(ReportCommand, ExportWithoutGnuplotExitsThreeNamingThePackageAndLeavesNoPage) {
    migscope::test::write_report_fixture(db_);
    const ProcessResult r = migscope(
        {"report", db_, "-o", (dir_ / "r.html").string(), "--plots-dir", (dir_ / "figs").string()},
        {{"PATH", (dir_ / "empty-path").string()}});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("gnuplot-nox"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "r.html"));
}

}  // namespace
