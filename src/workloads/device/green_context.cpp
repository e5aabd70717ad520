// Green contexts (driver entry points from workloads/device/driver_api.h) and the chained SM split.
#include "workloads/device/green_context.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "workloads/device/driver_api.h"

namespace migscope::workloads {
namespace {

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
    check_driver(api, api.dev_resource_generate_desc(&desc, &resource, 1),
                 "cuDevResourceGenerateDesc");
    CUgreenCtx ctx = nullptr;
    check_driver(api, api.green_ctx_create(&ctx, desc, device, CU_GREEN_CTX_DEFAULT_STREAM),
                 "cuGreenCtxCreate");
    return ctx;
}

}  // namespace

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
    check_driver(api, api.device_get(&device, device_ordinal), "cuDeviceGet");
    CUdevResource resource{};
    check_driver(api, api.device_get_dev_resource(device, &resource, CU_DEV_RESOURCE_TYPE_SM),
                 "cuDeviceGetDevResource");
    return {static_cast<int>(resource.sm.smCount), granularity_of(resource)};
}

namespace {

// A green context over `group`, the SMs it was granted and a stream on it, filled into `p` as
// each is made (so that a failure part-way leaves what must be destroyed there).
void open_partition(const DriverApi& api, CUdevice device, const CUdevResource& group,
                    SmPartition& p) {
    p.context = create_green_context(api, device, group);
    CUdevResource granted{};
    check_driver(api, api.green_ctx_get_dev_resource(p.context, &granted, CU_DEV_RESOURCE_TYPE_SM),
                 "cuGreenCtxGetDevResource");
    p.sms = static_cast<int>(granted.sm.smCount);
    check_driver(api,
                 api.green_ctx_stream_create(&p.stream, p.context, CU_STREAM_NON_BLOCKING, 0),
                 "cuGreenCtxStreamCreate");
}

}  // namespace

std::vector<SmPartition> make_sm_partitions(int device_ordinal,
                                            const std::vector<int>& requested_sms) {
    const DriverApi& api = driver_api();
    CUdevice device = 0;
    check_driver(api, api.device_get(&device, device_ordinal), "cuDeviceGet");
    CUdevResource input{};
    check_driver(api, api.device_get_dev_resource(device, &input, CU_DEV_RESOURCE_TYPE_SM),
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
                        std::to_string(available) + " SMs: " +
                        (r == CUDA_SUCCESS ? "no group" : driver_result_name(api, r)) + ")");
                }
                check_driver(api, r, "cuDevSmResourceSplitByCount");
                has_remaining = !last && remaining.sm.smCount > 0;
            }
            partitions.push_back({request, 0, nullptr, nullptr});
            open_partition(api, device, group, partitions.back());
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
            check_driver(api,
                         api.green_ctx_get_dev_resource(remainder_contexts.back(), &input,
                                                        CU_DEV_RESOURCE_TYPE_SM),
                         "cuGreenCtxGetDevResource");
        }
    } catch (...) {
        // Nothing of LibTorch lives in these yet: give them back before reporting the failure.
        for (const SmPartition& p : partitions) {
            if (p.stream != nullptr)
                api.stream_destroy(p.stream);
            if (p.context != nullptr)
                api.green_ctx_destroy(p.context);
        }
        for (CUgreenCtx ctx : remainder_contexts)
            api.green_ctx_destroy(ctx);
        throw;
    }
    return partitions;
}

CUstream make_partition_stream(const SmPartition& partition) {
    const DriverApi& api = driver_api();
    CUstream stream = nullptr;
    check_driver(api,
                 api.green_ctx_stream_create(&stream, partition.context, CU_STREAM_NON_BLOCKING, 0),
                 "cuGreenCtxStreamCreate");
    return stream;
}

}  // namespace migscope::workloads
