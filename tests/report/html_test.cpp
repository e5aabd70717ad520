// HTML generation from a stored fixture: findings, figures drawn by gnuplot and inlined, tables
// with spread and method, missing values as "–" with their reason, provenance, no external links.
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

TEST(InlineSvg, DropsThePrologAndPrefixesIdsAndTheirReferences) {
    const std::string svg =
        "<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 10 10\"><title>Gnuplot</title><defs>"
        "<circle id='gpPt1'/><circle id='gpPt10'/></defs><g id=\"canvas\">"
        "<use xlink:href='#gpPt1'/><use xlink:href='#gpPt10'/><rect fill=\"url(#canvas)\"/>"
        "</g></svg>\n";
    const std::string out = inline_svg(svg, "p2-", "a < b");
    EXPECT_EQ(out.rfind("<svg", 0), 0u);
    EXPECT_NE(out.find("<title>a &lt; b</title>"), std::string::npos) << out;
    EXPECT_NE(out.find("id='p2-gpPt1'"), std::string::npos);
    EXPECT_NE(out.find("id='p2-gpPt10'"), std::string::npos);
    EXPECT_NE(out.find("href='#p2-gpPt1'"), std::string::npos);
    EXPECT_NE(out.find("href='#p2-gpPt10'"), std::string::npos);
    EXPECT_NE(out.find("id=\"p2-canvas\""), std::string::npos);
    EXPECT_NE(out.find("url(#p2-canvas)"), std::string::npos);
    EXPECT_EQ(out.find("p2-p2-"), std::string::npos);
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
    for (size_t i = 0; i < figures.size(); ++i) {
        const PlotFiles files = render_plot(figures[i].plot, (dir / "plots").string());
        std::ifstream svg_file(files.svg_path);
        std::stringstream svg;
        svg << svg_file.rdbuf();
        input.figures.push_back(
            {figures[i],
             inline_svg(svg.str(), "p" + std::to_string(i) + "-", figures[i].plot.title),
             "plots/" + figures[i].plot.name + ".svg", "plots/" + figures[i].plot.name + ".png"});
    }
    std::ostringstream page;
    write_html(input, page);
    const std::string html = page.str();
    std::ofstream(dir / "report.html") << html;  // for a look after a failure

    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(count(html, "<svg"), static_cast<size_t>(ReportFixture::kFigures));
    EXPECT_EQ(count(html, "<figure class=\"plot\""), static_cast<size_t>(ReportFixture::kFigures));
    EXPECT_NE(html.find("data-figures=\"" + std::to_string(ReportFixture::kFigures) + "\""),
              std::string::npos);
    EXPECT_EQ(html.find("<?xml"), std::string::npos);
    // Self-contained: nothing fetched from elsewhere (links to the plot files are only links).
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("href=\"http"), std::string::npos);
    EXPECT_EQ(html.find("href='http"), std::string::npos);
    // Every id once in the page, gnuplot's included.
    std::set<std::string> ids;
    const std::regex id_attr(R"re(\sid=(['"])([^'"]+)\1)re");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), id_attr);
         it != std::sregex_iterator(); ++it)
        EXPECT_TRUE(ids.insert((*it)[2]).second) << "duplicate id " << (*it)[2];

    // Method, caveat, spread and provenance.
    EXPECT_NE(html.find("SM partitions emulate MIG"), std::string::npos);
    EXPECT_NE(html.find("L2-cache"), std::string::npos);
    EXPECT_NE(html.find("board energy counter"), std::string::npos);
    EXPECT_NE(html.find("(n 3: "), std::string::npos);  // median (n 3: min – max)
    EXPECT_NE(html.find("580.82.07"), std::string::npos);
    EXPECT_NE(html.find("abc1234"), std::string::npos);
    EXPECT_NE(html.find("green 4g.71gb+3g.71gb"), std::string::npos);
    // The run without energy: "–" and its warning, not 0.
    EXPECT_NE(html.find("<span class=\"na\">–</span>"), std::string::npos);
    EXPECT_NE(html.find(ReportFixture::kNoEnergyWarning), std::string::npos);
    EXPECT_NE(html.find("data-report-check"), std::string::npos);  // the inline check script
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
