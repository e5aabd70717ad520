// The HTML report of a results store: findings, plots (drawn in the page by the embedded
// Chart.js; SVG and PNG copies by gnuplot on request) and the page itself, written whole or not
// at all; or the same findings as Markdown tables (report/markdown.h).
#pragma once

#include <functional>
#include <string>

namespace migscope::report {

enum class ReportFormat { kHtml, kMarkdown };

struct ReportFiles {
    std::string path;       // as given; empty: report.html, or report.md for Markdown
    std::string plots_dir;  // SVG, PNG, data and gnuplot scripts of the plots; empty: none
    ReportFormat format = ReportFormat::kHtml;
};

// Reads the store at `db_path` and writes the page (or the Markdown tables: report/markdown.h);
// `progress` hears one line per stage. A bad output path fails before anything is drawn; on
// failure no half-written file is left. Only the export to `plots_dir` needs gnuplot (an
// unavailable error naming the package without it); with Markdown it is an input error.
// Returns the path written.
std::string write_report(const std::string& db_path, const ReportFiles& files,
                         const std::function<void(const std::string&)>& progress);

}  // namespace migscope::report
