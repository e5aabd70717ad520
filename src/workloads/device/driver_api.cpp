// Driver entry points through cudaGetDriverEntryPointByVersion of the runtime already loaded.
#include "workloads/device/driver_api.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "core/error.h"

namespace migscope::workloads {
namespace {

// Every entry point is asked for with the ABI of CUDA 12.5, the first release with
// cuGreenCtxStreamCreate; the driver must be at least that new.
constexpr unsigned int kDriverAbiVersion = 12050;

// The runtime is already in the process (LibTorch links it): look its entry-point function up
// there instead of linking a second copy, and never link libcuda, so that the worker still starts
// on machines without a driver.
DriverApi load_driver_api() {
    using GetEntryPoint = decltype(&::cudaGetDriverEntryPointByVersion);
    auto* get_entry_point =
        reinterpret_cast<GetEntryPoint>(dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion"));
    if (get_entry_point == nullptr) {
        throw unavailable_error(
            "CUDA driver: cudaGetDriverEntryPointByVersion not found (CUDA runtime < 12.5 or "
            "not loaded)");
    }
    const auto load = [&](const char* symbol, auto& fn) {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
        const cudaError_t err =
            get_entry_point(symbol, &p, kDriverAbiVersion, cudaEnableDefault, &status);
        if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
            throw unavailable_error(std::string("CUDA driver: entry point ") + symbol +
                                    " unavailable (" +
                                    (status == cudaDriverEntryPointVersionNotSufficent
                                         ? std::string("driver older than CUDA 12.5")
                                         : "cudaError " + std::to_string(static_cast<int>(err))) +
                                    ")");
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    DriverApi api;
    load("cuGetErrorName", api.get_error_name);
    load("cuDeviceGet", api.device_get);
    load("cuDeviceGetDevResource", api.device_get_dev_resource);
    load("cuDevSmResourceSplitByCount", api.sm_resource_split_by_count);
    load("cuDevResourceGenerateDesc", api.dev_resource_generate_desc);
    load("cuGreenCtxCreate", api.green_ctx_create);
    load("cuGreenCtxGetDevResource", api.green_ctx_get_dev_resource);
    load("cuGreenCtxStreamCreate", api.green_ctx_stream_create);
    load("cuStreamDestroy", api.stream_destroy);
    load("cuGreenCtxDestroy", api.green_ctx_destroy);
    load("cuCtxFromGreenCtx", api.ctx_from_green_ctx);
    load("cuCtxPushCurrent", api.ctx_push_current);
    load("cuCtxPopCurrent", api.ctx_pop_current);
    load("cuModuleLoadData", api.module_load_data);
    load("cuModuleGetFunction", api.module_get_function);
    load("cuModuleUnload", api.module_unload);
    load("cuMemAlloc", api.mem_alloc);
    load("cuMemFree", api.mem_free);
    load("cuMemsetD32Async", api.memset_d32_async);
    load("cuMemcpyDtoH", api.memcpy_dtoh);
    load("cuLaunchKernel", api.launch_kernel);
    load("cuStreamSynchronize", api.stream_synchronize);
    return api;
}

}  // namespace

const DriverApi& driver_api() {
    static const DriverApi api = load_driver_api();  // thread-safe, once
    return api;
}

std::string driver_result_name(const DriverApi& api, CUresult result) {
    const char* name = nullptr;
    if (api.get_error_name != nullptr && api.get_error_name(result, &name) == CUDA_SUCCESS && name)
        return name;
    return "CUresult " + std::to_string(static_cast<int>(result));
}

void check_driver(const DriverApi& api, CUresult result, const char* call) {
    if (result != CUDA_SUCCESS)
        throw runtime_error(std::string(call) + " failed: " + driver_result_name(api, result));
}

}  // namespace migscope::workloads
