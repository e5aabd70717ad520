// The CUDA injection library a process's environment loads, named for a run's provenance.
#include "activity/injection.h"

#include <cstdlib>
#include <string>

namespace migscope::activity {

std::string probe_records(std::string_view graphs_setting, std::string_view duty_setting) {
    if (graphs_setting == "1")
        return "graphs";
    if (!duty_setting.empty()) {
        char* end = nullptr;
        const std::string duty(duty_setting);
        const double d = std::strtod(duty.c_str(), &end);
        if (end != duty.c_str() && d < 1)
            return "kernels-sampled";
    }
    return "kernels";
}

std::string probe_injection(std::string_view records) {
    return "migscope-activity " + std::string(records);
}

std::string injection_name(std::string_view injection_path, std::string_view graphs_setting,
                           std::string_view duty_setting) {
    if (injection_path.empty())
        return kNoInjection;
    const size_t slash = injection_path.rfind('/');
    const std::string_view file =
        slash == std::string_view::npos ? injection_path : injection_path.substr(slash + 1);
    if (file.rfind("libmigscope-activity.so", 0) == 0)
        return probe_injection(probe_records(graphs_setting, duty_setting));
    return std::string(file);
}

std::string injection_in_environment() {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    const char* graphs = std::getenv("MIGSCOPE_ACTIVITY_GRAPHS");
    const char* duty = std::getenv("MIGSCOPE_ACTIVITY_DUTY");
    return injection_name(path ? path : "", graphs ? graphs : "", duty ? duty : "");
}

bool is_activity_probe(std::string_view injection) {
    return injection == kProbeKernels || injection == kProbeKernelsSampled ||
           injection == kProbeGraphs;
}

}  // namespace migscope::activity
