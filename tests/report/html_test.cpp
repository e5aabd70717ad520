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
    EXPECT_NE(html.find("idle with clocks up, 92–92 W (runs 1–"), std::string::npos);
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

// The verdict section of a page: from its id to the end of its section.
std::string verdict_section(const std::string& html) {
    const size_t at = html.find("id=\"verdict\"");
    return at == std::string::npos ? "" : html.substr(at, html.find("</section>", at) - at);
}

// Findings whose verdicts the test writes: two job sets, one with steady windows and fixed
// work, the other with steady windows only.
Findings two_job_sets(const std::string& backend, const std::string& suffix) {
    Findings f;
    const auto comparison = [&](const std::string& jobs, const std::string& mode) {
        LayoutComparison c;
        c.backend = backend;
        c.run_mode = mode;
        c.job_set = jobs;
        return c;
    };
    const std::string a = "resnet18:train:32" + suffix + " + bert-base:train:4" + suffix;
    const std::string b = "vit-b16:train:16" + suffix + " + mlp:train:64" + suffix;
    f.layouts = {comparison(a, "duration"), comparison(a, "work"), comparison(b, "duration")};
    const auto verdict = [](const std::string& jobs, bool fixed, Objective o, double median) {
        Verdict v;
        v.job_set = jobs;
        v.fixed_work = fixed;
        v.objective = o;
        v.best_layout = "3g.71gb+2g.35gb";
        v.figure = Spread{3, median, median, median, std::nullopt};
        v.partition = o == Objective::kThroughput ? median > 1 : median < 0;
        v.clear = true;
        return v;
    };
    for (const auto& [jobs, fixed] : {std::pair{a, false}, {a, true}, {b, false}}) {
        f.verdicts.push_back(verdict(jobs, fixed, Objective::kThroughput, 1.12));
        f.verdicts.push_back(verdict(jobs, fixed, Objective::kEnergy, 4.5));
    }
    return f;
}

TEST(Html, TheVerdictIsATableWithARowPerJobSetAndMeasurement) {
    ReportInput input;
    input.source = "a.db";
    input.findings = two_job_sets("green", " (CUDA graph)");
    std::ostringstream page;
    write_html(input, page);
    const std::string verdict = verdict_section(page.str());
    ASSERT_FALSE(verdict.empty());
    EXPECT_EQ(count(verdict, "<tr>"), 1u + 3u);  // the header, then one row per set and kind
    EXPECT_EQ(count(verdict, "<b>partition</b> as"), 3u);
    EXPECT_EQ(count(verdict, "<b>do not partition</b>"), 3u);
    EXPECT_EQ(count(verdict, "fixed work"), 1u + 1u);  // its row, and the note's explanation
    // Every job stepped as a CUDA graph: said once, not after each job.
    EXPECT_EQ(count(verdict, "(CUDA graph)"), 0u) << verdict;
    EXPECT_EQ(count(verdict, "Every job stepped as a CUDA graph."), 1u);
    EXPECT_NE(verdict.find("the whole GPU"), std::string::npos);
    EXPECT_EQ(page.str().find("(CUDA graph)"), std::string::npos);  // findings too
}

TEST(Html, JobsThatStepEagerlyKeepTheirMark) {
    ReportInput input;
    input.source = "a.db";
    input.findings = two_job_sets("green", " (CUDA graph)");
    input.findings.layouts.back().job_set = "vit-b16:train:16 (eager) + mlp:train:64 (CUDA graph)";
    std::ostringstream page;
    write_html(input, page);
    EXPECT_EQ(count(verdict_section(page.str()), "Every job stepped"), 0u);
    EXPECT_GT(count(verdict_section(page.str()), "(CUDA graph)"), 0u);
}

TEST(Html, CpuRunsAreWordedAsCpuRuns) {
    ReportInput input;
    input.source = "a.db";
    input.findings = two_job_sets("cpu", " (eager)");
    store::RunRecord run;
    run.id = 1;
    run.backend = "cpu";
    input.runs = {run};
    std::ostringstream page;
    write_html(input, page);
    const std::string html = page.str();
    const std::string verdict = verdict_section(html);
    EXPECT_EQ(verdict.find("<b>partition</b>"), std::string::npos) << verdict;
    EXPECT_EQ(count(verdict, "<b>side by side</b> on split cores"), 3u);
    EXPECT_EQ(count(verdict, "<b>one after another</b>"), 3u);
    EXPECT_NE(verdict.find("all the CPU cores"), std::string::npos);
    EXPECT_EQ(verdict.find("GPU"), std::string::npos) << verdict;
    // The caveat about SM partitions is for GPU runs on green or mps only.
    EXPECT_EQ(html.find("SM partitions emulate MIG"), std::string::npos);
}

TEST(Html, ARunsReasonIsSaidOnceWithItsRuns) {
    ReportInput input;
    input.source = "a.db";
    for (int64_t id : {3, 4, 5, 9}) {
        store::RunRecord run;
        run.id = id;
        run.backend = "green";
        run.warnings = {id == 9 ? "the run was interrupted" : "RAPL counters not readable"};
        run.attribution_method = "static: idle power (" + std::to_string(120 + id) + " W) × window";
        input.runs.push_back(run);
    }
    std::ostringstream page;
    write_html(input, page);
    const std::string html = page.str();
    EXPECT_NE(html.find("runs 3–5 (RAPL counters not readable); run 9 (the run was interrupted)"),
              std::string::npos)
        << html;
    const size_t missing = html.find("id=\"missing\"");
    ASSERT_NE(missing, std::string::npos);
    const std::string section = html.substr(missing, html.find("</section>", missing) - missing);
    EXPECT_EQ(count(section, "RAPL counters not readable"), 2u);  // energy, and power traces
    EXPECT_NE(html.find("SM partitions emulate MIG"), std::string::npos);
    // One way of attributing energy, its numbers per run: said once.
    EXPECT_EQ(count(html, "<b>Attribution</b>"), 1u);
    EXPECT_NE(html.find("<b>Attribution</b> (4 runs): static: idle power (… W) × window"),
              std::string::npos);
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
