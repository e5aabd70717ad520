// Green contexts through driver entry points fetched from the CUDA runtime LibTorch loaded, and
// the chained SM split.
#include "workloads/green_context.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.h"

namespace migscope::workloads {
namespace {

// Every entry point is asked for with the ABI of CUDA 12.5, the first release with
// cuGreenCtxStreamCreate; the driver must be at least that new.
constexpr unsigned int kDriverAbiVersion = 12050;

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
};

// The runtime is already in the process (LibTorch links it): look its entry-point function up
// there instead of linking a second copy, and never link libcuda, so that the worker still starts
// on machines without a driver.
DriverApi load_driver_api() {
    using GetEntryPoint = decltype(&::cudaGetDriverEntryPointByVersion);
    auto* get_entry_point =
        reinterpret_cast<GetEntryPoint>(dlsym(RTLD_DEFAULT, "cudaGetDriverEntryPointByVersion"));
    if (get_entry_point == nullptr) {
        throw unavailable_error(
            "green contexts: cudaGetDriverEntryPointByVersion not found (CUDA runtime < 12.5 or "
            "not loaded)");
    }
    const auto load = [&](const char* symbol, auto& fn) {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
        const cudaError_t err =
            get_entry_point(symbol, &p, kDriverAbiVersion, cudaEnableDefault, &status);
        if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
            throw unavailable_error(std::string("green contexts: driver entry point ") + symbol +
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
    return api;
}

const DriverApi& driver_api() {
    static const DriverApi api = load_driver_api();  // thread-safe, once
    return api;
}

std::string result_name(const DriverApi& api, CUresult r) {
    const char* name = nullptr;
    if (api.get_error_name != nullptr && api.get_error_name(r, &name) == CUDA_SUCCESS && name)
        return name;
    return "CUresult " + std::to_string(static_cast<int>(r));
}

void check(const DriverApi& api, CUresult r, const char* call) {
    if (r != CUDA_SUCCESS)
        throw runtime_error(std::string(call) + " failed: " + result_name(api, r));
}

SmGranularity granularity_of(const CUdevResource& resource) {
    const int min_sms = static_cast<int>(resource.sm.minSmPartitionSize);
    const int alignment = static_cast<int>(resource.sm.smCoscheduledAlignment);
    return {std::max(1, min_sms), std::max({1, min_sms, alignment})};
}

std::string fit_message(const std::vector<int>& requested, int device_sms, SmGranularity g) {
    return "SM requests " + join_sm_counts(requested) + " do not fit the device's " +
           std::to_string(device_sms) + " SMs (each group is rounded up to a multiple of " +
           std::to_string(g.step_sms) + " SMs, at least " + std::to_string(g.min_sms) +
           ", and split off what the groups before it left)";
}

CUgreenCtx create_green_context(const DriverApi& api, CUdevice device, CUdevResource resource) {
    CUdevResourceDesc desc = nullptr;
    check(api, api.dev_resource_generate_desc(&desc, &resource, 1), "cuDevResourceGenerateDesc");
    CUgreenCtx ctx = nullptr;
    check(api, api.green_ctx_create(&ctx, desc, device, CU_GREEN_CTX_DEFAULT_STREAM),
          "cuGreenCtxCreate");
    return ctx;
}

}  // namespace

int rounded_sm_count(int requested_sms, SmGranularity granularity) {
    const int step = std::max(1, granularity.step_sms);
    const auto round_up = [step](int n) { return (n + step - 1) / step * step; };
    return std::max(round_up(std::max(1, requested_sms)), round_up(granularity.min_sms));
}

std::vector<int> planned_sm_counts(const std::vector<int>& requested_sms, int device_sms,
                                   SmGranularity granularity) {
    if (requested_sms.empty())
        throw input_error("no SM requests");
    std::vector<int> granted;
    int available = device_sms;
    for (int r : requested_sms) {
        if (r <= 0)
            throw input_error("SM request " + std::to_string(r) + " is not positive");
        const int rounded = rounded_sm_count(r, granularity);
        if (rounded <= available) {
            granted.push_back(rounded);
        } else if (r <= available) {
            granted.push_back(available);  // the rounding needs more than is left: take it all
        } else {
            throw input_error(fit_message(requested_sms, device_sms, granularity));
        }
        available -= granted.back();
    }
    return granted;
}

std::string join_sm_counts(const std::vector<int>& counts) {
    std::string s;
    for (int c : counts)
        s += (s.empty() ? "" : ", ") + std::to_string(c);
    return s;
}

DeviceSmResource device_sm_resource(int device_ordinal) {
    const DriverApi& api = driver_api();
    CUdevice device = 0;
    check(api, api.device_get(&device, device_ordinal), "cuDeviceGet");
    CUdevResource resource{};
    check(api, api.device_get_dev_resource(device, &resource, CU_DEV_RESOURCE_TYPE_SM),
          "cuDeviceGetDevResource");
    return {static_cast<int>(resource.sm.smCount), granularity_of(resource)};
}

std::vector<SmPartition> make_sm_partitions(int device_ordinal,
                                            const std::vector<int>& requested_sms) {
    const DriverApi& api = driver_api();
    CUdevice device = 0;
    check(api, api.device_get(&device, device_ordinal), "cuDeviceGet");
    CUdevResource input{};
    check(api, api.device_get_dev_resource(device, &input, CU_DEV_RESOURCE_TYPE_SM),
          "cuDeviceGetDevResource");
    const int device_sms = static_cast<int>(input.sm.smCount);
    const SmGranularity granularity = granularity_of(input);
    planned_sm_counts(requested_sms, device_sms, granularity);  // fails early when they cannot fit

    std::vector<SmPartition> partitions;
    std::vector<CUgreenCtx> remainder_contexts;  // kept: later groups were split from them
    try {
        for (size_t i = 0; i < requested_sms.size(); ++i) {
            const int request = requested_sms[i];
            const bool last = i + 1 == requested_sms.size();
            const int available = static_cast<int>(input.sm.smCount);
            CUdevResource group{};
            CUdevResource remaining{};
            bool has_remaining = false;
            if (request > available) {
                throw input_error(fit_message(requested_sms, device_sms, granularity) +
                                  "; granted so far: " + std::to_string(partitions.size()) +
                                  " groups, " + std::to_string(available) + " SMs left");
            }
            if (rounded_sm_count(request, granularity) > available) {
                group = input;  // the request fits but its rounding does not: all that is left
            } else {
                unsigned int groups = 1;
                const CUresult r = api.sm_resource_split_by_count(
                    &group, &groups, &input, last ? nullptr : &remaining, 0,
                    static_cast<unsigned int>(request));
                if (r == CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION ||
                    (r == CUDA_SUCCESS && groups < 1)) {
                    throw input_error(
                        fit_message(requested_sms, device_sms, granularity) +
                        " (cuDevSmResourceSplitByCount for " + std::to_string(request) + " of " +
                        std::to_string(available) +
                        " SMs: " + (r == CUDA_SUCCESS ? "no group" : result_name(api, r)) + ")");
                }
                check(api, r, "cuDevSmResourceSplitByCount");
                has_remaining = !last && remaining.sm.smCount > 0;
            }
            SmPartition p;
            p.requested_sms = request;
            p.context = create_green_context(api, device, group);
            partitions.push_back(p);
            CUdevResource granted{};
            check(api,
                  api.green_ctx_get_dev_resource(partitions.back().context, &granted,
                                                 CU_DEV_RESOURCE_TYPE_SM),
                  "cuGreenCtxGetDevResource");
            partitions.back().sms = static_cast<int>(granted.sm.smCount);
            check(api,
                  api.green_ctx_stream_create(&partitions.back().stream, partitions.back().context,
                                              CU_STREAM_NON_BLOCKING, 0),
                  "cuGreenCtxStreamCreate");
            if (last)
                break;
            if (!has_remaining) {
                throw input_error(fit_message(requested_sms, device_sms, granularity) +
                                  "; no SMs left after group " + std::to_string(i));
            }
            // The split's outputs cannot be split again until a green context is made over them:
            // split the remainder through one.
            remainder_contexts.push_back(create_green_context(api, device, remaining));
            input = CUdevResource{};
            check(api,
                  api.green_ctx_get_dev_resource(remainder_contexts.back(), &input,
                                                 CU_DEV_RESOURCE_TYPE_SM),
                  "cuGreenCtxGetDevResource");
        }
    } catch (...) {
        // Nothing of LibTorch lives in these yet: give them back before reporting the failure.
        for (const SmPartition& p : partitions) {
            if (p.stream != nullptr)
                api.stream_destroy(p.stream);
            api.green_ctx_destroy(p.context);
        }
        for (CUgreenCtx ctx : remainder_contexts)
            api.green_ctx_destroy(ctx);
        throw;
    }
    return partitions;
}

}  // namespace migscope::workloads
