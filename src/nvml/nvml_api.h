// migscope's own declarations of the few NVML types and functions it uses (no nvml.h needed to
// build). Layouts follow NVML API version 13; tests/nvml/nvml_abi_test.cpp checks them against the
// real nvml.h wherever one is installed.
#pragma once

#include <cstdint>

namespace migscope::nvml::api {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
constexpr Return kErrorUninitialized = 1;
constexpr Return kErrorInvalidArgument = 2;
constexpr Return kErrorNotSupported = 3;
constexpr Return kErrorNoPermission = 4;
constexpr Return kErrorNotFound = 6;
constexpr Return kErrorInsufficientSize = 7;
constexpr Return kErrorDriverNotLoaded = 9;
constexpr Return kErrorLibraryNotFound = 12;
constexpr Return kErrorFunctionNotFound = 13;
constexpr Return kErrorGpuIsLost = 15;
constexpr Return kErrorInUse = 19;
constexpr Return kErrorInsufficientResources = 23;
constexpr Return kErrorUnknown = 999;

struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t (a GPU, or a MIG device: one compute instance)
struct GpuInstanceOpaque;
using GpuInstance = GpuInstanceOpaque*;  // nvmlGpuInstance_t
struct ComputeInstanceOpaque;
using ComputeInstance = ComputeInstanceOpaque*;  // nvmlComputeInstance_t

constexpr unsigned kDeviceNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kDeviceUuidBufferSize = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// nvmlClockType_t
constexpr int kClockGraphics = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;

// nvmlTemperatureSensors_t
constexpr int kTemperatureGpu = 0;

// Field ids (NVML_FI_*).
constexpr unsigned kFieldTotalEnergyConsumption = 83;  // mJ
constexpr unsigned kFieldPowerAverage = 185;           // mW, 1 s average (Ampere+ except GA100)
constexpr unsigned kFieldPowerInstant = 186;           // mW

// nvmlValueType_t
constexpr int kValueDouble = 0;
constexpr int kValueUnsignedInt = 1;
constexpr int kValueUnsignedLong = 2;
constexpr int kValueUnsignedLongLong = 3;
constexpr int kValueSignedLongLong = 4;
constexpr int kValueSignedInt = 5;
constexpr int kValueUnsignedShort = 6;

union Value {  // nvmlValue_t
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
};

struct FieldValue {  // nvmlFieldValue_t
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;  // µs since the epoch
    long long latencyUsec;
    int valueType;
    Return nvmlReturn;
    Value value;
};

struct Memory {  // nvmlMemory_t, bytes
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct Utilization {  // nvmlUtilization_t, percent of time over the last sample period
    unsigned int gpu;
    unsigned int memory;
};

struct GpuInstancePlacement {  // nvmlGpuInstancePlacement_t, in memory slices
    unsigned int start;
    unsigned int size;
};

struct GpuInstanceProfileInfo {  // nvmlGpuInstanceProfileInfo_t (v1)
    unsigned int id;
    unsigned int isP2pSupported;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int copyEngineCount;
    unsigned int decoderCount;
    unsigned int encoderCount;
    unsigned int jpegCount;
    unsigned int ofaCount;
    unsigned long long memorySizeMB;
};

struct GpuInstanceProfileInfoV2 {  // nvmlGpuInstanceProfileInfo_v2_t
    unsigned int version;
    unsigned int id;
    unsigned int isP2pSupported;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int copyEngineCount;
    unsigned int decoderCount;
    unsigned int encoderCount;
    unsigned int jpegCount;
    unsigned int ofaCount;
    unsigned long long memorySizeMB;
    char name[kDeviceNameBufferSize];
};
// NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2): sizeof | (2 << 24)
constexpr unsigned kGpuInstanceProfileInfoV2Version =
    static_cast<unsigned>(sizeof(GpuInstanceProfileInfoV2)) | (2u << 24);

// GPU instance profile enums (NVML_GPU_INSTANCE_PROFILE_*) are probed from 0 upwards until NVML
// answers "invalid argument"; this bounds the probe.
constexpr unsigned kMaxGpuInstanceProfileEnum = 64;

// MIG modes
constexpr unsigned kMigDisabled = 0;
constexpr unsigned kMigEnabled = 1;

struct GpuInstanceInfo {  // nvmlGpuInstanceInfo_t
    Device device;        // parent GPU
    unsigned int id;      // GPU instance id, unique within the GPU
    unsigned int profileId;
    GpuInstancePlacement placement;
};

struct ComputeInstancePlacement {  // nvmlComputeInstancePlacement_t, in compute slices of the GI
    unsigned int start;
    unsigned int size;
};

struct ComputeInstanceInfo {  // nvmlComputeInstanceInfo_t (filled by nvmlComputeInstanceGetInfo_v2)
    Device device;            // parent GPU
    GpuInstance gpuInstance;  // parent GPU instance
    unsigned int id;          // compute instance id, unique within its GPU instance
    unsigned int profileId;
    ComputeInstancePlacement placement;
};

struct ComputeInstanceProfileInfo {  // nvmlComputeInstanceProfileInfo_t (v1)
    unsigned int id;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
};

struct ComputeInstanceProfileInfoV2 {  // nvmlComputeInstanceProfileInfo_v2_t
    unsigned int version;
    unsigned int id;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
    char name[kDeviceNameBufferSize];
};
// NVML_STRUCT_VERSION(ComputeInstanceProfileInfo, 2): sizeof | (2 << 24)
constexpr unsigned kComputeInstanceProfileInfoV2Version =
    static_cast<unsigned>(sizeof(ComputeInstanceProfileInfoV2)) | (2u << 24);

// Compute instance profile enums (NVML_COMPUTE_INSTANCE_PROFILE_*), probed from 0 upwards until
// NVML answers "invalid argument" (the count grows between driver versions); this bounds the probe.
constexpr unsigned kMaxComputeInstanceProfileEnum = 32;
// NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED: all engines but the SMs shared within the GI.
constexpr unsigned kComputeInstanceEngineProfileShared = 0;

struct ProcessInfo {  // nvmlProcessInfo_t (= nvmlProcessInfo_v2_t, for ..._v3 process queries)
    unsigned int pid;
    unsigned long long usedGpuMemory;  // bytes
    unsigned int gpuInstanceId;        // 0xFFFFFFFF when MIG is off
    unsigned int computeInstanceId;    // 0xFFFFFFFF when MIG is off
};

struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t, percent over the sample
    unsigned int pid;
    unsigned long long timeStamp;  // CPU time in µs
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
};

// GPU performance monitoring (GPM, Hopper and later): samples taken at two times give metrics
// over the interval between them.
struct GpmSampleOpaque;
using GpmSample = GpmSampleOpaque*;            // nvmlGpmSample_t
constexpr unsigned kGpmMetricSmUtil = 2;       // NVML_GPM_METRIC_SM_UTIL: % of SMs busy, 0-100
constexpr unsigned kGpmMetricMax = 210;        // NVML_GPM_METRIC_MAX (sizes nvmlGpmMetricsGet_t)
constexpr unsigned kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION
constexpr unsigned kGpmSupportVersion = 1;     // NVML_GPM_SUPPORT_VERSION

struct GpmMetric {  // nvmlGpmMetric_t
    unsigned int metricId;
    Return nvmlReturn;
    double value;
    struct {
        char* shortName;
        char* longName;
        char* unit;
    } metricInfo;
};

struct GpmMetricsGet {  // nvmlGpmMetricsGet_t
    unsigned int version;
    unsigned int numMetrics;
    GpmSample sample1;
    GpmSample sample2;
    GpmMetric metrics[kGpmMetricMax];
};

struct GpmSupport {  // nvmlGpmSupport_t
    unsigned int version;
    unsigned int isSupportedDevice;
};

// Clock event ("throttle") reason bits.
constexpr unsigned long long kClocksEventGpuIdle = 0x1;
constexpr unsigned long long kClocksEventApplicationsClocksSetting = 0x2;
constexpr unsigned long long kClocksEventSwPowerCap = 0x4;
constexpr unsigned long long kClocksEventHwSlowdown = 0x8;
constexpr unsigned long long kClocksEventSyncBoost = 0x10;
constexpr unsigned long long kClocksEventSwThermalSlowdown = 0x20;
constexpr unsigned long long kClocksEventHwThermalSlowdown = 0x40;
constexpr unsigned long long kClocksEventHwPowerBrakeSlowdown = 0x80;
constexpr unsigned long long kClocksEventDisplayClockSetting = 0x100;

// Function types, one per NVML entry point migscope resolves with dlsym.
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);
using SystemGetCudaDriverVersionFn = Return (*)(int*);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetNameFn = Return (*)(Device, char*, unsigned int);
using DeviceGetUuidFn = Return (*)(Device, char*, unsigned int);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
using DeviceGetUintFn = Return (*)(Device, unsigned int*);  // power limit, power usage
using DeviceGetTotalEnergyConsumptionFn = Return (*)(Device, unsigned long long*);
using DeviceGetFieldValuesFn = Return (*)(Device, int, FieldValue*);
using DeviceGetClockInfoFn = Return (*)(Device, int, unsigned int*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetTemperatureFn = Return (*)(Device, int, unsigned int*);
using DeviceGetClocksEventReasonsFn = Return (*)(Device, unsigned long long*);
using DeviceGetGpuInstanceProfileInfoFn = Return (*)(Device, unsigned int, GpuInstanceProfileInfo*);
using DeviceGetGpuInstanceProfileInfoVFn = Return (*)(Device, unsigned int,
                                                      GpuInstanceProfileInfoV2*);
using DeviceGetGpuInstancePossiblePlacementsFn = Return (*)(Device, unsigned int,
                                                            GpuInstancePlacement*, unsigned int*);
// MIG instance management and MIG device handles. DeviceGetUintFn also serves
// nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetGpuInstanceId and nvmlDeviceGetComputeInstanceId;
// DeviceGetUuidFn serves nvmlDeviceGetUUID on a MIG device handle.
using DeviceGetGpuInstancesFn = Return (*)(Device, unsigned int, GpuInstance*, unsigned int*);
using DeviceCreateGpuInstanceWithPlacementFn = Return (*)(Device, unsigned int,
                                                          const GpuInstancePlacement*,
                                                          GpuInstance*);
using GpuInstanceDestroyFn = Return (*)(GpuInstance);
using GpuInstanceGetInfoFn = Return (*)(GpuInstance, GpuInstanceInfo*);
using GpuInstanceGetComputeInstanceProfileInfoFn = Return (*)(GpuInstance, unsigned int,
                                                              unsigned int,
                                                              ComputeInstanceProfileInfo*);
using GpuInstanceGetComputeInstanceProfileInfoVFn = Return (*)(GpuInstance, unsigned int,
                                                               unsigned int,
                                                               ComputeInstanceProfileInfoV2*);
using GpuInstanceCreateComputeInstanceFn = Return (*)(GpuInstance, unsigned int, ComputeInstance*);
using GpuInstanceGetComputeInstancesFn = Return (*)(GpuInstance, unsigned int, ComputeInstance*,
                                                    unsigned int*);
using ComputeInstanceDestroyFn = Return (*)(ComputeInstance);
using ComputeInstanceGetInfoFn = Return (*)(ComputeInstance, ComputeInstanceInfo*);
using DeviceGetMigDeviceHandleByIndexFn = Return (*)(Device, unsigned int, Device*);
using DeviceGetComputeRunningProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);
using DeviceGetProcessUtilizationFn = Return (*)(Device, ProcessUtilizationSample*, unsigned int*,
                                                 unsigned long long);
using GpmSampleAllocFn = Return (*)(GpmSample*);
using GpmSampleFreeFn = Return (*)(GpmSample);
using GpmMigSampleGetFn = Return (*)(Device, unsigned int, GpmSample);
using GpmMetricsGetFn = Return (*)(GpmMetricsGet*);
using GpmQueryDeviceSupportFn = Return (*)(Device, GpmSupport*);

}  // namespace migscope::nvml::api
