// The gnuplot runner: the script it writes, the SVG and PNG gnuplot draws, and its errors.
#include "report/gnuplot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace migscope::report {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path fresh_dir(const std::string& name) {
    const fs::path dir = fs::path(testing::TempDir()) / ("gnuplot-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// Every series style, error bars, categories and a reference line.
Plot sample_plot() {
    Plot p;
    p.name = "sample";
    p.title = "it's a test: bert_base";
    p.x_label = "SMs";
    p.y_label = "images/s";
    p.reference_y = 1.0;
    p.series = {
        {"train", SeriesStyle::kLinesPoints, {{16, 100, 95, 105, ""}, {60, 300, {}, {}, ""}}},
        {"trace", SeriesStyle::kLines, {{0, 90, {}, {}, ""}, {60, 500, {}, {}, ""}}},
        {"points", SeriesStyle::kPoints, {{32, 200, 190, 210, ""}}},
        {"", SeriesStyle::kLabelledPoints, {{40, 250, {}, {}, "green 3g.71gb"}}},
        {"changes", SeriesStyle::kMarkers, {{30, 150, {}, {}, "GPU 0 at 30 s: 3g.71gb@4"}}}};
    return p;
}

TEST(Gnuplot, ScriptDrawsSvgThenPngWithQuotedText) {
    const std::string script =
        gnuplot_script(sample_plot(), "/d/sample.dat", {"/d/it's.svg", "/d/sample.png"});
    EXPECT_NE(script.find("set terminal svg"), std::string::npos);
    EXPECT_NE(script.find("set terminal pngcairo"), std::string::npos);
    EXPECT_NE(script.find("noenhanced"), std::string::npos);
    EXPECT_NE(script.find("set output '/d/it''s.svg'"), std::string::npos) << script;
    EXPECT_NE(script.find("set title 'it''s a test: bert_base'"), std::string::npos);
    EXPECT_NE(script.find("index 3 using 1:2:5 with labels"), std::string::npos);
    EXPECT_NE(script.find("index 2 using 1:2:3:4 with yerrorbars"), std::string::npos);
    EXPECT_NE(script.find("index 4 using 1:2 with impulses"), std::string::npos);  // markers
}

// A job name from a shared store once ran shell commands through gnuplot: a line break ended the
// title and the next line was `!touch FILE`. Every text stays one quoted line now.
TEST(Gnuplot, ANameWithLineBreaksRunsNothing) {
    const fs::path dir = fresh_dir("hostile");
    const std::string evil = "evil\n!touch " + (dir / "pwned").string() + "\nset title 'x";
    Plot p = sample_plot();
    p.name = "hostile";
    p.title = evil;
    p.x_label = evil + "\r";
    p.series[0].title = evil;
    p.series[3].points[0].label = evil;
    const PlotFiles files = render_plot(p, dir.string());
    EXPECT_FALSE(fs::exists(dir / "pwned"));
    const std::string script = read_file(dir / "hostile.gp");
    EXPECT_EQ(script.find("\n!touch"), std::string::npos) << script;
    EXPECT_NE(script.find("set title 'evil !touch"), std::string::npos) << script;
    EXPECT_NE(read_file(files.svg_path).find("</svg>"), std::string::npos);
}

TEST(Gnuplot, DrawsSvgAndPngFiles) {
    const fs::path dir = fresh_dir("draws");
    Plot bars;
    bars.name = "bars";
    bars.title = "energy change";
    bars.x_axis = XAxis::kCategories;
    bars.categories = {"green 4g.71gb+3g.71gb", "mps 3g.71gb+3g.71gb"};
    bars.reference_y = 0.0;
    bars.series = {{"median", SeriesStyle::kBars, {{0, -18, -20, -15, ""}, {1, 4, 2, 6, ""}}}};
    for (const Plot& plot : {sample_plot(), bars}) {
        const PlotFiles files = render_plot(plot, dir.string());
        EXPECT_EQ(files.svg_path, (dir / (plot.name + ".svg")).string());
        const std::string svg = read_file(files.svg_path);
        const std::string png = read_file(files.png_path);
        EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
        EXPECT_NE(svg.find("<svg"), std::string::npos);
        EXPECT_NE(svg.find("</svg>"), std::string::npos);
        EXPECT_NE(svg.find(plot.title == "energy change" ? "energy change" : "bert_base"),
                  std::string::npos);
        ASSERT_GE(png.size(), 8u);
        EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
        EXPECT_TRUE(fs::exists(dir / (plot.name + ".gp")));
        EXPECT_TRUE(fs::exists(dir / (plot.name + ".dat")));
    }
}

TEST(Gnuplot, AMissingGnuplotNamesTheDebianPackage) {
    const fs::path dir = fresh_dir("missing");
    try {
        render_plot(sample_plot(), dir.string(), "no-such-gnuplot-here");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos) << e.what();
    }
}

TEST(Gnuplot, AFailingGnuplotIsARuntimeErrorWithItsStatus) {
    const fs::path dir = fresh_dir("failing");
    try {
        render_plot(sample_plot(), dir.string(), "false");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
        EXPECT_NE(std::string(e.what()).find("exit 1"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace migscope::report
