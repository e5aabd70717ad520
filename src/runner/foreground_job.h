// One worker job in the foreground (`migscope train`): the worker started from an argv (never a
// shell) with the job, its events handed over as they come, and the exit code it ended with.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "protocol/events.h"
#include "protocol/group_spec.h"

namespace migscope::runner {

struct ForegroundJob {
    protocol::WorkerJob job;
    std::string device = "cpu";  // cpu | cuda:0
    std::string visible_gpu;     // CUDA_VISIBLE_DEVICES for the worker (a GPU's UUID); empty: unset
    std::string worker_path;
};

struct ForegroundHooks {
    std::function<void(const protocol::EventBody&)> event;  // every event, in order
    std::function<void(const std::string&)> note;           // lines that are not events, the end
    const std::atomic<bool>* interrupt = nullptr;           // set: the worker is terminated
};

// The worker's exit code (130 when interrupted, 1 when a signal ended it).
int run_in_foreground(const ForegroundJob& job, const ForegroundHooks& hooks);

}  // namespace migscope::runner
