// Tests of src/report/markdown.cpp (through report_page.h's write_report for the file): the stored
// fixture as Markdown tables (verdict, layouts with spread, scaling), hostile names kept literal,
// and a file written whole or not at all.
#include "report/markdown.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "report/report_fixture.h"
#include "report/report_page.h"
#include "store/store.h"

namespace migscope::report {
namespace {

namespace fs = std::filesystem;
using test::ReportFixture;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

size_t cells_in(const std::string& row) {  // "| a | b |" -> 2, escaped bars not counted
    size_t n = 0;
    for (size_t i = 0; i < row.size(); ++i)
        n += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
    return n - 1;
}

fs::path fixture_store(const std::string& name) {
    const fs::path dir = fs::path(testing::TempDir()) / ("markdown-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    test::write_report_fixture((dir / "results.db").string());
    return dir;
}

TEST(Markdown, TheFixturesVerdictLayoutsAndScalingAsTables) {
    const fs::path dir = fixture_store("fixture");
    const std::string md_path = (dir / "results.md").string();
    std::vector<std::string> heard;
    write_report((dir / "results.db").string(), {md_path, "", ReportFormat::kMarkdown},
                 [&](const std::string& line) { heard.push_back(line); });
    ASSERT_EQ(heard.size(), 1u);
    EXPECT_NE(heard[0].find("2 layouts with a sequential baseline"), std::string::npos);
    std::ifstream in(md_path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string md = text.str();
    EXPECT_FALSE(fs::exists(md_path + ".part"));

    // Sections in order; the verdict names the layout with its spread over three repetitions.
    const size_t verdict = md.find("## Verdict"), layouts = md.find("## Layouts"),
                 scaling = md.find("## Each job alone");
    ASSERT_NE(verdict, std::string::npos);
    EXPECT_LT(verdict, layouts);
    EXPECT_LT(layouts, scaling);
    EXPECT_NE(md.find("**partition** as green 4g.71gb+3g.71gb"), std::string::npos) << md;
    EXPECT_NE(md.find("(n 3: "), std::string::npos);
    EXPECT_EQ(md.find("-0.0 %"), std::string::npos);

    // Every table row has as many cells as its header; a layout row per fixture layout, and
    // the run without energy shows "–", not 0.
    const std::vector<std::string> lines = lines_of(md);
    size_t header_cells = 0, layout_rows = 0, in_table = 0;
    bool in_layouts = false;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.rfind("## ", 0) == 0)
            in_layouts = l.find("Layouts") != std::string::npos;
        if (l.rfind("|", 0) != 0) {
            in_table = 0;
            continue;
        }
        if (in_table++ == 0) {
            header_cells = cells_in(l);
            ASSERT_LT(i + 1, lines.size());
            EXPECT_EQ(cells_in(lines[i + 1]), header_cells) << lines[i + 1];
            EXPECT_EQ(lines[i + 1].find_first_not_of("|-: "), std::string::npos);
            continue;
        }
        EXPECT_EQ(cells_in(l), header_cells) << l;
        if (in_layouts && in_table > 2)
            ++layout_rows;
    }
    EXPECT_EQ(layout_rows, static_cast<size_t>(ReportFixture::kLayouts));
    EXPECT_NE(md.find("| 16 | "), std::string::npos);  // a scaling row on 16 SMs
    // Each scaling row ends with its speed and energy per item over the whole GPU's: below 1 and
    // above 1 on 16 SMs (the fixture's jobs keep (16/132)^0.85 of their speed), 1 on the whole GPU.
    size_t small = 0, whole = 0;
    for (const std::string& l : lines) {
        const bool on_16 = l.find("| 16 | 1g.18gb | green |") != std::string::npos;
        const bool on_whole = l.find("| whole GPU | sequential |") != std::string::npos;
        if (!on_16 && !on_whole)
            continue;
        const size_t energy_at = l.rfind(" | ", l.size() - 3),
                     speed_at = l.rfind(" | ", energy_at - 1);
        const double speed = std::stod(l.substr(speed_at + 3)),
                     energy = std::stod(l.substr(energy_at + 3));
        if (on_16) {
            ++small;
            EXPECT_LT(speed, 0.3) << l;
            EXPECT_GT(energy, 1.0) << l;
        } else {
            ++whole;
            EXPECT_EQ(l.substr(speed_at), " | 1.00× | 1.00× |") << l;
        }
    }
    EXPECT_GT(small, 0u);
    EXPECT_GT(whole, 0u);
}

TEST(Markdown, HostileNamesStayLiteralText) {
    EXPECT_EQ(markdown_escape("a|b"), "a\\|b");
    EXPECT_EQ(markdown_escape("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
    EXPECT_EQ(markdown_escape("[x](javascript:alert(1))"), "\\[x\\](javascript:alert(1))");
    EXPECT_EQ(markdown_escape("*b* _i_ `c` ~s~ &amp; \\ # !"),
              "\\*b\\* \\_i\\_ \\`c\\` \\~s\\~ \\&amp; \\\\ \\# \\!");
    EXPECT_EQ(markdown_escape("two\nlines"), "two lines");
    EXPECT_EQ(markdown_escape("resnet50:train:32 + 3g.71gb"), "resnet50:train:32 + 3g.71gb");

    Findings f;
    Verdict v;
    v.job_set = "evil|job\n## heading";
    v.best_layout = "green <b>x</b>";
    v.figure = Spread{1, 1.5, 1.5, 1.5, std::nullopt};
    v.partition = true;
    v.clear = true;
    f.verdicts = {v};
    LayoutComparison unmeasured;  // no figure at all: dashes, never 0
    unmeasured.job_set = "a";
    unmeasured.backend = "green";
    unmeasured.layout = "1g.18gb";
    unmeasured.work = "window";
    f.layouts = {unmeasured};
    std::ostringstream out;
    write_markdown(f, "my|store.db", "migscope test", out);
    const std::string md = out.str();
    EXPECT_NE(md.find("evil\\|job \\#\\# heading"), std::string::npos) << md;
    EXPECT_NE(md.find("green \\<b\\>x\\</b\\>: 1.50× (n 1)"), std::string::npos) << md;
    EXPECT_NE(md.find("my\\|store.db"), std::string::npos);
    EXPECT_NE(md.find("| a | green 1g.18gb | window |  | – | – | – | – | – | – / – | – / – |"),
              std::string::npos)
        << md;
    for (const std::string& line : lines_of(md))
        EXPECT_NE(line.rfind("## heading", 0), 0u);
}

TEST(Markdown, AFileThatCannotBeWrittenIsAnInputErrorAndLeavesNothing) {
    const fs::path dir = fixture_store("unwritable");
    const std::string bad = (dir / "no-such-folder" / "results.md").string();
    try {
        write_report((dir / "results.db").string(), {bad, "", ReportFormat::kMarkdown},
                     [](const std::string&) {});
        FAIL() << "wrote into a missing folder";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir / "no-such-folder"));
}

}  // namespace
}  // namespace migscope::report
