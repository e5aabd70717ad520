// gnuplot data files and scripts for plot descriptions, and the gnuplot child process.
#include "report/gnuplot.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/child_process.h"
#include "core/error.h"

namespace migscope::report {
namespace {

namespace fs = std::filesystem;

// A gnuplot single-quoted string: the quote is doubled, and control characters become spaces (a
// line break would end the command, and the next line could be `!shell command`). Names come
// from stores that may be someone else's: they stay text.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "''";
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            out += ' ';
        else
            out += c;
    }
    return out + "'";
}

// Labels in the tab-separated data file: no tabs or line breaks inside a field.
std::string field(std::string text) {
    for (char& c : text) {
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
    }
    return text;
}

// One block per series (gnuplot's `index`), columns x, y, y_min, y_max, label.
std::string data_text(const Plot& plot) {
    std::string out;
    for (size_t i = 0; i < plot.series.size(); ++i) {
        if (i > 0)
            out += "\n\n";
        for (const PlotPoint& p : plot.series[i].points) {
            out += fmt::format("{}\t{}\t{}\t{}\t{}\n", p.x, p.y, p.y_min.value_or(p.y),
                               p.y_max.value_or(p.y), field(p.label));
        }
    }
    return out;
}

std::string plot_clause(const PlotSeries& s, size_t index, const std::string& data_path) {
    const std::string source = quoted(data_path) + " index " + std::to_string(index);
    const std::string title = s.title.empty() ? " notitle" : " title " + quoted(s.title);
    switch (s.style) {
        case SeriesStyle::kLinesPoints:
            return source + " using 1:2:3:4 with yerrorlines lw 2 pt 7" + title;
        case SeriesStyle::kLines:
            return source + " using 1:2 with lines lw 1.5" + title;
        case SeriesStyle::kPoints:
            return source + " using 1:2:3:4 with yerrorbars pt 7 ps 1.2" + title;
        case SeriesStyle::kLabelledPoints:
            return source + " using 1:2:5 with labels point pt 7 ps 1.2 offset char 1,0.6 left" +
                   title;
        case SeriesStyle::kBars:
            return source + " using 1:2:3:4:(0.6) with boxerrorbars" + title;
        case SeriesStyle::kMarkers:
            return source + " using 1:2 with impulses dt 2 lw 1" + title;
    }
    return source + title;
}

}  // namespace

std::string gnuplot_script(const Plot& plot, const std::string& data_path, const PlotFiles& out) {
    std::ostringstream s;
    // noenhanced: names such as bert_base stay as written (no subscripts).
    s << "set terminal svg size 760,440 dynamic noenhanced font 'sans,12' background '#ffffff'\n"
      << "set output " << quoted(out.svg_path) << '\n'
      << "set datafile separator '\\t'\n"
      << "set title " << quoted(plot.title) << '\n'
      << "set xlabel " << quoted(plot.x_label) << '\n'
      << "set ylabel " << quoted(plot.y_label) << '\n'
      << "set grid\n"
      << "set key below\n"
      << "set style fill solid 0.5 border\n"
      << "set bars 2\n";
    if (plot.x_axis == XAxis::kCategories) {
        s << "set xtics (";
        for (size_t i = 0; i < plot.categories.size(); ++i)
            s << (i ? ", " : "") << quoted(plot.categories[i]) << ' ' << i;
        s << ") rotate by -15\n"
          << "set xrange [-0.6:" << (plot.categories.empty() ? 0.4 : plot.categories.size() - 0.4)
          << "]\n";
    }
    const bool labelled = std::any_of(plot.series.begin(), plot.series.end(), [](const auto& s) {
        return s.style == SeriesStyle::kLabelledPoints;
    });
    if (labelled)  // room for the labels right of and above the points
        s << "set offsets graph 0.05, graph 0.35, graph 0.1, graph 0.1\n";
    if (plot.y_range == YRange::kFromZero) {  // the axis includes 0 on the side the data is not
        bool negative = false, positive = false;
        for (const PlotSeries& series : plot.series) {
            for (const PlotPoint& p : series.points) {
                negative |= p.y_min.value_or(p.y) < 0;
                positive |= p.y_max.value_or(p.y) > 0;
            }
        }
        if (!negative)
            s << "set yrange [0:*]\n";
        else if (!positive)
            s << "set yrange [*:0]\n";
    }
    if (plot.x_from_zero && plot.x_axis == XAxis::kNumeric)
        s << "set xrange [0:*]\n";
    if (plot.reference_y) {
        s << "set arrow from graph 0, first " << *plot.reference_y << " to graph 1, first "
          << *plot.reference_y << " nohead dt 2 lw 1.5 lc rgb '#555555'\n";
    }
    s << "plot ";
    for (size_t i = 0; i < plot.series.size(); ++i)
        s << (i ? ", \\\n     " : "") << plot_clause(plot.series[i], i, data_path);
    s << '\n'
      << "set terminal pngcairo size 960,560 noenhanced font 'sans,11' background '#ffffff'\n"
      << "set output " << quoted(out.png_path) << '\n'
      << "replot\n"
      << "unset output\n";
    return s.str();
}

PlotFiles render_plot(const Plot& plot, const std::string& dir,
                      const std::string& gnuplot_program) {
    const fs::path base = fs::path(dir) / plot.name;
    const std::string data_path = base.string() + ".dat";
    const std::string script_path = base.string() + ".gp";
    const std::string log_path = base.string() + ".log";
    const PlotFiles out{base.string() + ".svg", base.string() + ".png"};
    {
        std::ofstream data(data_path), script(script_path);
        data << data_text(plot);
        script << gnuplot_script(plot, data_path, out);
        if (!data || !script)
            throw runtime_error("cannot write " + script_path + " or its data file");
    }
    fs::remove(log_path);
    ExitStatus status;
    try {
        ChildProcess gnuplot =
            ChildProcess::start({{gnuplot_program, script_path}, {}, {}, log_path});
        status = gnuplot.wait();
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::kInput)
            throw;
        throw unavailable_error(std::string(e.what()) +
                                ": plots need gnuplot (Debian package gnuplot-nox)");
    }
    std::ifstream log_file(log_path);
    std::stringstream log;
    log << log_file.rdbuf();
    if (status.code != 0) {
        throw runtime_error("gnuplot failed on " + script_path + " (" + status.describe() +
                            "): " + log.str());
    }
    for (const std::string& image : {out.svg_path, out.png_path}) {
        std::error_code ec;
        if (fs::file_size(image, ec) == 0 || ec)
            throw runtime_error("gnuplot left " + image + " empty or missing: " + log.str());
    }
    if (log.str().empty())
        fs::remove(log_path);
    return out;
}

}  // namespace migscope::report
