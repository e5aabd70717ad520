// Plot descriptions as JSON for the page's Chart.js script, escaped for an inline <script>.
#include "report/chart_data.h"

#include <algorithm>
#include <vector>

namespace migscope::report {
namespace {

using nlohmann::json;

// Text broken at spaces into lines of about `width` characters (a word longer stays whole).
json lines(const std::string& text, size_t width) {
    json out = json::array();
    std::string line;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find(' ', at);
        if (end == std::string::npos)
            end = text.size();
        const std::string word = text.substr(at, end - at);
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            out.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        at = end + 1;
    }
    if (!line.empty() || out.empty())
        out.push_back(line);
    return out;
}

const char* style_name(SeriesStyle s) {
    switch (s) {
        case SeriesStyle::kLinesPoints:
            return "linespoints";
        case SeriesStyle::kLines:
            return "lines";
        case SeriesStyle::kPoints:
            return "points";
        case SeriesStyle::kLabelledPoints:
            return "labelled";
        case SeriesStyle::kBars:
            return "bars";
        case SeriesStyle::kMarkers:
            return "markers";
    }
    return "points";
}

}  // namespace

json chart_data(const Plot& plot, const std::string& canvas_id) {
    const bool bars = plot.x_axis == XAxis::kCategories;
    json categories = json::array();
    for (const std::string& c : plot.categories)
        categories.push_back(lines(c, 28));
    json series = json::array();
    for (const PlotSeries& s : plot.series) {
        json points = json::array();
        for (const PlotPoint& p : s.points) {
            json point = {{"x", p.x}, {"y", p.y}};
            if (p.y_min && p.y_max)
                point["range"] = {*p.y_min, *p.y_max};
            if (!p.label.empty())
                point["label"] = p.label;
            points.push_back(std::move(point));
        }
        series.push_back({{"title", s.title}, {"style", style_name(s.style)}, {"points", points}});
    }
    return {{"canvas", canvas_id},
            {"title", lines(plot.title, 70)},
            {"kind", bars ? "bar" : "xy"},
            {"x", {{"label", plot.x_label}, {"fromZero", plot.x_from_zero}}},
            {"categories", categories},
            {"y", {{"label", plot.y_label}, {"fromZero", plot.y_range == YRange::kFromZero}}},
            {"reference", plot.reference_y ? json(*plot.reference_y) : json(nullptr)},
            {"series", series}};
}

std::string script_json(const json& value) {
    // Outside strings JSON has none of these characters; inside, \u escapes mean the same.
    std::string out;
    // Bytes that are not UTF-8 (a name from someone else's store) become U+FFFD, not an error.
    for (char c : value.dump(-1, ' ', false, json::error_handler_t::replace)) {
        if (c == '<')
            out += "\\u003c";
        else if (c == '>')
            out += "\\u003e";
        else if (c == '&')
            out += "\\u0026";
        else
            out += c;
    }
    return out;
}

bool worth_plotting(const Plot& plot) {
    if (plot.x_axis == XAxis::kCategories) {
        return std::any_of(plot.series.begin(), plot.series.end(),
                           [](const PlotSeries& s) { return s.points.size() >= 2; });
    }
    std::vector<double> xs;
    for (const PlotSeries& s : plot.series) {
        for (const PlotPoint& p : s.points)
            xs.push_back(p.x);
    }
    std::sort(xs.begin(), xs.end());
    return std::unique(xs.begin(), xs.end()) - xs.begin() >= 2;
}

}  // namespace migscope::report
