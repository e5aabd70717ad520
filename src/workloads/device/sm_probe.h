// Which SMs work launched on an SM partition's stream really reaches: a kernel whose blocks spin
// and then record the SM they ran on (%smid), launched on every partition at once. It shows
// directly whether work escapes a green context, which throughput ratios can only suggest.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/device/green_context.h"

namespace migscope::workloads {

struct SmProbeOptions {
    int blocks = 1056;                 // one-warp blocks per partition (8 per SM of an H200)
    uint64_t spin_cycles = 2'000'000;  // each block spins this long (~1 ms at 2 GHz)
    // Capture each partition's launch on its stream as a CUDA graph and launch the graph, as the
    // worker replays a captured training step: do graph kernels stay in the green context?
    bool through_cuda_graph = false;
};

// The distinct SM ids each partition's blocks ran on, ascending, in partition order. Every
// partition's kernel is launched before any is waited for, so all run at the same time.
std::vector<std::vector<int>> probe_partition_sms(const std::vector<SmPartition>& partitions,
                                                  SmProbeOptions options = {});

// What the probe showed for one partition.
struct SmProbeFinding {
    int granted_sms = 0;
    int seen_sms = 0;    // distinct SMs its blocks ran on
    int shared_sms = 0;  // of those, SMs another partition's blocks also ran on
};

struct SmProbeSummary {
    std::vector<SmProbeFinding> partitions;
    // Every partition stayed within its granted SM count and shared no SM with another.
    bool contained = true;
};

// Pure: the findings from the ids seen per partition and the SMs each was granted.
SmProbeSummary summarize_sm_probe(const std::vector<std::vector<int>>& seen_ids,
                                  const std::vector<int>& granted_sms);

}  // namespace migscope::workloads
