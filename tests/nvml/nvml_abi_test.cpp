// Checks migscope's own NVML declarations (src/nvml/nvml_api.h) against NVIDIA's nvml.h: struct
// layouts, constants and the shape of every entry point migscope resolves with dlsym.
#include <gtest/gtest.h>
#include <nvml.h>

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "nvml/nvml_api.h"

namespace api = migscope::nvml::api;

namespace {

template <typename T>
concept Complete = requires {
    sizeof(T);
};

// Two parameter types are ABI-compatible when they are both pointers (to objects of equal size,
// where both pointees are complete) or both scalars of equal size.
template <typename A, typename B>
constexpr bool same_param() {
    if constexpr (std::is_pointer_v<A> && std::is_pointer_v<B>) {
        using PA = std::remove_cv_t<std::remove_pointer_t<A>>;
        using PB = std::remove_cv_t<std::remove_pointer_t<B>>;
        if constexpr (Complete<PA> && Complete<PB> && !std::is_void_v<PA> && !std::is_void_v<PB>) {
            return sizeof(PA) == sizeof(PB);
        } else {
            return true;
        }
    } else if constexpr (std::is_pointer_v<A> != std::is_pointer_v<B>) {
        return false;
    } else {
        return sizeof(A) == sizeof(B) && std::is_scalar_v<A> && std::is_scalar_v<B>;
    }
}

template <typename F>
struct Signature;
template <typename R, typename... Args>
struct Signature<R (*)(Args...)> {
    using Return = R;
    using Params = std::tuple<Args...>;
};

template <typename F, typename G, size_t... I>
constexpr bool same_params(std::index_sequence<I...>) {
    return (same_param<std::tuple_element_t<I, typename Signature<F>::Params>,
                       std::tuple_element_t<I, typename Signature<G>::Params>>() &&
            ...);
}

template <typename Real, typename Ours>
constexpr bool same_abi() {
    constexpr size_t n = std::tuple_size_v<typename Signature<Real>::Params>;
    if constexpr (n != std::tuple_size_v<typename Signature<Ours>::Params>) {
        return false;
    } else {
        return same_param<typename Signature<Real>::Return, typename Signature<Ours>::Return>() &&
               same_params<Real, Ours>(std::make_index_sequence<n>{});
    }
}

#define EXPECT_SAME_ABI(function, ours) \
    EXPECT_TRUE((same_abi<decltype(&::function), api::ours>())) << #function

}  // namespace

TEST(NvmlAbi, EntryPointsMatch) {
    EXPECT_SAME_ABI(nvmlInit_v2, InitFn);
    EXPECT_SAME_ABI(nvmlShutdown, ShutdownFn);
    EXPECT_SAME_ABI(nvmlErrorString, ErrorStringFn);
    EXPECT_SAME_ABI(nvmlSystemGetDriverVersion, SystemGetDriverVersionFn);
    EXPECT_SAME_ABI(nvmlSystemGetCudaDriverVersion, SystemGetCudaDriverVersionFn);
    EXPECT_SAME_ABI(nvmlDeviceGetCount_v2, DeviceGetCountFn);
    EXPECT_SAME_ABI(nvmlDeviceGetHandleByIndex_v2, DeviceGetHandleByIndexFn);
    EXPECT_SAME_ABI(nvmlDeviceGetName, DeviceGetNameFn);
    EXPECT_SAME_ABI(nvmlDeviceGetUUID, DeviceGetUuidFn);
    EXPECT_SAME_ABI(nvmlDeviceGetMemoryInfo, DeviceGetMemoryInfoFn);
    EXPECT_SAME_ABI(nvmlDeviceGetMigMode, DeviceGetMigModeFn);
    EXPECT_SAME_ABI(nvmlDeviceGetEnforcedPowerLimit, DeviceGetUintFn);
    EXPECT_SAME_ABI(nvmlDeviceGetPowerUsage, DeviceGetUintFn);
    EXPECT_SAME_ABI(nvmlDeviceGetTotalEnergyConsumption, DeviceGetTotalEnergyConsumptionFn);
    EXPECT_SAME_ABI(nvmlDeviceGetFieldValues, DeviceGetFieldValuesFn);
    EXPECT_SAME_ABI(nvmlDeviceGetClockInfo, DeviceGetClockInfoFn);
    EXPECT_SAME_ABI(nvmlDeviceGetUtilizationRates, DeviceGetUtilizationRatesFn);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_SAME_ABI(nvmlDeviceGetTemperature, DeviceGetTemperatureFn);
#pragma GCC diagnostic pop
    EXPECT_SAME_ABI(nvmlDeviceGetCurrentClocksEventReasons, DeviceGetClocksEventReasonsFn);
    EXPECT_SAME_ABI(nvmlDeviceGetGpuInstanceProfileInfo, DeviceGetGpuInstanceProfileInfoFn);
    EXPECT_SAME_ABI(nvmlDeviceGetGpuInstanceProfileInfoV, DeviceGetGpuInstanceProfileInfoVFn);
    EXPECT_SAME_ABI(nvmlDeviceGetGpuInstancePossiblePlacements_v2,
                    DeviceGetGpuInstancePossiblePlacementsFn);
}

