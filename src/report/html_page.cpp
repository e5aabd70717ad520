// The shared parts of migscope's HTML pages: head and style, tables, canvases and the scripts.
#include "report/html_page.h"

#include "report/chart_data.h"
#include "report/html.h"

namespace migscope::embedded {
extern const char kChartJs[];  // Debian's chart.min.js, embedded at build time
extern const char kPlotsJs[];  // report/plots.js
}  // namespace migscope::embedded

namespace migscope::report {
namespace {

const char* kStyle = R"(
body{font:15px/1.45 system-ui,sans-serif;color:#1d1d1f;max-width:1400px;margin:0 auto;padding:1em 1.5em}
h1{margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
.meta{color:#555}.na{color:#a00;font-weight:600}.spread{color:#555;font-size:90%}
.caveat{background:#fff6e0;border-left:4px solid #e0a000;padding:.5em 1em}
.scroll{overflow-x:auto}table{border-collapse:collapse;margin:.8em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#f2f2f2}td.n{text-align:right;white-space:nowrap}
figure.plot{margin:1em 0;max-width:860px}figure.plot canvas{width:100%;display:block}
#verdict{background:#eef6ee;border-left:4px solid #2c9c3c;padding:.3em 1em}
#missing{background:#fff6e0;border-left:4px solid #e0a000;padding:.3em 1em}
#verdict h2,#missing h2{border:0;margin-top:.6em}
code{overflow-wrap:anywhere}
figcaption{font-size:13px;color:#333}.front{font-weight:600}.host td{font-weight:600;border-top:1px solid #999}
)";

// An embedded script as it may sit in <script>: it must not hold "</script" (Chart.js does not;
// a future version that did would be cut short, so it is broken where it would end the element).
std::string embedded_script(const char* text) {
    std::string s(text);
    for (size_t at = s.find("</script"); at != std::string::npos; at = s.find("</script", at))
        s.replace(at, 2, "<\\/");
    return s;
}

}  // namespace

void write_page_start(std::ostream& out, const std::string& title, size_t figures) {
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>" << html_escape(title) << "</title>\n<style>" << kStyle
        << "</style></head>\n<body data-figures=\"" << figures << "\">\n";
}

void write_page_end(std::ostream& out, const nlohmann::json& figures) {
    out << "<script type=\"application/json\" id=\"migscope-figures\">" << script_json(figures)
        << "</script>\n";
    if (!figures.empty()) {
        out << "<script>" << embedded_script(embedded::kChartJs) << "</script>\n<script>"
            << embedded_script(embedded::kPlotsJs) << "</script>\n";
    }
    out << "</body></html>\n";
}

std::string figure_html(const std::string& figure_id, const std::string& canvas_id,
                        const std::string& title, const std::string& caption,
                        const std::string& links_html) {
    return "<figure class=\"plot\" id=\"" + html_escape(figure_id) + "\">\n<canvas id=\"" +
           html_escape(canvas_id) + "\" role=\"img\" aria-label=\"" + html_escape(title) + "\">" +
           html_escape(title) + " (the numbers are in the table below)</canvas>\n<figcaption>" +
           html_escape(caption) + (links_html.empty() ? "" : " " + links_html) +
           "</figcaption></figure>\n";
}

HtmlTable::HtmlTable(const std::vector<std::string>& headers) {
    html_ = "<table><thead><tr>";
    for (const std::string& h : headers)
        html_ += "<th>" + h + "</th>";
    html_ += "</tr></thead><tbody>\n";
}

void HtmlTable::row(const std::vector<std::string>& cells, const std::set<size_t>& numeric,
                    const std::string& row_class) {
    html_ += row_class.empty() ? "<tr>" : "<tr class=\"" + row_class + "\">";
    for (size_t i = 0; i < cells.size(); ++i)
        html_ += (numeric.count(i) ? "<td class=\"n\">" : "<td>") + cells[i] + "</td>";
    html_ += "</tr>\n";
}

std::string HtmlTable::html() const {
    return "<div class=\"scroll\">" + html_ + "</tbody></table></div>\n";
}

}  // namespace migscope::report
