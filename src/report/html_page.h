// The parts every self-contained HTML page of migscope shares (the store's report, a stream's
// simulation): the head with the inline style, tables, figure canvases, and the figures' data
// with the embedded scripts that draw them (Chart.js and plots.js).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace migscope::report {

// "<!DOCTYPE html>" to "<body data-figures=N>": the title (escaped here) and the inline style.
// plots.js marks the body data-report-check="ok" once all `figures` canvases show their data.
void write_page_start(std::ostream& out, const std::string& title, size_t figures);

// The figures' data (chart_data's JSON, one per canvas) as the inline JSON element plots.js
// reads, the embedded Chart.js and plots.js when there is a figure, and the page's end.
void write_page_end(std::ostream& out, const nlohmann::json& figures);

// A figure: the canvas plots.js draws on, its text fallback and caption (both escaped here) and
// `links_html` (HTML already: the exported SVG and PNG, or empty).
std::string figure_html(const std::string& figure_id, const std::string& canvas_id,
                        const std::string& title, const std::string& caption,
                        const std::string& links_html = "");

// An HTML table built row by row, in a scrolling box (wide tables do not widen the page); the
// headers and cells are HTML already.
class HtmlTable {
  public:
    explicit HtmlTable(const std::vector<std::string>& headers);
    // `numeric` columns (by index) are right-aligned.
    void row(const std::vector<std::string>& cells, const std::set<size_t>& numeric = {},
             const std::string& row_class = "");
    std::string html() const;

  private:
    std::string html_;
};

}  // namespace migscope::report
