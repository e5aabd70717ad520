// Tests of a stream simulation's HTML page: its sections and figures, and hostile names from the
// trace kept as text in the HTML and in the figures' JSON.
#include "stream/stream_page.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "plan/fixture.h"
#include "stream/compare.h"

namespace migscope::stream {
namespace {

using plan::testing::job_profile;
using plan::testing::profile_set;

const std::string kHostile = "</script><img src=x onerror=alert(1)>";
const std::string kHostileEscaped = "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;";

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

// The launch-bound job of stream_charts_test.cpp, named by a hostile trace; bursts of 14 at 0,
// 1000 and 2000 s on two GPUs, due 60 s after they arrive (many end late), no model error.
std::string hostile_page() {
    static const plan::ProfileSet set =
        profile_set({job_profile("c", 10, {{"1g.18gb", {50, 130}}, {"whole GPU", {60, 200}}})});
    const plan::Problem problem = plan::make_problem({{kHostile, "c", "train", 10, 100, {}, {}}},
                                                     set, mig::builtin_model("h200"), {});
    std::vector<StreamJob> jobs;
    for (double at : {0.0, 1000.0, 2000.0}) {
        for (int i = 0; i < 14; ++i)
            jobs.push_back({0, at + 0.1 * i, at + 60});
    }
    SimulationOptions o;
    o.gpus = 2;
    o.reconfiguration.orchestrator_s = 10;
    o.series_bin_s = 50;
    PolicySettings s;
    s.period_s = 1000;
    s.window_s = 1000;
    const PolicyComparison compared =
        compare_policies(problem, jobs, {"never", "periodic"}, o, s, 0.0, nullptr);
    StreamPageInput in;
    in.setup.trace_path = "traces/" + kHostile + ".json";
    in.trace_source = "sacct " + kHostile;
    in.setup.gpus = 2;
    in.setup.gpu_model = "h200";
    in.setup.profiles_origin = "profiles " + kHostile;
    in.setup.error_origin = "none";
    in.setup.objective_name = "energy";
    in.setup.reconfiguration = o.reconfiguration;
    in.generator = "migscope test";
    std::ostringstream out;
    write_stream_page(in, problem, jobs, compared, out);
    return out.str();
}

// The text of the page's figure data element.
std::string figures_json(const std::string& page) {
    const std::string open = "<script type=\"application/json\" id=\"migscope-figures\">";
    const size_t at = page.find(open);
    if (at == std::string::npos)
        return "";
    const size_t from = at + open.size();
    return page.substr(from, page.find("</script>", from) - from);
}

TEST(StreamPage, HasTheComparisonTheFiguresAndTheirData) {
    const std::string page = hostile_page();
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(page.find("</html>"), std::string::npos);
    for (const char* section :
         {"id=\"policies\"", "id=\"over-time\"", "id=\"changes\"", "id=\"late\"", "id=\"method\""})
        EXPECT_NE(page.find(section), std::string::npos) << section;
    EXPECT_NE(page.find("<body data-figures=\"2\">"), std::string::npos);
    EXPECT_NE(page.find("<canvas id=\"plot-stream-energy\""), std::string::npos);
    EXPECT_NE(page.find("<canvas id=\"plot-stream-tardiness\""), std::string::npos);
    EXPECT_NE(page.find("never-partition"), std::string::npos);
    EXPECT_NE(page.find("No intervals: "), std::string::npos);  // no model error given
    const nlohmann::json figures = nlohmann::json::parse(figures_json(page));
    ASSERT_EQ(figures.size(), 2u);
    EXPECT_EQ(figures[0]["canvas"], "plot-stream-energy");
    EXPECT_EQ(figures[1]["canvas"], "plot-stream-tardiness");
    bool markers = false;
    for (const auto& s : figures[0]["series"])
        markers = markers || s["style"] == "markers";
    EXPECT_TRUE(markers);  // periodic changed layouts
}

TEST(StreamPage, HostileNamesFromTheTraceStayText) {
    const std::string page = hostile_page();
    // Nowhere as markup: the name, the trace's path and its source are escaped in the HTML.
    EXPECT_EQ(page.find(kHostile), std::string::npos);
    EXPECT_EQ(page.find("<img"), std::string::npos);
    EXPECT_NE(page.find(kHostileEscaped), std::string::npos);  // in the latest jobs' table
    EXPECT_NE(page.find("<title>migscope stream simulation: traces/" + kHostileEscaped),
              std::string::npos);
    EXPECT_NE(page.find("sacct " + kHostileEscaped), std::string::npos);
    // Only the page's own three scripts end ("</script" is what ends one): the figures' data,
    // Chart.js and plots.js.
    EXPECT_EQ(count_of(page, "</script"), 3u);
    // The figures' JSON holds no raw '<', '>' or '&' (report::script_json) and parses.
    const std::string json = figures_json(page);
    EXPECT_EQ(json.find_first_of("<>&"), std::string::npos);
    EXPECT_TRUE(nlohmann::json::accept(json));
}

}  // namespace
}  // namespace migscope::stream