TEST(NvmlAbi, MigEntryPointsMatch) {
    EXPECT_SAME_ABI(nvmlDeviceGetGpuInstances, DeviceGetGpuInstancesFn);
    EXPECT_SAME_ABI(nvmlDeviceCreateGpuInstanceWithPlacement,
                    DeviceCreateGpuInstanceWithPlacementFn);
    EXPECT_SAME_ABI(nvmlGpuInstanceDestroy, GpuInstanceDestroyFn);
    EXPECT_SAME_ABI(nvmlGpuInstanceGetInfo, GpuInstanceGetInfoFn);
    EXPECT_SAME_ABI(nvmlGpuInstanceGetComputeInstanceProfileInfo,
                    GpuInstanceGetComputeInstanceProfileInfoFn);
    EXPECT_SAME_ABI(nvmlGpuInstanceGetComputeInstanceProfileInfoV,
                    GpuInstanceGetComputeInstanceProfileInfoVFn);
    EXPECT_SAME_ABI(nvmlGpuInstanceCreateComputeInstance, GpuInstanceCreateComputeInstanceFn);
    EXPECT_SAME_ABI(nvmlGpuInstanceGetComputeInstances, GpuInstanceGetComputeInstancesFn);
    EXPECT_SAME_ABI(nvmlComputeInstanceDestroy, ComputeInstanceDestroyFn);
    EXPECT_SAME_ABI(nvmlComputeInstanceGetInfo_v2, ComputeInstanceGetInfoFn);
    EXPECT_SAME_ABI(nvmlDeviceGetMaxMigDeviceCount, DeviceGetUintFn);
    EXPECT_SAME_ABI(nvmlDeviceGetMigDeviceHandleByIndex, DeviceGetMigDeviceHandleByIndexFn);
    EXPECT_SAME_ABI(nvmlDeviceGetGpuInstanceId, DeviceGetUintFn);
    EXPECT_SAME_ABI(nvmlDeviceGetComputeInstanceId, DeviceGetUintFn);
    EXPECT_SAME_ABI(nvmlDeviceGetComputeRunningProcesses_v3, DeviceGetComputeRunningProcessesFn);
    // The handle types are pointers, so pointer-to-handle parameters compare by pointee size.
    EXPECT_EQ(sizeof(nvmlGpuInstance_t), sizeof(api::GpuInstance));
    EXPECT_EQ(sizeof(nvmlComputeInstance_t), sizeof(api::ComputeInstance));
    EXPECT_TRUE((std::is_pointer_v<nvmlGpuInstance_t> && std::is_pointer_v<api::GpuInstance>));
    EXPECT_TRUE(
        (std::is_pointer_v<nvmlComputeInstance_t> && std::is_pointer_v<api::ComputeInstance>));
}

#define EXPECT_SAME_FIELD(real, ours, field) \
    EXPECT_EQ(offsetof(real, field), offsetof(api::ours, field)) << #real "." #field

