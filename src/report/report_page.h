// The HTML report of a results store: findings, plots (drawn in the page by the embedded
// Chart.js; SVG and PNG copies by gnuplot on request) and the page itself, written whole or not
// at all.
#pragma once

#include <functional>
#include <string>

namespace migscope::report {

struct ReportFiles {
    std::string html_path;  // as given
    std::string plots_dir;  // SVG, PNG, data and gnuplot scripts of the plots; empty: none
};

// Reads the store at `db_path` and writes the page; `progress` hears one line per stage. A bad
// output path fails before anything is drawn; on failure no half-written page is left. Only the
// export to `plots_dir` needs gnuplot (an unavailable error naming the package without it).
void write_report(const std::string& db_path, const ReportFiles& files,
                  const std::function<void(const std::string&)>& progress);

}  // namespace migscope::report
