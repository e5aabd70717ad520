// HTML generation from a stored fixture: the verdict first, figures as Chart.js data, tables with
// spread and method, missing values as "–" with their reason, provenance, no external links, and
// hostile names kept as data.
#include "report/html.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "report/report_fixture.h"
#include "store/store.h"

namespace migscope::report {
namespace {

namespace fs = std::filesystem;
using test::ReportFixture;

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

TEST(Html, ReportFromAStoredFixture) {
    const fs::path dir = fs::path(testing::TempDir()) / "html-report";
    fs::remove_all(dir);
    fs::create_directories(dir / "plots");
    const std::string db_path = (dir / "results.db").string();
    test::write_report_fixture(db_path);

    store::Store db = store::Store::open(db_path, store::OpenMode::kExisting);
    ReportInput input;
    input.source = db_path;
    input.generator = "migscope test";
    input.runs = db.list_runs();
    input.findings = analyse(input.runs);
    ASSERT_EQ(input.findings.layouts.size(), static_cast<size_t>(ReportFixture::kLayouts));
    for (const LayoutComparison& g : input.findings.layouts) {
        EXPECT_EQ(g.repetitions.size(), static_cast<size_t>(ReportFixture::kRepetitions));
        EXPECT_EQ(g.energy_change_pct->n, ReportFixture::kRepetitions);
        EXPECT_LT(g.energy_change_pct->median, 0);  // the fixture's layouts save energy
    }
    std::vector<store::RunRecord> traced;
    for (int64_t id : traced_run_ids(input.findings))
        traced.push_back(*db.get_run(id, store::TraceLoad::kWith));
    const std::vector<Figure> figures = report_figures(input.findings, traced);
    ASSERT_EQ(figures.size(), static_cast<size_t>(ReportFixture::kFigures));
    for (const Figure& f : figures)
        input.figures.push_back({f, "", ""});
    std::ostringstream page;
    write_html(input, page);
    const std::string html = page.str();
    std::ofstream(dir / "report.html") << html;  // for a look after a failure

    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(count(html, "<canvas"), static_cast<size_t>(ReportFixture::kFigures));
    EXPECT_EQ(count(html, "<figure class=\"plot\""), static_cast<size_t>(ReportFixture::kFigures));
    // The verdict opens the page; Chart.js and the plots' data are inline.
    EXPECT_LT(html.find("id=\"verdict\""), html.find("id=\"findings\""));
    EXPECT_NE(html.find("<b>partition</b> as"), std::string::npos);
    EXPECT_NE(html.find("Chart.js v"), std::string::npos);
    EXPECT_NE(html.find("id=\"migscope-figures\""), std::string::npos);
    EXPECT_EQ(html.find("-0.0 %"), std::string::npos);
    EXPECT_NE(html.find("data-figures=\"" + std::to_string(ReportFixture::kFigures) + "\""),
              std::string::npos);
    // Self-contained: nothing fetched from elsewhere (links to the plot files are only links).
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("href=\"http"), std::string::npos);
    EXPECT_EQ(html.find("href='http"), std::string::npos);
    // Every id once in the page.
    std::set<std::string> ids;
    const std::regex id_attr(R"re(\sid=(['"])([^'"]+)\1)re");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), id_attr);
         it != std::sregex_iterator(); ++it)
        EXPECT_TRUE(ids.insert((*it)[2]).second) << "duplicate id " << (*it)[2];

    // Method, caveat, spread and provenance.
    EXPECT_NE(html.find("SM partitions emulate MIG"), std::string::npos);
    EXPECT_NE(html.find("L2-cache"), std::string::npos);
    EXPECT_NE(html.find("board energy counter"), std::string::npos);
    // The idle state each run's static power came from, and deep idle apart.
    EXPECT_NE(html.find("idle with clocks up, 92–92 W (runs 1, "), std::string::npos);
    EXPECT_NE(html.find("idle state not recorded, 92–92 W (runs "), std::string::npos);
    EXPECT_NE(html.find("<b>Deep idle</b> (SM clock down, seen in the idle probes): 71–71 W"),
              std::string::npos);
    EXPECT_NE(html.find("(n 3: "), std::string::npos);  // median (n 3: min – max)
    EXPECT_NE(html.find("580.82.07"), std::string::npos);
    EXPECT_NE(html.find("<td>700 W</td>"), std::string::npos);  // the power limit
    EXPECT_NE(html.find("abc1234"), std::string::npos);
    EXPECT_NE(html.find("green 4g.71gb+3g.71gb"), std::string::npos);
    // The run without energy: "–" and its warning, not 0.
    EXPECT_NE(html.find("<span class=\"na\">–</span>"), std::string::npos);
    EXPECT_NE(html.find(ReportFixture::kNoEnergyWarning), std::string::npos);
    EXPECT_NE(html.find("data-report-check"), std::string::npos);  // the plots' check
    // The run without energy is named with its reason at the top.
    EXPECT_NE(html.find("id=\"missing\""), std::string::npos);
}

TEST(Html, HostileNamesStayTextAndData) {
    ReportInput input;
    input.source = "a.db";
    input.generator = "migscope test";
    store::RunRecord run;
    run.id = 1;
    run.backend = "green";
    run.label = "</script><script>alert(1)</script>";
    input.runs = {run};
    Figure f;
    f.plot.name = "x";
    f.plot.title = "t";
    f.plot.series = {{"</script><script>alert(2)</script>",
                      SeriesStyle::kLines,
                      {{0, 1, {}, {}, ""}, {1, 2, {}, {}, "<!--"}}}};
    input.figures = {{f, "", ""}};
    std::ostringstream page;
    write_html(input, page);
    const std::string html = page.str();
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_EQ(html.find("<!--"), std::string::npos);
    EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
    EXPECT_NE(html.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(2)"), std::string::npos);
}

TEST(Html, NoEnergyIsNamedWithItsReasonAndTheVerdictSaysWhy) {
    ReportInput input;
    input.source = "a.db";
    input.generator = "migscope test";
    store::RunRecord run;
    run.id = 3;
    run.backend = "cpu";
    run.warnings = {"RAPL counters not readable"};
    input.runs = {run};
    std::ostringstream page;
    write_html(input, page);
    const std::string html = page.str();
    EXPECT_NE(html.find("What this report cannot show"), std::string::npos);
    EXPECT_NE(html.find("run 3 (RAPL counters not readable)"), std::string::npos);
    EXPECT_NE(html.find("No verdict"), std::string::npos);
    EXPECT_NE(html.find("CPU cores, not SMs"), std::string::npos);
}

TEST(Html, AnEmptyStoreGivesAPageWithoutFigures) {
    ReportInput input;
    input.source = "empty.db";
    input.generator = "migscope test";
    std::ostringstream page;
    write_html(input, page);
    EXPECT_NE(page.str().find("data-figures=\"0\""), std::string::npos);
    EXPECT_NE(page.str().find("No stored run has a figure"), std::string::npos);
    EXPECT_NE(page.str().find("</html>"), std::string::npos);
}

}  // namespace
}  // namespace migscope::report
