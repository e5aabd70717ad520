// Runs one training job of the worker on its device, stream and memory pool, reporting ready, step
// and result events: the body of `train` and of each thread of `group`.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>
#include <c10/cuda/CUDAStream.h>

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "events.h"
#include "protocol/group_spec.h"
#include "stop_signal.h"

namespace migscope::worker {

// Whose reserved memory is the job's: nobody's (CPU: not measured), the whole device's (one job in
// the process), or the job's own caching-allocator pool (several jobs in the process).
enum class MemoryScope { kNotMeasured, kDevice, kPool };

struct JobEnvironment {
    int index = 0;
    c10::Device device{c10::kCPU};
    // The job's stream (a green-context stream); none: the device's default stream.
    std::optional<c10::cuda::CUDAStream> stream;
    std::optional<int> sms;         // SMs the job runs on (granted); none on CPU
    std::optional<int> device_sms;  // none on CPU
    std::optional<std::string> device_name;
    MemoryScope memory = MemoryScope::kNotMeasured;
    c10::MempoolId_t pool{0, 0};       // MemoryScope::kPool
    const StopSignal* stop = nullptr;  // StopRule::kUntilStopped, Hold::kUntilStart
    // A queued job (WorkerJob::after): set when the job it follows has ended; its measured steps
    // wait for it (after the `start` line when held).
    const std::atomic<bool>* predecessor_ended = nullptr;
    std::function<void()> on_ready;  // called once, right after the `ready` event
};

// Builds the model, emits `ready`, trains through the measuring loop (measure/measure_loop.h)
// until the job's stopping rule says so, emits `step` events and the `result`. Throws on failure;
// the caller reports it as an `error` event.
void run_job(const protocol::WorkerJob& spec, const JobEnvironment& env, const Emitter& emit);

}  // namespace migscope::worker
