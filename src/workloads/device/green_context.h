// SM partitions of one GPU through CUDA green contexts (driver API reached through the runtime,
// without linking libcuda): disjoint SM groups by chained splitting, one green context and one
// stream per group; plus the SM arithmetic behind it as pure functions.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "core/sm_granularity.h"

namespace migscope::workloads {

// The SM counts that requests made in order get from a device of `device_sms` SMs when each
// group is split off what the earlier ones left: each rounded up to the granularity, or all that
// is left when the rounding would need more than is left but the request itself fits. Throws an
// input error naming the requests and the device's SM count when they do not fit, or when a
// request is not positive.
std::vector<int> planned_sm_counts(const std::vector<int>& requested_sms, int device_sms,
                                   SmGranularity granularity);

// "60, 32, 16, 16"
std::string join_sm_counts(const std::vector<int>& counts);

// One job's partition: a green context over `sms` SMs and a non-blocking stream in it. The
// handles live until the process ends: green contexts are never destroyed while LibTorch may
// still hold streams, handles or memory made under them.
struct SmPartition {
    int requested_sms = 0;
    int sms = 0;  // what the green context really holds (cuGreenCtxGetDevResource)
    CUgreenCtx context = nullptr;
    CUstream stream = nullptr;
};

// The device's SM resource: its SM count and grouping rules (cuDeviceGetDevResource). Throws an
// unavailable error when the driver lacks green contexts (CUDA < 12.5).
struct DeviceSmResource {
    int sms = 0;
    SmGranularity granularity;
};
DeviceSmResource device_sm_resource(int device_ordinal);

// Makes disjoint SM groups of at least the requested counts, in order, by chained splitting: the
// device's SMs are split into one group of the first request and a remainder; a green context is
// made over the remainder and its SMs split again for the next request; and so on (the full
// device is never split twice, which would hand out the same SMs again). Each group gets a green
// context and a stream from cuGreenCtxStreamCreate (CU_STREAM_NON_BLOCKING). The CUDA runtime must
// already be initialised on the device (LibTorch does this on first use). Throws an input error
// when the requests do not fit, a runtime error naming the driver call when one fails.
std::vector<SmPartition> make_sm_partitions(int device_ordinal,
                                            const std::vector<int>& requested_sms);

// Another non-blocking stream in a partition's green context (same SMs), for a job queued on it.
CUstream make_partition_stream(const SmPartition& partition);

}  // namespace migscope::workloads
