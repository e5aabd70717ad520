// A policy's layouts over time as files to deploy: a mig-parted config with one named config per
// distinct layout (named and written as `migscope plan --format k8s` writes them) and the times at
// which each GPU takes which config.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stream/simulator.h"

namespace migscope::stream {

// The files a schedule is written as, in the folder the user names (fixed names: nothing the
// user or a trace says becomes a path).
inline constexpr const char* kScheduleConfigFile = "mig-parted-config.yaml";
inline constexpr const char* kScheduleTimesFile = "layout-schedule.json";

// From this time on, this GPU runs this config (the layout change starts then; the simulator
// blocks the GPU for the change's cost).
struct ScheduledLayout {
    double time_s = 0;  // on the trace's arrival_s clock
    size_t gpu = 0;
    std::string config;  // its name in the mig-parted config: report::layout_config_name
    std::string layout;  // plan::describe's words, placements included
};

struct LayoutSchedule {
    std::string policy;                  // the policy's name, as the simulator reports it
    std::vector<ScheduledLayout> steps;  // every GPU's first layout at 0, then each change, by time
    std::string mig_parted_yaml;  // `version: v1`, `mig-configs`: all-disabled and each layout used
};

// The schedule of a simulated policy (its StreamResult::layouts).
LayoutSchedule layout_schedule(const StreamResult& result);

// The times list: {"version": 1, "policy", "mig_parted_config": kScheduleConfigFile, "steps":
// [{"time_s", "gpu", "config", "layout"}]}.
nlohmann::ordered_json schedule_times_json(const LayoutSchedule& schedule);

// Writes kScheduleConfigFile and kScheduleTimesFile into `folder` (which exists); an input error
// naming --schedule-dir and the file when one cannot be written.
void write_layout_schedule(const std::string& folder, const LayoutSchedule& schedule);

}  // namespace migscope::stream
