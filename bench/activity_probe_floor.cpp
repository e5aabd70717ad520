// libactivity-probe-floor.so, for bench/activity_probe_cost.sh only: an injection library
// (CUDA_INJECTION64_PATH) that runs a part of what the activity probe (src/activity/probe.cpp)
// runs, picked by MIGSCOPE_FLOOR_PART, so that the probe's cost to training can be taken apart:
//   inject       loaded by the driver, nothing more (the injection mechanism's own cost)
//   cupti        CUPTI's activity API with device records only (CUPTI in the process, no timing)
//   graphs-only  one record per CUDA graph launch and no kernel records (the probe's graph mode
//                without the kernel records it keeps for kernels launched outside graphs)
// Like the probe, it takes CUPTI's buffers and flushes every 0.5 s. It sends nothing; at exit it
// prints how many records it took, so that a run says the part was on.
#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

constexpr size_t kBufferBytes = 1 << 20;
std::atomic<unsigned long long> records{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS)
        records.fetch_add(1);
    std::free(buffer);
}

void at_exit() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::fprintf(stderr, "activity-probe-floor: %llu records\n", records.load());
}

bool enable(CUpti_ActivityKind kind, const char* name) {
    const CUptiResult result = cuptiActivityEnable(kind);
    if (result != CUPTI_SUCCESS)
        std::fprintf(stderr, "activity-probe-floor: CUPTI refused %s records (%d)\n", name,
                     static_cast<int>(result));
    return result == CUPTI_SUCCESS;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    const char* part = std::getenv("MIGSCOPE_FLOOR_PART");
    if (!part || std::strcmp(part, "inject") == 0)
        return 1;
    const bool graphs = std::strcmp(part, "graphs-only") == 0;
    if (!graphs && std::strcmp(part, "cupti") != 0) {
        std::fprintf(stderr, "activity-probe-floor: MIGSCOPE_FLOOR_PART is inject, cupti or "
                             "graphs-only\n");
        return 1;
    }
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        !enable(CUPTI_ACTIVITY_KIND_DEVICE, "device") ||
        (graphs && !enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "graph")))
        return 1;
    std::atexit(at_exit);
    std::thread([] {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            cuptiActivityFlushAll(0);
        }
    }).detach();
    return 1;
}