TEST(NvmlAbi, StructLayoutsMatch) {
    EXPECT_EQ(sizeof(nvmlFieldValue_t), sizeof(api::FieldValue));
    EXPECT_SAME_FIELD(nvmlFieldValue_t, FieldValue, fieldId);
    EXPECT_SAME_FIELD(nvmlFieldValue_t, FieldValue, scopeId);
    EXPECT_SAME_FIELD(nvmlFieldValue_t, FieldValue, timestamp);
    EXPECT_SAME_FIELD(nvmlFieldValue_t, FieldValue, valueType);
    EXPECT_SAME_FIELD(nvmlFieldValue_t, FieldValue, nvmlReturn);
    EXPECT_SAME_FIELD(nvmlFieldValue_t, FieldValue, value);
    EXPECT_EQ(sizeof(nvmlValue_t), sizeof(api::Value));

    EXPECT_EQ(sizeof(nvmlMemory_t), sizeof(api::Memory));
    EXPECT_SAME_FIELD(nvmlMemory_t, Memory, used);
    EXPECT_EQ(sizeof(nvmlUtilization_t), sizeof(api::Utilization));
    EXPECT_SAME_FIELD(nvmlUtilization_t, Utilization, memory);
    EXPECT_EQ(sizeof(nvmlGpuInstancePlacement_t), sizeof(api::GpuInstancePlacement));
    EXPECT_SAME_FIELD(nvmlGpuInstancePlacement_t, GpuInstancePlacement, size);

    EXPECT_EQ(sizeof(nvmlGpuInstanceProfileInfo_t), sizeof(api::GpuInstanceProfileInfo));
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_t, GpuInstanceProfileInfo, sliceCount);
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_t, GpuInstanceProfileInfo, instanceCount);
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_t, GpuInstanceProfileInfo, multiprocessorCount);
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_t, GpuInstanceProfileInfo, memorySizeMB);

    EXPECT_EQ(sizeof(nvmlGpuInstanceProfileInfo_v2_t), sizeof(api::GpuInstanceProfileInfoV2));
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_v2_t, GpuInstanceProfileInfoV2, id);
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_v2_t, GpuInstanceProfileInfoV2, memorySizeMB);
    EXPECT_SAME_FIELD(nvmlGpuInstanceProfileInfo_v2_t, GpuInstanceProfileInfoV2, name);
    EXPECT_EQ(static_cast<unsigned>(nvmlGpuInstanceProfileInfo_v2),
              api::kGpuInstanceProfileInfoV2Version);
}

TEST(NvmlAbi, MigStructLayoutsMatch) {
    EXPECT_EQ(sizeof(nvmlGpuInstanceInfo_t), sizeof(api::GpuInstanceInfo));
    EXPECT_SAME_FIELD(nvmlGpuInstanceInfo_t, GpuInstanceInfo, device);
    EXPECT_SAME_FIELD(nvmlGpuInstanceInfo_t, GpuInstanceInfo, id);
    EXPECT_SAME_FIELD(nvmlGpuInstanceInfo_t, GpuInstanceInfo, profileId);
    EXPECT_SAME_FIELD(nvmlGpuInstanceInfo_t, GpuInstanceInfo, placement);

    EXPECT_EQ(sizeof(nvmlComputeInstancePlacement_t), sizeof(api::ComputeInstancePlacement));
    EXPECT_SAME_FIELD(nvmlComputeInstancePlacement_t, ComputeInstancePlacement, start);
    EXPECT_SAME_FIELD(nvmlComputeInstancePlacement_t, ComputeInstancePlacement, size);

    EXPECT_EQ(sizeof(nvmlComputeInstanceInfo_t), sizeof(api::ComputeInstanceInfo));
    EXPECT_SAME_FIELD(nvmlComputeInstanceInfo_t, ComputeInstanceInfo, device);
    EXPECT_SAME_FIELD(nvmlComputeInstanceInfo_t, ComputeInstanceInfo, gpuInstance);
    EXPECT_SAME_FIELD(nvmlComputeInstanceInfo_t, ComputeInstanceInfo, id);
    EXPECT_SAME_FIELD(nvmlComputeInstanceInfo_t, ComputeInstanceInfo, profileId);
    EXPECT_SAME_FIELD(nvmlComputeInstanceInfo_t, ComputeInstanceInfo, placement);

    EXPECT_EQ(sizeof(nvmlComputeInstanceProfileInfo_t), sizeof(api::ComputeInstanceProfileInfo));
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_t, ComputeInstanceProfileInfo, id);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_t, ComputeInstanceProfileInfo, sliceCount);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_t, ComputeInstanceProfileInfo, instanceCount);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_t, ComputeInstanceProfileInfo,
                      multiprocessorCount);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_t, ComputeInstanceProfileInfo, sharedOfaCount);

    EXPECT_EQ(sizeof(nvmlComputeInstanceProfileInfo_v2_t),
              sizeof(api::ComputeInstanceProfileInfoV2));
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_v2_t, ComputeInstanceProfileInfoV2, version);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_v2_t, ComputeInstanceProfileInfoV2, id);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_v2_t, ComputeInstanceProfileInfoV2,
                      sliceCount);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_v2_t, ComputeInstanceProfileInfoV2,
                      multiprocessorCount);
    EXPECT_SAME_FIELD(nvmlComputeInstanceProfileInfo_v2_t, ComputeInstanceProfileInfoV2, name);
    EXPECT_EQ(static_cast<unsigned>(nvmlComputeInstanceProfileInfo_v2),
              api::kComputeInstanceProfileInfoV2Version);

    // nvmlDeviceGetComputeRunningProcesses_v3 fills nvmlProcessInfo_t, which is the v2 struct.
    EXPECT_TRUE((std::is_same_v<nvmlProcessInfo_t, nvmlProcessInfo_v2_t>));
    EXPECT_EQ(sizeof(nvmlProcessInfo_t), sizeof(api::ProcessInfo));
    EXPECT_SAME_FIELD(nvmlProcessInfo_t, ProcessInfo, pid);
    EXPECT_SAME_FIELD(nvmlProcessInfo_t, ProcessInfo, usedGpuMemory);
    EXPECT_SAME_FIELD(nvmlProcessInfo_t, ProcessInfo, gpuInstanceId);
    EXPECT_SAME_FIELD(nvmlProcessInfo_t, ProcessInfo, computeInstanceId);
}

