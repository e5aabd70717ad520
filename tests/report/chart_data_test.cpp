// Figures as data for the page's Chart.js script: escaping for an inline <script>, long titles
// broken into lines, and single-point plots left out.
#include "report/chart_data.h"

#include <gtest/gtest.h>

namespace migscope::report {
namespace {

Plot numeric_plot(std::vector<std::vector<double>> xs_per_series) {
    Plot p;
    p.name = "p";
    for (const std::vector<double>& xs : xs_per_series) {
        PlotSeries s{"s", SeriesStyle::kLinesPoints, {}};
        for (double x : xs)
            s.points.push_back({x, 1, {}, {}, ""});
        p.series.push_back(s);
    }
    return p;
}

TEST(ScriptJson, NoTextCanEndTheScriptElement) {
    const nlohmann::json data = {{"name", "</script><!-- & >"}};
    const std::string text = script_json(data);
    EXPECT_EQ(text.find('<'), std::string::npos) << text;
    EXPECT_EQ(text.find('>'), std::string::npos) << text;
    EXPECT_EQ(text.find('&'), std::string::npos) << text;
    EXPECT_EQ(nlohmann::json::parse(text), data);  // the same data once parsed
    // Not UTF-8: replaced, not thrown.
    EXPECT_NE(script_json({{"name", std::string("a\xff")}}).find("a\xef\xbf\xbd"),
              std::string::npos);
}

TEST(ChartData, LongTitlesAndCategoriesBreakIntoLinesAndRangesTravel) {
    Plot p;
    p.name = "layouts-1-energy";
    p.title = std::string(50, 'a') + " " + std::string(40, 'b');
    p.x_axis = XAxis::kCategories;
    p.categories = {"green 4g.71gb+2g.35gb+1g.18gb, 97/48/24 steps"};
    p.y_range = YRange::kFromZero;
    p.reference_y = 1.0;
    p.series = {{"bars", SeriesStyle::kBars, {{0, 1.2, 1.1, 1.3, ""}}}};
    const nlohmann::json d = chart_data(p, "plot-layouts-1-energy");
    EXPECT_EQ(d["canvas"], "plot-layouts-1-energy");
    EXPECT_EQ(d["kind"], "bar");
    EXPECT_EQ(d["title"].size(), 2u);
    EXPECT_GE(d["categories"][0].size(), 2u);
    EXPECT_TRUE(d["y"]["fromZero"].get<bool>());
    EXPECT_EQ(d["reference"], 1.0);
    EXPECT_EQ(d["series"][0]["points"][0]["range"], nlohmann::json({1.1, 1.3}));
    EXPECT_EQ(d["series"][0]["style"], "bars");
}

TEST(ChartData, MarkersCarryTheirTooltipText) {
    Plot p;
    p.name = "stream-energy";
    p.series = {{"online", SeriesStyle::kLines, {{0, 0, {}, {}, ""}, {1, 2, {}, {}, ""}}},
                {"online: layout changes",
                 SeriesStyle::kMarkers,
                 {{0.5, 1, {}, {}, "GPU 0 at 0.5 h: </script>"}}}};
    const nlohmann::json d = chart_data(p, "plot-stream-energy");
    EXPECT_EQ(d["kind"], "xy");
    EXPECT_EQ(d["series"][1]["style"], "markers");
    EXPECT_EQ(d["series"][1]["points"][0]["label"], "GPU 0 at 0.5 h: </script>");
    EXPECT_FALSE(d["series"][0]["points"][0].contains("label"));
    EXPECT_EQ(script_json(d).find("</script>"), std::string::npos);
}

TEST(WorthPlotting, OnePointIsATableRowNotAPlot) {
    EXPECT_FALSE(worth_plotting(numeric_plot({{132}})));
    EXPECT_FALSE(worth_plotting(numeric_plot({{132}, {132}})));  // train and finetune, whole GPU
    EXPECT_FALSE(worth_plotting(numeric_plot({{}})));
    EXPECT_TRUE(worth_plotting(numeric_plot({{16, 132}})));
    EXPECT_TRUE(worth_plotting(numeric_plot({{16}, {132}})));
    Plot bars = numeric_plot({{0}});
    bars.x_axis = XAxis::kCategories;
    EXPECT_FALSE(worth_plotting(bars));
    bars.series[0].points.push_back({1, 2, {}, {}, ""});
    EXPECT_TRUE(worth_plotting(bars));
}

}  // namespace
}  // namespace migscope::report
