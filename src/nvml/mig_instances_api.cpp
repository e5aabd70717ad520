// NVML MIG instance calls: buffers, versioned structs and return codes turned into typed records
// and CallErrors.
#include "nvml/mig_instances_api.h"

#include <cstring>

#include "nvml/library.h"

namespace migscope::nvml {
namespace {

// Room for every instance one profile allows (at most 8 on any GPU NVML describes today).
constexpr unsigned kMaxInstancesPerProfile = 32;
constexpr const char* kTooOld = "driver too old for MIG management?";

GpuInstanceRecord gpu_instance_record(const Library& lib, api::GpuInstance handle) {
    require_function(lib, lib.get_gpu_instance_info, "nvmlGpuInstanceGetInfo", kTooOld);
    api::GpuInstanceInfo info{};
    if (api::Return rc = lib.get_gpu_instance_info(handle, &info); rc != api::kSuccess)
        throw_call_error(lib, "nvmlGpuInstanceGetInfo", rc);
    return GpuInstanceRecord{handle, info.id, info.profileId, info.placement};
}

ComputeInstanceRecord compute_instance_record(const Library& lib, api::ComputeInstance handle) {
    require_function(lib, lib.get_compute_instance_info, "nvmlComputeInstanceGetInfo_v2", kTooOld);
    api::ComputeInstanceInfo info{};
    if (api::Return rc = lib.get_compute_instance_info(handle, &info); rc != api::kSuccess)
        throw_call_error(lib, "nvmlComputeInstanceGetInfo_v2", rc);
    return ComputeInstanceRecord{handle, info.id, info.profileId, info.placement};
}

}  // namespace

std::vector<GpuInstanceRecord> MigInstancesApi::gpu_instances(unsigned profile_id) const {
    const Library& lib = *device_.library();
    require_function(lib, lib.get_gpu_instances, "nvmlDeviceGetGpuInstances", kTooOld);
    std::vector<api::GpuInstance> handles(kMaxInstancesPerProfile);
    unsigned count = kMaxInstancesPerProfile;
    api::Return rc = lib.get_gpu_instances(device_.handle(), profile_id, handles.data(), &count);
    if (rc != api::kSuccess)
        throw_call_error(lib, "nvmlDeviceGetGpuInstances", rc);
    std::vector<GpuInstanceRecord> records;
    for (unsigned i = 0; i < count && i < handles.size(); ++i)
        records.push_back(gpu_instance_record(lib, handles[i]));
    return records;
}

GpuInstanceRecord MigInstancesApi::create_gpu_instance(unsigned profile_id,
                                                       api::GpuInstancePlacement placement) const {
    const Library& lib = *device_.library();
    require_function(lib, lib.create_gpu_instance, "nvmlDeviceCreateGpuInstanceWithPlacement",
                     kTooOld);
    api::GpuInstance handle = nullptr;
    api::Return rc = lib.create_gpu_instance(device_.handle(), profile_id, &placement, &handle);
    if (rc != api::kSuccess)
        throw_call_error(lib, "nvmlDeviceCreateGpuInstanceWithPlacement", rc);
    return gpu_instance_record(lib, handle);
}

void MigInstancesApi::destroy_gpu_instance(api::GpuInstance instance) const {
    const Library& lib = *device_.library();
    require_function(lib, lib.destroy_gpu_instance, "nvmlGpuInstanceDestroy", kTooOld);
    if (api::Return rc = lib.destroy_gpu_instance(instance); rc != api::kSuccess)
        throw_call_error(lib, "nvmlGpuInstanceDestroy", rc);
}

std::vector<ComputeInstanceProfile> MigInstancesApi::compute_instance_profiles(
    api::GpuInstance instance) const {
    const Library& lib = *device_.library();
    const bool versioned = lib.get_ci_profile_info_v != nullptr;
    const char* call = versioned ? "nvmlGpuInstanceGetComputeInstanceProfileInfoV"
                                 : "nvmlGpuInstanceGetComputeInstanceProfileInfo";
    if (!versioned)
        require_function(lib, lib.get_ci_profile_info, call, kTooOld);
    std::vector<ComputeInstanceProfile> profiles;
    for (unsigned e = 0; e < api::kMaxComputeInstanceProfileEnum; ++e) {
        ComputeInstanceProfile p;
        p.profile_enum = e;
        api::Return rc;
        if (versioned) {
            api::ComputeInstanceProfileInfoV2 info{};
            info.version = api::kComputeInstanceProfileInfoV2Version;
            rc = lib.get_ci_profile_info_v(instance, e, api::kComputeInstanceEngineProfileShared,
                                           &info);
            p.id = info.id;
            p.slice_count = info.sliceCount;
            p.instance_count = info.instanceCount;
            p.multiprocessor_count = info.multiprocessorCount;
            p.name = std::string(info.name, strnlen(info.name, sizeof(info.name)));
        } else {
            api::ComputeInstanceProfileInfo info{};
            rc = lib.get_ci_profile_info(instance, e, api::kComputeInstanceEngineProfileShared,
                                         &info);
            p.id = info.id;
            p.slice_count = info.sliceCount;
            p.instance_count = info.instanceCount;
            p.multiprocessor_count = info.multiprocessorCount;
        }
        if (rc == api::kErrorInvalidArgument)
            break;  // past the last profile enum
        if (rc == api::kErrorNotSupported)
            continue;  // not offered in this GPU instance
        if (rc != api::kSuccess)
            throw_call_error(lib, call, rc);
        profiles.push_back(std::move(p));
    }
    return profiles;
}

ComputeInstanceRecord MigInstancesApi::create_compute_instance(api::GpuInstance instance,
                                                               unsigned profile_id) const {
    const Library& lib = *device_.library();
    require_function(lib, lib.create_compute_instance, "nvmlGpuInstanceCreateComputeInstance",
                     kTooOld);
    api::ComputeInstance handle = nullptr;
    if (api::Return rc = lib.create_compute_instance(instance, profile_id, &handle);
        rc != api::kSuccess) {
        throw_call_error(lib, "nvmlGpuInstanceCreateComputeInstance", rc);
    }
    return compute_instance_record(lib, handle);
}

std::vector<ComputeInstanceRecord> MigInstancesApi::compute_instances(api::GpuInstance instance,
                                                                      unsigned profile_id) const {
    const Library& lib = *device_.library();
    require_function(lib, lib.get_compute_instances, "nvmlGpuInstanceGetComputeInstances", kTooOld);
    std::vector<api::ComputeInstance> handles(kMaxInstancesPerProfile);
    unsigned count = kMaxInstancesPerProfile;
    api::Return rc = lib.get_compute_instances(instance, profile_id, handles.data(), &count);
    if (rc != api::kSuccess)
        throw_call_error(lib, "nvmlGpuInstanceGetComputeInstances", rc);
    std::vector<ComputeInstanceRecord> records;
    for (unsigned i = 0; i < count && i < handles.size(); ++i)
        records.push_back(compute_instance_record(lib, handles[i]));
    return records;
}

void MigInstancesApi::destroy_compute_instance(api::ComputeInstance instance) const {
    const Library& lib = *device_.library();
    require_function(lib, lib.destroy_compute_instance, "nvmlComputeInstanceDestroy", kTooOld);
    if (api::Return rc = lib.destroy_compute_instance(instance); rc != api::kSuccess)
        throw_call_error(lib, "nvmlComputeInstanceDestroy", rc);
}

std::vector<MigDevice> MigInstancesApi::mig_devices() const {
    const Library& lib = *device_.library();
    require_function(lib, lib.get_max_mig_device_count, "nvmlDeviceGetMaxMigDeviceCount", kTooOld);
    require_function(lib, lib.get_mig_device_handle, "nvmlDeviceGetMigDeviceHandleByIndex",
                     kTooOld);
    require_function(lib, lib.get_gpu_instance_id, "nvmlDeviceGetGpuInstanceId", kTooOld);
    require_function(lib, lib.get_compute_instance_id, "nvmlDeviceGetComputeInstanceId", kTooOld);
    require_function(lib, lib.get_uuid, "nvmlDeviceGetUUID", kTooOld);
    unsigned max_count = 0;
    if (api::Return rc = lib.get_max_mig_device_count(device_.handle(), &max_count);
        rc != api::kSuccess) {
        throw_call_error(lib, "nvmlDeviceGetMaxMigDeviceCount", rc);
    }
    std::vector<MigDevice> devices;
    for (unsigned i = 0; i < max_count; ++i) {
        api::Device handle = nullptr;
        api::Return rc = lib.get_mig_device_handle(device_.handle(), i, &handle);
        if (rc == api::kErrorNotFound)
            continue;  // no MIG device at this index
        if (rc != api::kSuccess)
            throw_call_error(lib, "nvmlDeviceGetMigDeviceHandleByIndex", rc);
        MigDevice d;
        d.index = i;
        if (rc = lib.get_gpu_instance_id(handle, &d.gpu_instance_id); rc != api::kSuccess)
            throw_call_error(lib, "nvmlDeviceGetGpuInstanceId", rc);
        if (rc = lib.get_compute_instance_id(handle, &d.compute_instance_id); rc != api::kSuccess)
            throw_call_error(lib, "nvmlDeviceGetComputeInstanceId", rc);
        std::string uuid(api::kDeviceUuidBufferSize, '\0');
        if (rc = lib.get_uuid(handle, uuid.data(), api::kDeviceUuidBufferSize); rc != api::kSuccess)
            throw_call_error(lib, "nvmlDeviceGetUUID", rc);
        d.uuid = uuid.c_str();
        api::Memory memory{};
        if (lib.get_memory != nullptr && lib.get_memory(handle, &memory) == api::kSuccess)
            d.memory_bytes = memory.total;
        devices.push_back(std::move(d));
    }
    return devices;
}

std::vector<ComputeProcess> MigInstancesApi::compute_processes() const {
    const Library& lib = *device_.library();
    const char* call = "nvmlDeviceGetComputeRunningProcesses_v3";
    require_function(lib, lib.get_compute_processes, call, kTooOld);
    std::vector<api::ProcessInfo> infos;
    unsigned count = 0;
    api::Return rc = lib.get_compute_processes(device_.handle(), &count, nullptr);
    // The list can grow between the two calls: retry a few times with room to spare.
    for (int attempt = 0; rc == api::kErrorInsufficientSize && attempt < 4; ++attempt) {
        infos.resize(count + 8);
        count = static_cast<unsigned>(infos.size());
        rc = lib.get_compute_processes(device_.handle(), &count, infos.data());
    }
    if (rc != api::kSuccess)
        throw_call_error(lib, call, rc);
    std::vector<ComputeProcess> processes;
    for (unsigned i = 0; i < count && i < infos.size(); ++i)
        processes.push_back({infos[i].pid, infos[i].usedGpuMemory});
    return processes;
}

}  // namespace migscope::nvml
