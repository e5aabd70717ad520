// The HTML report: one self-contained page (inline CSS, plots drawn by the embedded Chart.js from
// inline JSON data) opening with the verdict, then what could not be shown and why, the findings,
// tables of the numbers with their window, method and spread, and the runs' provenance.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/figures.h"
#include "report/findings.h"
#include "store/record.h"

namespace migscope::report {

struct ReportFigure {
    Figure figure;
    std::string svg_link;  // exported image files, relative to the page; empty: not exported
    std::string png_link;
};

struct ReportInput {
    std::string source;                  // the results store it was made from
    std::string generator;               // "migscope 0.4.0 (abc1234)"
    std::vector<store::RunRecord> runs;  // every run, without traces
    Findings findings;
    std::vector<ReportFigure> figures;
    std::string export_note;  // where SVG/PNG copies of the plots are, or why there are none
};

// Writes the page. Missing values print as "–" next to the reason, never as 0. The plots' script
// marks <body data-report-check="ok"> once every figure's canvas shows its data; without
// JavaScript the tables still hold every number.
void write_html(const ReportInput& input, std::ostream& out);

// Text escaped for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace migscope::report
