// The HTML report of a results store, assembled from the findings, the figures and the page.
#include "report/report_page.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/user_text.h"
#include "core/version.h"
#include "report/figures.h"
#include "report/findings.h"
#include "report/gnuplot.h"
#include "report/html.h"
#include "report/markdown.h"
#include "store/store.h"

namespace migscope::report {

namespace fs = std::filesystem;

namespace {

// Draws every figure as SVG and PNG with gnuplot into `plots_dir`, links each from the page at
// `page_path`, and returns the page's note on where the copies are.
std::string export_plots(std::vector<ReportFigure>& figures, const std::string& plots_dir_arg,
                         const fs::path& page_path,
                         const std::function<void(const std::string&)>& progress) {
    const fs::path plots_dir = fs::absolute(plots_dir_arg);
    std::error_code ec;
    fs::create_directories(plots_dir, ec);
    if (ec)
        throw input_error("cannot create the plots folder " + plots_dir.string() + ": " +
                          ec.message());
    progress("exporting " + std::to_string(figures.size()) + " plots with gnuplot into " +
             plots_dir.string());
    for (ReportFigure& f : figures) {
        const PlotFiles files = render_plot(f.figure.plot, plots_dir.string());
        f.svg_link = fs::path(files.svg_path).lexically_relative(page_path.parent_path()).string();
        f.png_link = fs::path(files.png_path).lexically_relative(page_path.parent_path()).string();
    }
    return "SVG and PNG copies of the plots, with their data and gnuplot scripts, are in " +
           plots_dir.lexically_relative(page_path.parent_path()).string() + "/ beside the page.";
}

}  // namespace

std::string write_report(const std::string& db_path, const ReportFiles& files,
                         const std::function<void(const std::string&)>& progress) {
    ReportFiles o = files;
    const bool markdown = o.format == ReportFormat::kMarkdown;
    if (markdown && !o.plots_dir.empty())
        throw input_error("--plots-dir: plots are part of the HTML report, not the Markdown");
    if (o.path.empty())
        o.path = markdown ? "report.md" : "report.html";
    store::Store db = store::Store::open(db_path, store::OpenMode::kRead);
    ReportInput input;
    input.source = db_path;
    input.generator = std::string("migscope ") + kVersion + " (" + kGitCommit + ")";
    input.runs = db.list_runs();
    input.findings = analyse(input.runs);
    progress(std::to_string(input.runs.size()) + " runs in " + db_path + ": " +
             std::to_string(input.findings.scaling.size()) + " scaling series, " +
             std::to_string(input.findings.layouts.size()) + " layouts with a sequential baseline");

    const fs::path out_path = fs::absolute(o.path);
    std::ofstream out(out_path);  // opened first: a bad path fails before any drawing
    if (!out)
        throw input_error("cannot write " + o.path);
    try {  // no half-written page is left behind
        if (markdown) {
            std::ostringstream page;
            write_markdown(input.findings, input.source, input.generator, page);
            out << user_text::as_utf8(page.str());  // old stores' text that is not UTF-8: \xNN
            out.close();
            if (!out)
                throw runtime_error("cannot write " + o.path);
            return o.path;
        }
        std::vector<store::RunRecord> traced;
        for (int64_t id : traced_run_ids(input.findings)) {
            if (std::optional<store::RunRecord> run = db.get_run(id, store::TraceLoad::kWith))
                traced.push_back(std::move(*run));
        }
        const std::vector<Figure> figures = report_figures(input.findings, traced);
        for (const Figure& f : figures)
            input.figures.push_back({f, "", ""});
        input.export_note =
            o.plots_dir.empty()
                ? "SVG and PNG copies of the plots: migscope report --plots-dir DIR (needs "
                  "gnuplot)."
                : export_plots(input.figures, o.plots_dir, out_path, progress);
        progress(std::to_string(figures.size()) + " plots in the page");
        std::ostringstream page;
        write_html(input, page);
        out << user_text::as_utf8(page.str());  // valid UTF-8 whatever the store's text holds
        out.close();
        if (!out)
            throw runtime_error("cannot write " + o.path);
    } catch (...) {
        out.close();
        std::error_code ec;
        fs::remove(out_path, ec);
        throw;
    }
    return o.path;
}

}  // namespace migscope::report
