// The worker's event stream: one JSON object per line on stdout, each tagged with its job, written
// whole even when several job threads report at once.
#pragma once

#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

namespace migscope::worker {

class Emitter {
  public:
    // Writes `event` with "job": `job` (null for an error that belongs to no job).
    void operator()(std::optional<int> job, nlohmann::json event) const {
        event["job"] = job ? nlohmann::json(*job) : nlohmann::json(nullptr);
        const std::string line = event.dump();
        std::lock_guard<std::mutex> lock(mutex_);
        std::cout << line << '\n' << std::flush;
    }

  private:
    mutable std::mutex mutex_;
};

}  // namespace migscope::worker
