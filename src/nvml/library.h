// The loaded libnvidia-ml and the entry points migscope resolves from it; private to src/nvml.
#pragma once

#include <dlfcn.h>

#include <string>

#include "core/error.h"
#include "nvml/call_error.h"
#include "nvml/nvml_api.h"

namespace migscope::nvml {

// The loaded library and the entry points migscope uses. Optional entry points stay null when an
// older driver lacks them; their queries then read as "not supported".
class Library {
  public:
    explicit Library(const std::string& path) : path_(path) {
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle_ == nullptr) {
            const char* why = dlerror();
            throw unavailable_error("NVML unavailable: cannot load " + path + " (" +
                                    (why ? why : "unknown reason") +
                                    "); is the NVIDIA driver installed?");
        }
        required(init, "nvmlInit_v2");
        required(shutdown, "nvmlShutdown");
        required(error_string, "nvmlErrorString");
        required(get_count, "nvmlDeviceGetCount_v2");
        required(get_handle, "nvmlDeviceGetHandleByIndex_v2");
        optional(driver_version, "nvmlSystemGetDriverVersion");
        optional(cuda_driver_version, "nvmlSystemGetCudaDriverVersion");
        optional(get_name, "nvmlDeviceGetName");
        optional(get_uuid, "nvmlDeviceGetUUID");
        optional(get_memory, "nvmlDeviceGetMemoryInfo");
        optional(get_mig_mode, "nvmlDeviceGetMigMode");
        optional(get_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
        optional(get_power_usage, "nvmlDeviceGetPowerUsage");
        optional(get_energy, "nvmlDeviceGetTotalEnergyConsumption");
        optional(get_field_values, "nvmlDeviceGetFieldValues");
        optional(get_clock, "nvmlDeviceGetClockInfo");
        optional(get_utilization, "nvmlDeviceGetUtilizationRates");
        optional(get_temperature, "nvmlDeviceGetTemperature");
        optional(get_clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
        if (get_clocks_event_reasons == nullptr) {  // drivers before the rename
            optional(get_clocks_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
        }
        optional(get_profile_info, "nvmlDeviceGetGpuInstanceProfileInfo");
        optional(get_profile_info_v, "nvmlDeviceGetGpuInstanceProfileInfoV");
        optional(get_placements, "nvmlDeviceGetGpuInstancePossiblePlacements_v2");
        optional(get_gpu_instances, "nvmlDeviceGetGpuInstances");
        optional(create_gpu_instance, "nvmlDeviceCreateGpuInstanceWithPlacement");
        optional(destroy_gpu_instance, "nvmlGpuInstanceDestroy");
        optional(get_gpu_instance_info, "nvmlGpuInstanceGetInfo");
        optional(get_ci_profile_info, "nvmlGpuInstanceGetComputeInstanceProfileInfo");
        optional(get_ci_profile_info_v, "nvmlGpuInstanceGetComputeInstanceProfileInfoV");
        optional(create_compute_instance, "nvmlGpuInstanceCreateComputeInstance");
        optional(get_compute_instances, "nvmlGpuInstanceGetComputeInstances");
        optional(destroy_compute_instance, "nvmlComputeInstanceDestroy");
        optional(get_compute_instance_info, "nvmlComputeInstanceGetInfo_v2");
        optional(get_max_mig_device_count, "nvmlDeviceGetMaxMigDeviceCount");
        optional(get_mig_device_handle, "nvmlDeviceGetMigDeviceHandleByIndex");
        optional(get_gpu_instance_id, "nvmlDeviceGetGpuInstanceId");
        optional(get_compute_instance_id, "nvmlDeviceGetComputeInstanceId");
        optional(get_compute_processes, "nvmlDeviceGetComputeRunningProcesses_v3");
        optional(get_process_utilization, "nvmlDeviceGetProcessUtilization");
        optional(gpm_sample_alloc, "nvmlGpmSampleAlloc");
        optional(gpm_sample_free, "nvmlGpmSampleFree");
        optional(gpm_mig_sample_get, "nvmlGpmMigSampleGet");
        optional(gpm_metrics_get, "nvmlGpmMetricsGet");
        optional(gpm_query_device_support, "nvmlGpmQueryDeviceSupport");
    }
    ~Library() {
        if (handle_ != nullptr)
            dlclose(handle_);
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;

    std::string describe(const char* call, api::Return code) const {
        const char* text = error_string ? error_string(code) : nullptr;
        return std::string(call) + " failed: " + (text ? text : "error") + " (NVML code " +
               std::to_string(code) + ")";
    }
    const std::string& path() const { return path_; }

    api::InitFn init = nullptr;
    api::ShutdownFn shutdown = nullptr;
    api::ErrorStringFn error_string = nullptr;
    api::DeviceGetCountFn get_count = nullptr;
    api::DeviceGetHandleByIndexFn get_handle = nullptr;
    api::SystemGetDriverVersionFn driver_version = nullptr;
    api::SystemGetCudaDriverVersionFn cuda_driver_version = nullptr;
    api::DeviceGetNameFn get_name = nullptr;
    api::DeviceGetUuidFn get_uuid = nullptr;
    api::DeviceGetMemoryInfoFn get_memory = nullptr;
    api::DeviceGetMigModeFn get_mig_mode = nullptr;
    api::DeviceGetUintFn get_power_limit = nullptr;
    api::DeviceGetUintFn get_power_usage = nullptr;
    api::DeviceGetTotalEnergyConsumptionFn get_energy = nullptr;
    api::DeviceGetFieldValuesFn get_field_values = nullptr;
    api::DeviceGetClockInfoFn get_clock = nullptr;
    api::DeviceGetUtilizationRatesFn get_utilization = nullptr;
    api::DeviceGetTemperatureFn get_temperature = nullptr;
    api::DeviceGetClocksEventReasonsFn get_clocks_event_reasons = nullptr;
    api::DeviceGetGpuInstanceProfileInfoFn get_profile_info = nullptr;
    api::DeviceGetGpuInstanceProfileInfoVFn get_profile_info_v = nullptr;
    api::DeviceGetGpuInstancePossiblePlacementsFn get_placements = nullptr;
    api::DeviceGetGpuInstancesFn get_gpu_instances = nullptr;
    api::DeviceCreateGpuInstanceWithPlacementFn create_gpu_instance = nullptr;
    api::GpuInstanceDestroyFn destroy_gpu_instance = nullptr;
    api::GpuInstanceGetInfoFn get_gpu_instance_info = nullptr;
    api::GpuInstanceGetComputeInstanceProfileInfoFn get_ci_profile_info = nullptr;
    api::GpuInstanceGetComputeInstanceProfileInfoVFn get_ci_profile_info_v = nullptr;
    api::GpuInstanceCreateComputeInstanceFn create_compute_instance = nullptr;
    api::GpuInstanceGetComputeInstancesFn get_compute_instances = nullptr;
    api::ComputeInstanceDestroyFn destroy_compute_instance = nullptr;
    api::ComputeInstanceGetInfoFn get_compute_instance_info = nullptr;
    api::DeviceGetUintFn get_max_mig_device_count = nullptr;
    api::DeviceGetMigDeviceHandleByIndexFn get_mig_device_handle = nullptr;
    api::DeviceGetUintFn get_gpu_instance_id = nullptr;
    api::DeviceGetUintFn get_compute_instance_id = nullptr;
    api::DeviceGetComputeRunningProcessesFn get_compute_processes = nullptr;
    api::DeviceGetProcessUtilizationFn get_process_utilization = nullptr;
    api::GpmSampleAllocFn gpm_sample_alloc = nullptr;
    api::GpmSampleFreeFn gpm_sample_free = nullptr;
    api::GpmMigSampleGetFn gpm_mig_sample_get = nullptr;
    api::GpmMetricsGetFn gpm_metrics_get = nullptr;
    api::GpmQueryDeviceSupportFn gpm_query_device_support = nullptr;

  private:
    template <typename Fn>
    void optional(Fn& fn, const char* symbol) {
        fn = reinterpret_cast<Fn>(dlsym(handle_, symbol));
    }
    template <typename Fn>
    void required(Fn& fn, const char* symbol) {
        optional(fn, symbol);
        if (fn == nullptr) {
            throw unavailable_error("NVML unavailable: " + path_ + " lacks " + symbol +
                                    " (driver too old?)");
        }
    }

    std::string path_;
    void* handle_ = nullptr;
};

// The CallError of a failed call: no permission or not supported is the driver's or the setup's
// limit (unavailable), anything else a runtime failure.
[[noreturn]] inline void throw_call_error(const Library& lib, const char* call, api::Return code) {
    const ErrorKind kind = code == api::kErrorNoPermission || code == api::kErrorNotSupported
                               ? ErrorKind::kUnavailable
                               : ErrorKind::kRuntime;
    throw CallError(kind, lib.describe(call, code), call, code);
}

// An optional entry point this driver lacks is unavailable; `missing` says what the caller
// concludes ("driver too old?").
template <typename Fn>
void require_function(const Library& lib, Fn fn, const char* call, const char* missing) {
    if (fn == nullptr) {
        throw CallError(ErrorKind::kUnavailable,
                        lib.path() + " lacks " + call + " (" + missing + ")", call,
                        api::kErrorFunctionNotFound);
    }
}

}  // namespace migscope::nvml
