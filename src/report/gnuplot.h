// Plots through gnuplot: a plain plot description becomes a data file and a script, and gnuplot
// (a child process) draws it as SVG and PNG.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace migscope::report {

enum class SeriesStyle {
    kLinesPoints,     // lines through the points, with min–max error bars where given
    kLines,           // a plain line (power traces)
    kPoints,          // points with min–max error bars where given
    kLabelledPoints,  // points with their label written beside them
    kBars,            // boxes with min–max error bars
    // Moments marked on the series before it (layout changes on a line over time): a point
    // with its label as the tooltip, a thin vertical line through the plot, the line's colour.
    kMarkers,
};

struct PlotPoint {
    double x = 0;
    double y = 0;
    std::optional<double> y_min;  // error bar; both or neither
    std::optional<double> y_max;
    std::string label;  // kLabelledPoints: beside the point; kMarkers: its tooltip
};

struct PlotSeries {
    std::string title;  // in the key; empty: not listed
    SeriesStyle style = SeriesStyle::kLinesPoints;
    std::vector<PlotPoint> points;
};

enum class XAxis { kNumeric, kCategories };
enum class YRange { kAuto, kFromZero };  // kFromZero: the axis includes 0

struct Plot {
    std::string name;  // file stem: NAME.dat, NAME.gp, NAME.svg, NAME.png
    std::string title;
    std::string x_label;
    std::string y_label;
    XAxis x_axis = XAxis::kNumeric;
    std::vector<std::string> categories;  // kCategories: the label of x = 0, 1, ...
    YRange y_range = YRange::kAuto;
    std::optional<double> reference_y;  // a dashed horizontal line (0 % change, 1×)
    std::vector<PlotSeries> series;
    bool x_from_zero = false;  // kNumeric: the x axis starts at 0
};

struct PlotFiles {
    std::string svg_path;
    std::string png_path;
};

// The gnuplot script that draws `plot` from `data_path` into both image files.
std::string gnuplot_script(const Plot& plot, const std::string& data_path, const PlotFiles& out);

// Writes NAME.dat and NAME.gp into `dir` (which must exist) and runs `gnuplot_program` on them.
// Throws an unavailable error naming the Debian package when gnuplot cannot be started, a runtime
// error with gnuplot's messages when it fails or leaves an image empty.
PlotFiles render_plot(const Plot& plot, const std::string& dir,
                      const std::string& gnuplot_program = "gnuplot");

}  // namespace migscope::report
