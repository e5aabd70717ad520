// Which CUDA injection library a process's environment loads (CUDA_INJECTION64_PATH), named for a
// run's provenance: the activity probe changes what a job measures (it slows a job and lowers the
// power it draws, by how much depends on what it records), so profiles say whether their runs had
// it and the exporter compares.
#pragma once

#include <string>
#include <string_view>

namespace migscope::activity {

// The activity probe by what it records: each kernel, each kernel inside sampled windows
// (MIGSCOPE_ACTIVITY_DUTY below 1), or each CUDA graph launch (MIGSCOPE_ACTIVITY_GRAPHS=1).
inline constexpr const char* kProbeKernels = "migscope-activity kernels";
inline constexpr const char* kProbeKernelsSampled = "migscope-activity kernels-sampled";
inline constexpr const char* kProbeGraphs = "migscope-activity graphs";

// No injection library.
inline constexpr const char* kNoInjection = "none";

// What the probe records under these settings (MIGSCOPE_ACTIVITY_GRAPHS, MIGSCOPE_ACTIVITY_DUTY):
// "graphs" when graphs is "1" (a duty is then ignored: turning graph records on and off crashed
// a process on an H100), "kernels-sampled" when duty is a number below 1, else "kernels".
std::string probe_records(std::string_view graphs_setting, std::string_view duty_setting);
// The probe's provenance name for what it records ("kernels" -> kProbeKernels).
std::string probe_injection(std::string_view records);

// kNoInjection when `injection_path` is empty; the probe's name (probe_injection) when it names
// libmigscope-activity.so; else the library's file name.
std::string injection_name(std::string_view injection_path, std::string_view graphs_setting,
                           std::string_view duty_setting = "");
// The same, from this process's environment: what the workers it starts inherit.
std::string injection_in_environment();
// Whether a provenance's injection is the activity probe (recording anything).
bool is_activity_probe(std::string_view injection);

}  // namespace migscope::activity
