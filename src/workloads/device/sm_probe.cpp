// The SM probe: a hand-written PTX kernel loaded into each partition's green context.
#include "workloads/device/sm_probe.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "workloads/device/driver_api.h"

namespace migscope::workloads {
namespace {

// Thread 0 of every block spins for `spin_cycles` (so that blocks spread over every SM the
// partition may use instead of finishing on the first few), then writes %smid to
// out_sm_ids[blockIdx.x]. PTX ISA 7.8 / sm_90: the driver JIT-compiles it for the device.
constexpr const char* kProbePtx = R"(
.version 7.8
.target sm_90
.address_size 64

.visible .entry migscope_sm_probe(.param .u64 out_sm_ids, .param .u64 spin_cycles)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;

    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [out_sm_ids];
    ld.param.u64 %rd2, [spin_cycles];
    mov.u64 %rd3, %clock64;
SPIN:
    mov.u64 %rd4, %clock64;
    sub.u64 %rd5, %rd4, %rd3;
    setp.lt.u64 %p1, %rd5, %rd2;
    @%p1 bra SPIN;
    mov.u32 %r2, %smid;
    mov.u32 %r3, %ctaid.x;
    cvta.to.global.u64 %rd6, %rd1;
    mul.wide.u32 %rd7, %r3, 4;
    add.u64 %rd6, %rd6, %rd7;
    st.global.u32 [%rd6], %r2;
DONE:
    ret;
}
)";

// One partition's launch: its context, module, kernel and output buffer.
struct ProbeLaunch {
    CUcontext context = nullptr;
    CUmodule module = nullptr;
    CUdeviceptr out = 0;
    cudaGraphExec_t graph = nullptr;  // through_cuda_graph
};

void check_runtime(cudaError_t status, const char* call) {
    if (status != cudaSuccess)
        throw runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

}  // namespace

std::vector<std::vector<int>> probe_partition_sms(const std::vector<SmPartition>& partitions,
                                                  SmProbeOptions options) {
    // Long as one sequence of checked driver calls per partition (context, buffer, launch or
    // graph, read back) with one release for every exit; split only where its GPU test runs.
    const DriverApi& api = driver_api();
    const size_t out_bytes = sizeof(uint32_t) * static_cast<size_t>(options.blocks);
    std::vector<ProbeLaunch> launches(partitions.size());
    const auto release = [&] {
        for (ProbeLaunch& l : launches) {
            if (l.context == nullptr)
                continue;
            api.ctx_push_current(l.context);
            if (l.out != 0)
                api.mem_free(l.out);
            if (l.graph != nullptr)
                cudaGraphExecDestroy(l.graph);
            if (l.module != nullptr)
                api.module_unload(l.module);
            CUcontext popped = nullptr;
            api.ctx_pop_current(&popped);
        }
    };
    std::vector<std::vector<int>> seen(partitions.size());
    try {
        for (size_t i = 0; i < partitions.size(); ++i) {
            ProbeLaunch& l = launches[i];
            check_driver(api, api.ctx_from_green_ctx(&l.context, partitions[i].context),
                         "cuCtxFromGreenCtx");
            check_driver(api, api.ctx_push_current(l.context), "cuCtxPushCurrent");
            CUcontext popped = nullptr;
            const auto pop = [&] { api.ctx_pop_current(&popped); };
            try {
                check_driver(api, api.module_load_data(&l.module, kProbePtx), "cuModuleLoadData");
                CUfunction kernel = nullptr;
                check_driver(api, api.module_get_function(&kernel, l.module, "migscope_sm_probe"),
                             "cuModuleGetFunction");
                check_driver(api, api.mem_alloc(&l.out, out_bytes), "cuMemAlloc");
                const auto stream = reinterpret_cast<cudaStream_t>(partitions[i].stream);
                if (options.through_cuda_graph) {
                    check_runtime(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                                  "cudaStreamBeginCapture");
                }
                // 0xffffffff marks a block that never wrote (it would show as an impossible SM).
                check_driver(
                    api,
                    api.memset_d32_async(l.out, 0xffffffffu, options.blocks, partitions[i].stream),
                    "cuMemsetD32Async");
                uint64_t spin = options.spin_cycles;
                void* args[] = {&l.out, &spin};
                check_driver(api,
                             api.launch_kernel(kernel, options.blocks, 1, 1, 32, 1, 1, 0,
                                               partitions[i].stream, args, nullptr),
                             "cuLaunchKernel");
                if (options.through_cuda_graph) {
                    cudaGraph_t graph = nullptr;
                    check_runtime(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
                    const cudaError_t made = cudaGraphInstantiate(&l.graph, graph, 0);
                    cudaGraphDestroy(graph);
                    check_runtime(made, "cudaGraphInstantiate");
                    check_runtime(cudaGraphLaunch(l.graph, stream), "cudaGraphLaunch");
                }
            } catch (...) {
                pop();
                throw;
            }
            pop();
        }
        for (size_t i = 0; i < partitions.size(); ++i) {
            check_driver(api, api.ctx_push_current(launches[i].context), "cuCtxPushCurrent");
            std::vector<uint32_t> ids(static_cast<size_t>(options.blocks));
            CUresult synced = api.stream_synchronize(partitions[i].stream);
            CUresult copied = synced == CUDA_SUCCESS
                                  ? api.memcpy_dtoh(ids.data(), launches[i].out, out_bytes)
                                  : synced;
            CUcontext popped = nullptr;
            api.ctx_pop_current(&popped);
            check_driver(api, synced, "cuStreamSynchronize");
            check_driver(api, copied, "cuMemcpyDtoH");
            std::set<int> distinct;
            for (uint32_t id : ids)
                distinct.insert(id == 0xffffffffu ? -1 : static_cast<int>(id));
            seen[i].assign(distinct.begin(), distinct.end());
        }
    } catch (...) {
        release();
        throw;
    }
    release();
    return seen;
}

SmProbeSummary summarize_sm_probe(const std::vector<std::vector<int>>& seen_ids,
                                  const std::vector<int>& granted_sms) {
    if (seen_ids.size() != granted_sms.size())
        throw input_error("SM probe: " + std::to_string(seen_ids.size()) + " results for " +
                          std::to_string(granted_sms.size()) + " partitions");
    std::map<int, int> partitions_per_sm;
    for (const std::vector<int>& ids : seen_ids) {
        for (int id : std::set<int>(ids.begin(), ids.end()))
            ++partitions_per_sm[id];
    }
    SmProbeSummary summary;
    for (size_t i = 0; i < seen_ids.size(); ++i) {
        const std::set<int> ids(seen_ids[i].begin(), seen_ids[i].end());
        SmProbeFinding f;
        f.granted_sms = granted_sms[i];
        f.seen_sms = static_cast<int>(ids.size());
        f.shared_sms = static_cast<int>(std::count_if(
            ids.begin(), ids.end(), [&](int id) { return partitions_per_sm[id] > 1; }));
        // A block that never wrote its SM (-1) means the probe itself failed: not contained.
        summary.contained = summary.contained && f.seen_sms <= f.granted_sms && f.shared_sms == 0 &&
                            !ids.contains(-1);
        summary.partitions.push_back(f);
    }
    return summary;
}

}  // namespace migscope::workloads
