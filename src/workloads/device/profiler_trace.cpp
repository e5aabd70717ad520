// Kineto trace recording through LibTorch's profiler API.
#include "workloads/device/profiler_trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <set>

namespace migscope::workloads {
namespace {

namespace profiler = torch::profiler::impl;

profiler::ProfilerConfig trace_config() {
    return profiler::ProfilerConfig(profiler::ProfilerState::KINETO, /*report_input_shapes=*/true);
}

}  // namespace

ProfilerTrace::ProfilerTrace(bool cuda) {
    std::set<profiler::ActivityType> activities{profiler::ActivityType::CPU};
    if (cuda)
        activities.insert(profiler::ActivityType::CUDA);
    torch::autograd::profiler::prepareProfiler(trace_config(), activities);
    torch::autograd::profiler::enableProfiler(trace_config(), activities);
    recording_ = true;
}

ProfilerTrace::~ProfilerTrace() {
    if (recording_)
        torch::autograd::profiler::disableProfiler();
}

void ProfilerTrace::save(const std::string& path) {
    recording_ = false;
    torch::autograd::profiler::disableProfiler()->save(path);
}

}  // namespace migscope::workloads
