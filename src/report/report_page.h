// The HTML report of a results store: findings, plots drawn with gnuplot (kept as SVG and PNG
// beside the page) and the page itself, written whole or not at all.
#pragma once

#include <functional>
#include <string>

namespace migscope::report {

struct ReportFiles {
    std::string html_path;  // as given
    std::string plots_dir;  // empty: the page's name with -plots, beside it
};

// Reads the store at `db_path` and writes the page; `progress` hears one line per stage. A bad
// output path fails before anything is drawn; on failure no half-written page is left.
void write_report(const std::string& db_path, const ReportFiles& files,
                  const std::function<void(const std::string&)>& progress);

}  // namespace migscope::report
