// Test helper: a page migscope wrote, loaded in headless Chromium at 1400 px, and what its
// plots' script (report/plots.js) marked on <body> once it drew the figures.
#pragma once

#include <string>

#include "run_process.h"

struct BrowserCheck {
    ProcessResult browser;  // out: the DOM after the scripts ran; err: Chromium's log
    long figures = -1;      // <body data-figures>: the canvases the page says it has
    long plots_drawn = -1;  // data-plots-drawn: charts with ink under their first data point
    long page_width = -1;   // data-page-width, px
    bool ok = false;        // data-report-check="ok": every figure drawn
    size_t canvases = 0;    // <canvas elements in the DOM
};

// The program's path from PATH; empty when it is not installed.
std::string find_program(const std::string& name);

// Occurrences of `what` in `text`.
size_t count_of(const std::string& text, const std::string& what);

// Loads `html_path` (absolute) in `chromium` with its profile in `profile_dir` (a 120 s limit;
// --no-sandbox: CI runs as root).
BrowserCheck load_in_chromium(const std::string& chromium, const std::string& html_path,
                              const std::string& profile_dir);