TEST(NvmlAbi, ConstantsMatch) {
    EXPECT_EQ(NVML_SUCCESS, api::kSuccess);
    EXPECT_EQ(NVML_ERROR_UNINITIALIZED, api::kErrorUninitialized);
    EXPECT_EQ(NVML_ERROR_INVALID_ARGUMENT, api::kErrorInvalidArgument);
    EXPECT_EQ(NVML_ERROR_NOT_SUPPORTED, api::kErrorNotSupported);
    EXPECT_EQ(NVML_ERROR_NO_PERMISSION, api::kErrorNoPermission);
    EXPECT_EQ(NVML_ERROR_NOT_FOUND, api::kErrorNotFound);
    EXPECT_EQ(NVML_ERROR_INSUFFICIENT_SIZE, api::kErrorInsufficientSize);
    EXPECT_EQ(NVML_ERROR_DRIVER_NOT_LOADED, api::kErrorDriverNotLoaded);
    EXPECT_EQ(NVML_ERROR_LIBRARY_NOT_FOUND, api::kErrorLibraryNotFound);
    EXPECT_EQ(NVML_ERROR_FUNCTION_NOT_FOUND, api::kErrorFunctionNotFound);
    EXPECT_EQ(NVML_ERROR_GPU_IS_LOST, api::kErrorGpuIsLost);
    EXPECT_EQ(NVML_ERROR_UNKNOWN, api::kErrorUnknown);
    EXPECT_EQ(NVML_DEVICE_NAME_V2_BUFFER_SIZE, api::kDeviceNameBufferSize);
    EXPECT_EQ(NVML_DEVICE_UUID_V2_BUFFER_SIZE, api::kDeviceUuidBufferSize);
    EXPECT_EQ(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, api::kDriverVersionBufferSize);
    EXPECT_EQ(NVML_CLOCK_GRAPHICS, api::kClockGraphics);
    EXPECT_EQ(NVML_CLOCK_SM, api::kClockSm);
    EXPECT_EQ(NVML_CLOCK_MEM, api::kClockMem);
    EXPECT_EQ(NVML_TEMPERATURE_GPU, api::kTemperatureGpu);
    EXPECT_EQ(NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION,
              static_cast<int>(api::kFieldTotalEnergyConsumption));
    EXPECT_EQ(NVML_FI_DEV_POWER_AVERAGE, static_cast<int>(api::kFieldPowerAverage));
    EXPECT_EQ(NVML_FI_DEV_POWER_INSTANT, static_cast<int>(api::kFieldPowerInstant));
    EXPECT_EQ(NVML_VALUE_TYPE_DOUBLE, api::kValueDouble);
    EXPECT_EQ(NVML_VALUE_TYPE_UNSIGNED_INT, api::kValueUnsignedInt);
    EXPECT_EQ(NVML_VALUE_TYPE_UNSIGNED_LONG, api::kValueUnsignedLong);
    EXPECT_EQ(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG, api::kValueUnsignedLongLong);
    EXPECT_EQ(NVML_VALUE_TYPE_SIGNED_LONG_LONG, api::kValueSignedLongLong);
    EXPECT_EQ(NVML_VALUE_TYPE_SIGNED_INT, api::kValueSignedInt);
    EXPECT_EQ(NVML_VALUE_TYPE_UNSIGNED_SHORT, api::kValueUnsignedShort);
    EXPECT_EQ(NVML_DEVICE_MIG_DISABLE, static_cast<int>(api::kMigDisabled));
    EXPECT_EQ(NVML_DEVICE_MIG_ENABLE, static_cast<int>(api::kMigEnabled));
    EXPECT_EQ(nvmlClocksEventReasonGpuIdle, static_cast<long long>(api::kClocksEventGpuIdle));
    EXPECT_EQ(nvmlClocksEventReasonApplicationsClocksSetting,
              static_cast<long long>(api::kClocksEventApplicationsClocksSetting));
    EXPECT_EQ(nvmlClocksEventReasonSwPowerCap, static_cast<long long>(api::kClocksEventSwPowerCap));
    EXPECT_EQ(nvmlClocksThrottleReasonHwSlowdown,
              static_cast<long long>(api::kClocksEventHwSlowdown));
    EXPECT_EQ(nvmlClocksEventReasonSyncBoost, static_cast<long long>(api::kClocksEventSyncBoost));
    EXPECT_EQ(nvmlClocksEventReasonSwThermalSlowdown,
              static_cast<long long>(api::kClocksEventSwThermalSlowdown));
    EXPECT_EQ(nvmlClocksThrottleReasonHwThermalSlowdown,
              static_cast<long long>(api::kClocksEventHwThermalSlowdown));
    EXPECT_EQ(nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
              static_cast<long long>(api::kClocksEventHwPowerBrakeSlowdown));
    EXPECT_EQ(nvmlClocksEventReasonDisplayClockSetting,
              static_cast<long long>(api::kClocksEventDisplayClockSetting));
    EXPECT_LT(static_cast<unsigned>(NVML_GPU_INSTANCE_PROFILE_COUNT),
              api::kMaxGpuInstanceProfileEnum);
    EXPECT_EQ(NVML_ERROR_IN_USE, api::kErrorInUse);
    EXPECT_EQ(NVML_ERROR_INSUFFICIENT_RESOURCES, api::kErrorInsufficientResources);
    EXPECT_LT(static_cast<unsigned>(NVML_COMPUTE_INSTANCE_PROFILE_COUNT),
              api::kMaxComputeInstanceProfileEnum);
    EXPECT_EQ(static_cast<unsigned>(NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED),
              api::kComputeInstanceEngineProfileShared);
}

