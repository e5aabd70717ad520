// `migscope report`: one self-contained HTML page with the findings and plots of a results store.
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "report/report_page.h"

namespace migscope::cli {
namespace {

struct ReportOptions {
    std::string db;
    std::string output = "report.html";
    std::string plots_dir;  // empty: OUTPUT's stem + "-plots" beside it
};

int report_command(const ReportOptions& o) {
    report::write_report(o.db, {o.output, o.plots_dir},
                         [](const std::string& line) { std::cerr << "report: " << line << '\n'; });
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
