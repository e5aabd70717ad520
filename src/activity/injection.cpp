// The CUDA injection library a process's environment loads, named for a run's provenance.
#include "activity/injection.h"

#include <cstdlib>

namespace migscope::activity {

std::string injection_name(std::string_view injection_path, std::string_view graphs_setting) {
    if (injection_path.empty())
        return kNoInjection;
    const size_t slash = injection_path.rfind('/');
    const std::string_view file =
        slash == std::string_view::npos ? injection_path : injection_path.substr(slash + 1);
    if (file.rfind("libmigscope-activity.so", 0) == 0)
        return graphs_setting == "1" ? kProbeGraphs : kProbeKernels;
    return std::string(file);
}

std::string injection_in_environment() {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    const char* graphs = std::getenv("MIGSCOPE_ACTIVITY_GRAPHS");
    return injection_name(path ? path : "", graphs ? graphs : "");
}

bool is_activity_probe(std::string_view injection) {
    return injection == kProbeKernels || injection == kProbeGraphs;
}

}  // namespace migscope::activity
