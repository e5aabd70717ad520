// A policy's layout changes as a mig-parted config and a list of times.
#include "stream/schedule.h"

#include <algorithm>

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

}  // namespace migscope::stream
