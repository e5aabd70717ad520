// `migscope report`: one self-contained HTML page with the findings and plots of a results store.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "core/error.h"
#include "core/version.h"
#include "report/figures.h"
#include "report/findings.h"
#include "report/gnuplot.h"
#include "report/html.h"
#include "store/store.h"

namespace migscope::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
    std::string db;
    std::string output = "report.html";
    std::string plots_dir;  // empty: OUTPUT's stem + "-plots" beside it
};

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
        throw runtime_error("cannot read " + path);
    return text.str();
}

int report_command(const ReportOptions& o) {
    store::Store db = store::Store::open(o.db, store::OpenMode::kExisting);
    report::ReportInput input;
    input.source = o.db;
    input.generator = std::string("migscope ") + kVersion + " (" + kGitCommit + ")";
    input.runs = db.list_runs();
    input.findings = report::analyse(input.runs);
    std::cerr << "report: " << input.runs.size() << " runs in " << o.db << ": "
              << input.findings.scaling.size() << " scaling series, "
              << input.findings.layouts.size() << " layouts with a sequential baseline\n";

    const fs::path html_path = fs::absolute(o.output);
    const fs::path plots_dir =
        o.plots_dir.empty() ? html_path.parent_path() / (html_path.stem().string() + "-plots")
                            : fs::absolute(o.plots_dir);
    std::ofstream html(html_path);  // opened first: a bad path fails before any drawing
    if (!html)
        throw input_error("cannot write " + o.output);
    std::error_code ec;
    fs::create_directories(plots_dir, ec);
    if (ec)
        throw input_error("cannot create the plots folder " + plots_dir.string() + ": " +
                          ec.message());

    try {  // no half-written page is left behind
        std::vector<store::RunRecord> traced;
        for (int64_t id : report::traced_run_ids(input.findings)) {
            if (std::optional<store::RunRecord> run = db.get_run(id, store::TraceLoad::kWith))
                traced.push_back(std::move(*run));
        }
        const std::vector<report::Figure> figures = report::report_figures(input.findings, traced);
        std::cerr << "report: drawing " << figures.size() << " plots with gnuplot into "
                  << plots_dir.string() << '\n';
        for (size_t i = 0; i < figures.size(); ++i) {
            const report::PlotFiles files =
                report::render_plot(figures[i].plot, plots_dir.string());
            input.figures.push_back(
                {figures[i],
                 report::inline_svg(read_text(files.svg_path), "p" + std::to_string(i + 1) + "-",
                                    figures[i].plot.title),
                 fs::path(files.svg_path).lexically_relative(html_path.parent_path()).string(),
                 fs::path(files.png_path).lexically_relative(html_path.parent_path()).string()});
        }
        report::write_html(input, html);
        html.close();
        if (!html)
            throw runtime_error("cannot write " + o.output);
    } catch (...) {
        html.close();
        fs::remove(html_path, ec);
        throw;
    }
    std::cerr << "report: wrote " << o.output << '\n';
    std::cout << o.output << '\n';
    return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "report",
        "Write one self-contained HTML report (findings, tables, plots) from a results store.\n"
        "Plots are drawn by gnuplot (Debian package gnuplot-nox) and also kept as SVG and PNG.");
    cmd->add_option("db", o->db, "Results store (SQLite) written by `migscope run --db`")
        ->required();
    cmd->add_option("-o,--output", o->output, "The HTML file to write")->capture_default_str();
    cmd->add_option("--plots-dir", o->plots_dir,
                    "Where the plots' SVG, PNG, data and gnuplot scripts go (default: OUTPUT's "
                    "name with -plots, beside it)");
    cmd->callback([o, &action] { action = [o] { return report_command(*o); }; });
}

}  // namespace migscope::cli
