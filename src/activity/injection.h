// Which CUDA injection library a process's environment loads (CUDA_INJECTION64_PATH), named for a
// run's provenance: the activity probe changes what a job measures (it slows a job and lowers the
// power it draws), so profiles say whether their runs had it and the exporter compares.
#pragma once

#include <string>
#include <string_view>

namespace migscope::activity {

// The activity probe recording each kernel, or each CUDA graph launch (MIGSCOPE_ACTIVITY_GRAPHS=1).
inline constexpr const char* kProbeKernels = "migscope-activity kernels";
inline constexpr const char* kProbeGraphs = "migscope-activity graphs";

// No injection library.
inline constexpr const char* kNoInjection = "none";

// kNoInjection when `injection_path` is empty; kProbeKernels or kProbeGraphs when it names
// libmigscope-activity.so (graphs when `graphs_setting` is "1"); else the library's file name.
std::string injection_name(std::string_view injection_path, std::string_view graphs_setting);
// The same, from this process's environment: what the workers it starts inherit.
std::string injection_in_environment();
// Whether a provenance's injection is the activity probe (in either record kind).
bool is_activity_probe(std::string_view injection);

}  // namespace migscope::activity
