// A policy's layout changes as a mig-parted config and a list of times, and the two files.
#include "stream/schedule.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

#include "core/error.h"
#include "core/user_text.h"
#include "report/deploy_output.h"

namespace migscope::stream {

LayoutSchedule layout_schedule(const StreamResult& result) {
    LayoutSchedule s;
    s.policy = result.policy;
    plan::Plan distinct;  // one GPU per distinct layout, in order of first use
    for (const LayoutEvent& e : result.layouts) {
        const plan::GpuPlan gpu{e.gpu_layout, {}};
        s.steps.push_back({e.at_s, e.gpu, report::layout_config_name(gpu), e.layout});
        if (std::none_of(distinct.begin(), distinct.end(),
                         [&](const plan::GpuPlan& d) { return d.layout == e.gpu_layout; }))
            distinct.push_back(gpu);
    }
    std::stable_sort(
        s.steps.begin(), s.steps.end(),
        [](const ScheduledLayout& a, const ScheduledLayout& b) { return a.time_s < b.time_s; });
    s.mig_parted_yaml = report::mig_parted_document(distinct);
    return s;
}

nlohmann::ordered_json schedule_times_json(const LayoutSchedule& schedule) {
    nlohmann::ordered_json doc;
    doc["version"] = 1;
    doc["policy"] = schedule.policy;
    doc["mig_parted_config"] = kScheduleConfigFile;
    doc["steps"] = nlohmann::ordered_json::array();
    for (const ScheduledLayout& s : schedule.steps) {
        doc["steps"].push_back(
            {{"time_s", s.time_s}, {"gpu", s.gpu}, {"config", s.config}, {"layout", s.layout}});
    }
    return doc;
}

void write_layout_schedule(const std::string& folder, const LayoutSchedule& schedule) {
    const std::pair<std::string, std::string> files[] = {
        {kScheduleConfigFile, schedule.mig_parted_yaml},
        {kScheduleTimesFile, schedule_times_json(schedule).dump(2) + "\n"}};
    for (const auto& [name, text] : files) {
        const std::filesystem::path path = std::filesystem::path(folder) / name;
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out)
            throw input_error("--schedule-dir: cannot write " + user_text::escaped(path.string()));
    }
}

}  // namespace migscope::stream
