// NVML activity calls: per-process SM utilization and GPM MIG samples turned into typed values
// and CallErrors.
#include "nvml/activity_api.h"

#include <algorithm>
#include <map>

#include "nvml/library.h"

namespace migscope::nvml {
namespace {

constexpr const char* kTooOld = "driver too old?";

}  // namespace

std::vector<ProcessSmSample> process_sm_utilization(const Device& device,
                                                    unsigned long long since_us) {
    const Library& lib = *device.library();
    const char* call = "nvmlDeviceGetProcessUtilization";
    require_function(lib, lib.get_process_utilization, call, kTooOld);
    unsigned count = 0;
    api::Return rc = lib.get_process_utilization(device.handle(), nullptr, &count, since_us);
    if (rc == api::kErrorNotFound)
        return {};  // no sample newer than since_us
    std::vector<api::ProcessUtilizationSample> samples;
    // The list can grow between the two calls: retry a few times with room to spare.
    for (int attempt = 0; rc == api::kErrorInsufficientSize && attempt < 4; ++attempt) {
        samples.assign(count + 8, api::ProcessUtilizationSample{});
        count = static_cast<unsigned>(samples.size());
        rc = lib.get_process_utilization(device.handle(), samples.data(), &count, since_us);
    }
    if (rc == api::kErrorNotFound)
        return {};
    if (rc != api::kSuccess)
        throw_call_error(lib, call, rc);
    // NVML may give several samples of one process (one per driver sampling period): average them.
    std::map<unsigned, std::pair<ProcessSmSample, unsigned>> by_pid;  // sum of ratios, count
    for (unsigned i = 0; i < count && i < samples.size(); ++i) {
        const api::ProcessUtilizationSample& s = samples[i];
        auto& [out, n] = by_pid[s.pid];
        out.pid = s.pid;
        out.timestamp_us = std::max(out.timestamp_us, s.timeStamp);
        out.sm_ratio += std::clamp(s.smUtil / 100.0, 0.0, 1.0);
        ++n;
    }
    std::map<unsigned, ProcessSmSample> newest;
    for (auto& [pid, entry] : by_pid) {
        entry.first.sm_ratio /= entry.second;
        newest[pid] = entry.first;
    }
    std::vector<ProcessSmSample> result;
    for (const auto& [pid, sample] : newest)
        result.push_back(sample);
    return result;
}

bool gpm_supported(const Device& device) {
    const Library& lib = *device.library();
    if (lib.gpm_query_device_support == nullptr || lib.gpm_sample_alloc == nullptr ||
        lib.gpm_mig_sample_get == nullptr || lib.gpm_metrics_get == nullptr) {
        return false;
    }
    api::GpmSupport support{};
    support.version = api::kGpmSupportVersion;
    return lib.gpm_query_device_support(device.handle(), &support) == api::kSuccess &&
           support.isSupportedDevice != 0;
}

GpmSampleBuffer::GpmSampleBuffer(const Device& device) : lib_(device.library()) {
    require_function(*lib_, lib_->gpm_sample_alloc, "nvmlGpmSampleAlloc", kTooOld);
    require_function(*lib_, lib_->gpm_sample_free, "nvmlGpmSampleFree", kTooOld);
    if (api::Return rc = lib_->gpm_sample_alloc(&handle_); rc != api::kSuccess)
        throw_call_error(*lib_, "nvmlGpmSampleAlloc", rc);
}

GpmSampleBuffer::~GpmSampleBuffer() {
    if (handle_ != nullptr)
        lib_->gpm_sample_free(handle_);
}

void gpm_mig_sample(const Device& device, unsigned gpu_instance_id, const GpmSampleBuffer& sample) {
    const Library& lib = *device.library();
    require_function(lib, lib.gpm_mig_sample_get, "nvmlGpmMigSampleGet", kTooOld);
    if (api::Return rc = lib.gpm_mig_sample_get(device.handle(), gpu_instance_id, sample.handle());
        rc != api::kSuccess) {
        throw_call_error(lib, "nvmlGpmMigSampleGet", rc);
    }
}

double gpm_sm_activity_ratio(const Device& device, const GpmSampleBuffer& earlier,
                             const GpmSampleBuffer& later) {
    const Library& lib = *device.library();
    const char* call = "nvmlGpmMetricsGet";
    require_function(lib, lib.gpm_metrics_get, call, kTooOld);
    auto get = std::make_unique<api::GpmMetricsGet>();  // about 10 KB: not on the stack
    *get = api::GpmMetricsGet{};
    get->version = api::kGpmMetricsGetVersion;
    get->numMetrics = 1;
    get->sample1 = earlier.handle();
    get->sample2 = later.handle();
    get->metrics[0].metricId = api::kGpmMetricSmUtil;
    if (api::Return rc = lib.gpm_metrics_get(get.get()); rc != api::kSuccess)
        throw_call_error(lib, call, rc);
    if (get->metrics[0].nvmlReturn != api::kSuccess)
        throw_call_error(lib, "nvmlGpmMetricsGet (NVML_GPM_METRIC_SM_UTIL)",
                         get->metrics[0].nvmlReturn);
    return std::clamp(get->metrics[0].value / 100.0, 0.0, 1.0);
}

}  // namespace migscope::nvml
