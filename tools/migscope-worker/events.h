// The worker's event stream: one protocol event (protocol/events.h) per line on stdout, each
// tagged with its job, written whole even when several job threads report at once.
#pragma once

#include <iostream>
#include <mutex>
#include <optional>

#include "protocol/events.h"

namespace migscope::worker {

class Emitter {
  public:
    // Writes `body` with "job": `job` (null for an error that belongs to no job).
    void operator()(std::optional<int> job, protocol::EventBody body) const {
        const std::string line = protocol::to_json_line({job, std::move(body)});
        std::lock_guard<std::mutex> lock(mutex_);
        std::cout << line << '\n' << std::flush;
    }

  private:
    mutable std::mutex mutex_;
};

}  // namespace migscope::worker
