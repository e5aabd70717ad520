// Loads a page in headless Chromium and reads back what the page's script marked on <body>.
#include "browser_check.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace fs = std::filesystem;

namespace {

// The number in attribute `name` of the page's <body>, or -1.
long body_attribute(const std::string& dom, const std::string& name) {
    const size_t body = dom.find("<body");
    const size_t at = dom.find(name + "=\"", body);
    if (body == std::string::npos || at == std::string::npos || at > dom.find('>', body))
        return -1;
    return std::strtol(dom.c_str() + at + name.size() + 2, nullptr, 10);
}

}  // namespace

std::string find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const fs::path candidate = fs::path(dir) / name;
        if (!dir.empty() && access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    }
    return "";
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

BrowserCheck load_in_chromium(const std::string& chromium, const std::string& html_path,
                              const std::string& profile_dir) {
    BrowserCheck c;
    c.browser =
        run_process({"/usr/bin/timeout", "120", chromium, "--headless", "--no-sandbox",
                     "--disable-gpu", "--window-size=1400,1000", "--enable-logging=stderr", "--v=0",
                     "--user-data-dir=" + profile_dir, "--dump-dom", "file://" + html_path});
    const std::string& dom = c.browser.out;
    c.figures = body_attribute(dom, "data-figures");
    c.plots_drawn = body_attribute(dom, "data-plots-drawn");
    c.page_width = body_attribute(dom, "data-page-width");
    const size_t body = dom.find("<body");
    const size_t ok = dom.find("data-report-check=\"ok\"", body);
    c.ok = body != std::string::npos && ok != std::string::npos && ok < dom.find('>', body);
    c.canvases = count_of(dom, "<canvas");
    return c;
}
