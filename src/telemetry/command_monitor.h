// Monitoring: samples a power source on its own thread for a duration, until interrupted, or
// while a command runs (argv, never a shell; it inherits our stdin, stdout and stderr), handing
// the samples to the caller as they come, and summarises the energy between the first and last
// reading. `migscope monitor` prints what this measures.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/energy.h"
#include "telemetry/power_source.h"
#include "telemetry/sampler.h"

namespace migscope::telemetry {

struct MonitorRequest {
    double hz = 10;
    double duration_s = 0;             // without a command: stop after this long (0: interrupt)
    std::vector<std::string> command;  // empty: sample until duration_s or the interrupt
    const std::atomic<bool>* interrupt = nullptr;
};

struct MonitorResult {
    // The command's exit status (128 + signal when killed); none without a command.
    std::optional<int> exit_status;
    std::optional<std::string> start_failure;  // the command could not be started: why
    EnergySummary energy;
    SamplerStats sampler;
};

// `on_start` gets the first full reading (time and energy origin of the trace); `on_samples`
// gets new samples about every 100 ms from a second thread, and the last ones at the end.
MonitorResult monitor(PowerSource& source, const MonitorRequest& request,
                      const std::function<void(const Sample&)>& on_start,
                      const std::function<void(const std::vector<Sample>&)>& on_samples);

}  // namespace migscope::telemetry
