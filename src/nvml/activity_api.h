// NVML's activity readings, typed: SM utilization per process and GPM SM activity per MIG GPU
// instance (Hopper and later). Every failure is a CallError naming the NVML call.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "nvml/call_error.h"
#include "nvml/nvml_api.h"
#include "nvml/session.h"

namespace migscope::nvml {

struct ProcessSmSample {
    unsigned pid = 0;
    unsigned long long timestamp_us = 0;  // CPU time of NVML's sample
    double sm_ratio = 0;                  // SM utilization of the whole GPU, 0-1 (mean)
};

// nvmlDeviceGetProcessUtilization: each process's samples since `since_us` (0: what the driver
// keeps), averaged; timestamp_us is its newest. Empty when no process ran since then. Throws a
// CallError (kUnavailable for "not supported" or a driver without the entry point).
std::vector<ProcessSmSample> process_sm_utilization(const Device& device,
                                                    unsigned long long since_us);

// nvmlGpmQueryDeviceSupport; false also when the driver lacks GPM.
bool gpm_supported(const Device& device);

// One GPM sample buffer (nvmlGpmSampleAlloc / nvmlGpmSampleFree).
class GpmSampleBuffer {
  public:
    explicit GpmSampleBuffer(const Device& device);  // throws a CallError
    ~GpmSampleBuffer();
    GpmSampleBuffer(const GpmSampleBuffer&) = delete;
    GpmSampleBuffer& operator=(const GpmSampleBuffer&) = delete;
    api::GpmSample handle() const { return handle_; }

  private:
    std::shared_ptr<const Library> lib_;
    api::GpmSample handle_ = nullptr;
};

// nvmlGpmMigSampleGet: fills `sample` for GPU instance `gpu_instance_id` of `device` (the GPU).
void gpm_mig_sample(const Device& device, unsigned gpu_instance_id, const GpmSampleBuffer& sample);

// nvmlGpmMetricsGet with NVML_GPM_METRIC_SM_UTIL between two samples: the fraction of the
// instance's SMs that were busy, 0-1. Throws a CallError when the metric is not given.
double gpm_sm_activity_ratio(const Device& device, const GpmSampleBuffer& earlier,
                             const GpmSampleBuffer& later);

}  // namespace migscope::nvml
