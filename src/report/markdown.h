// The report of a results store as Markdown tables, for documents that quote measured results:
// the verdict, each layout against the same jobs one after another, and each job alone on each
// partition size, every figure a median with n and its range.
#pragma once

#include <ostream>
#include <string>

#include "report/findings.h"

namespace migscope::report {

// Writes the three sections under "##" headings, after one line saying what drew them (the
// store `source` and `generator`, "migscope 0.4.0 (abc1234)"). Missing figures are "–", never 0.
void write_markdown(const Findings& findings, const std::string& source,
                    const std::string& generator, std::ostream& out);

// Text as Markdown shows it literally inside a paragraph, list item or table cell: characters
// that would start emphasis, code, links, HTML or entities, or end a table cell, are escaped;
// line breaks become spaces.
std::string markdown_escape(const std::string& text);

}  // namespace migscope::report
