// The HTML report of a results store, assembled from the findings, the figures and the page.
#include "report/report_page.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/version.h"
#include "report/figures.h"
#include "report/findings.h"
#include "report/gnuplot.h"
#include "report/html.h"
#include "store/store.h"

namespace migscope::report {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
        throw runtime_error("cannot read " + path);
    return text.str();
}

}  // namespace

void write_report(const std::string& db_path, const ReportFiles& o,
                  const std::function<void(const std::string&)>& progress) {
    store::Store db = store::Store::open(db_path, store::OpenMode::kRead);
    ReportInput input;
    input.source = db_path;
    input.generator = std::string("migscope ") + kVersion + " (" + kGitCommit + ")";
    input.runs = db.list_runs();
    input.findings = analyse(input.runs);
    progress(std::to_string(input.runs.size()) + " runs in " + db_path + ": " +
             std::to_string(input.findings.scaling.size()) + " scaling series, " +
             std::to_string(input.findings.layouts.size()) + " layouts with a sequential baseline");

    const fs::path html_path = fs::absolute(o.html_path);
    const fs::path plots_dir =
        o.plots_dir.empty() ? html_path.parent_path() / (html_path.stem().string() + "-plots")
                            : fs::absolute(o.plots_dir);
    std::ofstream html(html_path);  // opened first: a bad path fails before any drawing
    if (!html)
        throw input_error("cannot write " + o.html_path);
    std::error_code ec;
    fs::create_directories(plots_dir, ec);
    if (ec)
        throw input_error("cannot create the plots folder " + plots_dir.string() + ": " +
                          ec.message());

    try {  // no half-written page is left behind
        std::vector<store::RunRecord> traced;
        for (int64_t id : traced_run_ids(input.findings)) {
            if (std::optional<store::RunRecord> run = db.get_run(id, store::TraceLoad::kWith))
                traced.push_back(std::move(*run));
        }
        const std::vector<Figure> figures = report_figures(input.findings, traced);
        progress("drawing " + std::to_string(figures.size()) + " plots with gnuplot into " +
                 plots_dir.string());
        for (size_t i = 0; i < figures.size(); ++i) {
            const PlotFiles files = render_plot(figures[i].plot, plots_dir.string());
            input.figures.push_back(
                {figures[i],
                 inline_svg(read_text(files.svg_path), "p" + std::to_string(i + 1) + "-",
                            figures[i].plot.title),
                 fs::path(files.svg_path).lexically_relative(html_path.parent_path()).string(),
                 fs::path(files.png_path).lexically_relative(html_path.parent_path()).string()});
        }
        write_html(input, html);
        html.close();
        if (!html)
            throw runtime_error("cannot write " + o.html_path);
    } catch (...) {
        html.close();
        fs::remove(html_path, ec);
        throw;
    }
}

}  // namespace migscope::report
