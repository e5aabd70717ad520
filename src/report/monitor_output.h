// What `migscope monitor` measured, like `perf stat` for GPU energy: the summary on the terminal
// and as JSON, each figure with its method.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "telemetry/command_monitor.h"

namespace migscope::report {

struct MonitorReport {
    unsigned gpu_index = 0;
    std::string gpu_name;
    telemetry::MonitorRequest request;
    telemetry::MonitorResult result;
};

void print_monitor_summary(const MonitorReport& report, std::ostream& out);
nlohmann::json monitor_json(const MonitorReport& report);

}  // namespace migscope::report
