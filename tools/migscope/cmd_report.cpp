// `migscope report`: one self-contained HTML page (or Markdown tables) of a results store's
// findings.
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "report/report_page.h"

namespace migscope::cli {
namespace {

struct ReportOptions {
    std::string db;
    std::string output;  // empty: report.html or report.md
    std::string format = "html";
    std::string plots_dir;  // empty: no SVG/PNG export
};

int report_command(const ReportOptions& o) {
    const std::string written = report::write_report(
        o.db,
        {o.output, o.plots_dir,
         o.format == "markdown" ? report::ReportFormat::kMarkdown : report::ReportFormat::kHtml},
        [](const std::string& line) { std::cerr << "report: " << line << '\n'; });
    std::cerr << "report: wrote " << written << '\n';
    std::cout << written << '\n';
    return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<ReportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "report",
        "Write one self-contained HTML report (verdict, findings, tables, plots) from a results\n"
        "store. The page draws its plots with Chart.js, embedded in it: it opens offline.\n"
        "--plots-dir also exports them as SVG and PNG through gnuplot (Debian gnuplot-nox).\n"
        "--format markdown writes the verdict, layout and scaling tables as Markdown instead.");
    path_option(
        cmd->add_option("db", o->db, "Results store (SQLite) written by `migscope run --db`"))
        ->required();
    path_option(
        cmd->add_option("-o,--output", o->output,
                        "The file to write (default: report.html, or report.md for markdown)"));
    // Not a printers table (core/printers.h): the page is a file, with plots beside it
    // (report/report_page.h), and stdout gets its path.
    cmd->add_option("--format", o->format, "html or markdown")
        ->check(CLI::IsMember({"html", "markdown"}))
        ->capture_default_str();
    path_option(
        cmd->add_option("--plots-dir", o->plots_dir,
                        "Also export the plots there as SVG and PNG, with their data and gnuplot "
                        "scripts (needs gnuplot; default: no export)"));
    cmd->callback([o, &action] { action = [o] { return report_command(*o); }; });
}

}  // namespace migscope::cli
