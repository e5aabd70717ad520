// NVML's MIG instance calls, typed: list/create/destroy GPU and compute instances, MIG device
// handles and the compute processes on a GPU. Every failure is a CallError naming the NVML call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nvml/call_error.h"
#include "nvml/nvml_api.h"
#include "nvml/session.h"

namespace migscope::nvml {

struct GpuInstanceRecord {  // nvmlGpuInstanceGetInfo
    api::GpuInstance handle = nullptr;
    unsigned id = 0;  // GPU instance id, unique within the GPU
    unsigned profile_id = 0;
    api::GpuInstancePlacement placement{};  // memory slices
};

struct ComputeInstanceRecord {  // nvmlComputeInstanceGetInfo_v2
    api::ComputeInstance handle = nullptr;
    unsigned id = 0;  // compute instance id, unique within its GPU instance
    unsigned profile_id = 0;
    api::ComputeInstancePlacement placement{};  // compute slices within the GPU instance
};

// A compute instance profile offered inside one GPU instance.
struct ComputeInstanceProfile {
    unsigned profile_enum = 0;  // NVML_COMPUTE_INSTANCE_PROFILE_* value it was read with
    unsigned id = 0;            // what nvmlGpuInstanceCreateComputeInstance takes
    unsigned slice_count = 0;   // compute slices
    unsigned instance_count = 0;
    unsigned multiprocessor_count = 0;
    std::string name;  // empty when the driver does not give it
};

// A MIG device: what CUDA sees of one compute instance.
struct MigDevice {
    unsigned index = 0;  // for nvmlDeviceGetMigDeviceHandleByIndex
    unsigned gpu_instance_id = 0;
    unsigned compute_instance_id = 0;
    std::string uuid;  // "MIG-...", the value for CUDA_VISIBLE_DEVICES
    std::optional<unsigned long long> memory_bytes;
};

struct ComputeProcess {
    unsigned pid = 0;
    unsigned long long used_memory_bytes = 0;
};

// The MIG calls on one GPU. Handles it returns stay valid while NVML stays initialised and the
// instance exists.
class MigInstancesApi {
  public:
    explicit MigInstancesApi(Device device) : device_(std::move(device)) {}

    const Device& device() const { return device_; }

    // nvmlDeviceGetGpuInstances + nvmlGpuInstanceGetInfo for each.
    std::vector<GpuInstanceRecord> gpu_instances(unsigned profile_id) const;
    // nvmlDeviceCreateGpuInstanceWithPlacement.
    GpuInstanceRecord create_gpu_instance(unsigned profile_id,
                                          api::GpuInstancePlacement placement) const;
    // nvmlGpuInstanceDestroy.
    void destroy_gpu_instance(api::GpuInstance instance) const;

    // nvmlGpuInstanceGetComputeInstanceProfileInfoV (v1 when the driver lacks V), probing the
    // profile enums upwards; shared engines.
    std::vector<ComputeInstanceProfile> compute_instance_profiles(api::GpuInstance instance) const;
    // nvmlGpuInstanceCreateComputeInstance.
    ComputeInstanceRecord create_compute_instance(api::GpuInstance instance,
                                                  unsigned profile_id) const;
    // nvmlGpuInstanceGetComputeInstances + nvmlComputeInstanceGetInfo_v2 for each.
    std::vector<ComputeInstanceRecord> compute_instances(api::GpuInstance instance,
                                                         unsigned profile_id) const;
    // nvmlComputeInstanceDestroy.
    void destroy_compute_instance(api::ComputeInstance instance) const;

    // nvmlDeviceGetMaxMigDeviceCount, then for each index nvmlDeviceGetMigDeviceHandleByIndex,
    // nvmlDeviceGetGpuInstanceId, nvmlDeviceGetComputeInstanceId, nvmlDeviceGetUUID and
    // nvmlDeviceGetMemoryInfo. Empty when MIG is disabled.
    std::vector<MigDevice> mig_devices() const;

    // nvmlDeviceGetComputeRunningProcesses_v3 on the whole GPU (every MIG instance included).
    std::vector<ComputeProcess> compute_processes() const;

  private:
    Device device_;
};

}  // namespace migscope::nvml
