// The few CUDA driver entry points migscope-worker calls itself (green contexts, the SM probe),
// fetched from the CUDA runtime LibTorch loaded: libcuda is never linked.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace migscope::workloads {

struct DriverApi {
    PFN_cuGetErrorName_v6000 get_error_name = nullptr;
    PFN_cuDeviceGet_v2000 device_get = nullptr;
    PFN_cuDeviceGetDevResource_v12040 device_get_dev_resource = nullptr;
    PFN_cuDevSmResourceSplitByCount_v12040 sm_resource_split_by_count = nullptr;
    PFN_cuDevResourceGenerateDesc_v12040 dev_resource_generate_desc = nullptr;
    PFN_cuGreenCtxCreate_v12040 green_ctx_create = nullptr;
    PFN_cuGreenCtxGetDevResource_v12040 green_ctx_get_dev_resource = nullptr;
    PFN_cuGreenCtxStreamCreate_v12050 green_ctx_stream_create = nullptr;
    PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
    PFN_cuGreenCtxDestroy_v12040 green_ctx_destroy = nullptr;
    PFN_cuCtxFromGreenCtx_v12040 ctx_from_green_ctx = nullptr;
    PFN_cuCtxPushCurrent_v4000 ctx_push_current = nullptr;
    PFN_cuCtxPopCurrent_v4000 ctx_pop_current = nullptr;
    PFN_cuModuleLoadData_v2000 module_load_data = nullptr;
    PFN_cuModuleGetFunction_v2000 module_get_function = nullptr;
    PFN_cuModuleUnload_v2000 module_unload = nullptr;
    PFN_cuMemAlloc_v3020 mem_alloc = nullptr;
    PFN_cuMemFree_v3020 mem_free = nullptr;
    PFN_cuMemsetD32Async_v3020 memset_d32_async = nullptr;
    PFN_cuMemcpyDtoH_v3020 memcpy_dtoh = nullptr;
    PFN_cuLaunchKernel_v4000 launch_kernel = nullptr;
    PFN_cuStreamSynchronize_v2000 stream_synchronize = nullptr;
};

// Loaded once, on first use. Throws an unavailable error when the runtime is not in the process
// or the driver is older than CUDA 12.5 (the first with cuGreenCtxStreamCreate).
const DriverApi& driver_api();

// Throws a runtime error naming the call and the driver's error name unless `result` is success.
void check_driver(const DriverApi& api, CUresult result, const char* call);

// The driver's name for a result ("CUDA_ERROR_INVALID_VALUE"), or its number.
std::string driver_result_name(const DriverApi& api, CUresult result);

}  // namespace migscope::workloads