TEST(NvmlAbi, ActivityEntryPointsAndStructsMatch) {
    EXPECT_SAME_ABI(nvmlDeviceGetProcessUtilization, DeviceGetProcessUtilizationFn);
    EXPECT_SAME_ABI(nvmlGpmSampleAlloc, GpmSampleAllocFn);
    EXPECT_SAME_ABI(nvmlGpmSampleFree, GpmSampleFreeFn);
    EXPECT_SAME_ABI(nvmlGpmMigSampleGet, GpmMigSampleGetFn);
    EXPECT_SAME_ABI(nvmlGpmMetricsGet, GpmMetricsGetFn);
    EXPECT_SAME_ABI(nvmlGpmQueryDeviceSupport, GpmQueryDeviceSupportFn);
    EXPECT_EQ(sizeof(nvmlProcessUtilizationSample_t), sizeof(api::ProcessUtilizationSample));
    EXPECT_SAME_FIELD(nvmlProcessUtilizationSample_t, ProcessUtilizationSample, timeStamp);
    EXPECT_SAME_FIELD(nvmlProcessUtilizationSample_t, ProcessUtilizationSample, smUtil);
    EXPECT_SAME_FIELD(nvmlProcessUtilizationSample_t, ProcessUtilizationSample, decUtil);
    EXPECT_EQ(sizeof(nvmlGpmMetric_t), sizeof(api::GpmMetric));
    EXPECT_SAME_FIELD(nvmlGpmMetric_t, GpmMetric, value);
    EXPECT_SAME_FIELD(nvmlGpmMetric_t, GpmMetric, metricInfo);
    EXPECT_EQ(sizeof(nvmlGpmMetricsGet_t), sizeof(api::GpmMetricsGet));
    EXPECT_SAME_FIELD(nvmlGpmMetricsGet_t, GpmMetricsGet, sample2);
    EXPECT_SAME_FIELD(nvmlGpmMetricsGet_t, GpmMetricsGet, metrics);
    EXPECT_EQ(sizeof(nvmlGpmSupport_t), sizeof(api::GpmSupport));
    EXPECT_EQ(static_cast<unsigned>(NVML_GPM_METRIC_SM_UTIL), api::kGpmMetricSmUtil);
    EXPECT_EQ(static_cast<unsigned>(NVML_GPM_METRIC_MAX), api::kGpmMetricMax);
    EXPECT_EQ(static_cast<unsigned>(NVML_GPM_METRICS_GET_VERSION), api::kGpmMetricsGetVersion);
    EXPECT_EQ(static_cast<unsigned>(NVML_GPM_SUPPORT_VERSION), api::kGpmSupportVersion);
}
