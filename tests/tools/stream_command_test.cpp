// `migscope stream simulate --html` end to end: a busy day (one job named to break out of the
// page) simulated on the shipped H200 profiles, the page checked in headless Chromium at 1400 px
// (both plots drawn with their data, layout changes marked, nothing wider than the window, no
// console messages), an unwritable page refused before any work, and no page left by a failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "browser_check.h"
#include "run_process.h"

namespace {

namespace fs = std::filesystem;

const std::string kHostile = "</script><img src=x onerror=alert(1)>";

class StreamCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(testing::TempDir()) /
               ("stream-" +
                std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    ProcessResult migscope(std::vector<std::string> args) {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        return run_process(args);
    }
    // docs/streams.md's busy day (40 jobs due 3x their time after they arrive, on the shipped
    // profiles), its first job renamed.
    std::string hostile_trace() {
        const std::string path = (dir_ / "day.json").string();
        const ProcessResult r =
            migscope({"stream", "trace", "--generate", "--count", "40", "--rate-per-h", "20",
                      "--seed", "3", "--duration-median-s", "600", "--deadline-slack", "3", "--mix",
                      "resnet18:train:32,resnet50:train:32,vit-b16:train:16,bert-base:train:4,"
                      "gpt2-medium:train:2",
                      "-o", path});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        nlohmann::json trace = nlohmann::json::parse(std::ifstream(path));
        trace["jobs"][0]["name"] = kHostile;
        std::ofstream(path) << trace.dump(1);
        return path;
    }
    fs::path dir_;
};

TEST_F(StreamCommand, SimulateWritesAPageWhosePlotsHeadlessChromiumDraws) {
    const std::string trace = hostile_trace();
    const fs::path html = dir_ / "stream.html";
    // The online policy changes layouts on this day (six times): the plots mark them.
    const ProcessResult r =
        migscope({"stream", "simulate", trace, "--objective", "energy-tardiness", "--policies",
                  "never,periodic,online", "--html", html.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("never-partition"), std::string::npos) << r.out;  // the table still
    EXPECT_NE(r.err.find("the page with the plots over time in"), std::string::npos) << r.err;

    std::ifstream file(html);
    const std::string page((std::istreambuf_iterator<char>(file)), {});
    EXPECT_EQ(page.find(kHostile), std::string::npos);
    EXPECT_EQ(page.find("<img"), std::string::npos);
    EXPECT_NE(page.find("\"style\":\"markers\""), std::string::npos);  // layout changes marked

    // CI installs chromium (scripts/install-deps.sh test): its absence is a failure, not a skip.
    const std::string chromium = find_program("chromium");
    ASSERT_FALSE(chromium.empty())
        << "chromium not found in PATH: install the Debian package chromium (install-deps.sh)";
    const BrowserCheck check =
        load_in_chromium(chromium, html.string(), (dir_ / "chromium").string());
    ASSERT_EQ(check.browser.exit_code, 0) << check.browser.err;
    const std::string& dom = check.browser.out;
    EXPECT_NE(dom.find("</html>"), std::string::npos) << dom.substr(0, 500);
    EXPECT_EQ(check.figures, 2);
    EXPECT_EQ(check.canvases, 2u);
    EXPECT_EQ(check.plots_drawn, 2) << dom.substr(0, 500);
    EXPECT_TRUE(check.ok) << dom.substr(0, 500);
    EXPECT_GT(check.page_width, 0);
    EXPECT_LE(check.page_width, 1400);
    EXPECT_EQ(dom.find("<img"), std::string::npos);  // the hostile name made no element
    EXPECT_EQ(check.browser.err.find("CONSOLE"), std::string::npos) << check.browser.err;
}

TEST_F(StreamCommand, AnUnwritablePageIsRefusedBeforeAnyWork) {
    const std::string trace = hostile_trace();
    const ProcessResult r = migscope(
        {"stream", "simulate", trace, "--html", (dir_ / "no-such-folder" / "s.html").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("never ..."), std::string::npos) << r.err;  // nothing was simulated
}

TEST_F(StreamCommand, AFailedSimulationLeavesNoPage) {
    const fs::path html = dir_ / "s.html";
    const ProcessResult r =
        migscope({"stream", "simulate", (dir_ / "missing.json").string(), "--html", html.string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(fs::exists(html));
}

}  // namespace
