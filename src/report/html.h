// The HTML report: one self-contained page (inline CSS, inline SVG plots) with the findings,
// tables of the numbers with their window, method and spread, and the runs' provenance.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/figures.h"
#include "report/findings.h"
#include "store/record.h"

namespace migscope::report {

struct RenderedFigure {
    Figure figure;
    std::string svg;       // gnuplot's SVG document, inlined into the page
    std::string svg_link;  // the image files, relative to the page (links only)
    std::string png_link;
};

struct ReportInput {
    std::string source;                  // the results store it was made from
    std::string generator;               // "migscope 0.4.0 (abc1234)"
    std::vector<store::RunRecord> runs;  // every run, without traces
    Findings findings;
    std::vector<RenderedFigure> figures;
};

// Writes the page. Missing values print as "–" next to the reason, never as 0. A small inline
// script marks <body data-report-check="ok"> once every figure holds its plot; the page reads the
// same without it.
void write_html(const ReportInput& input, std::ostream& out);

// An SVG document ready to inline: without its XML prolog, its ids prefixed with `id_prefix` so
// that several plots in one page do not clash, its <title> replaced by `title`.
std::string inline_svg(const std::string& svg, const std::string& id_prefix,
                       const std::string& title);

// Text escaped for HTML element content and attribute values.
std::string html_escape(const std::string& text);

}  // namespace migscope::report
