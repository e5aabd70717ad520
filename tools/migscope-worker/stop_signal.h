// The runner's lines on the worker's stdin: `start` (begin the fixed work after a held warm-up)
// and `stop` (end a steady-state window); the end of stdin means both.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

#include "protocol/events.h"

namespace migscope::worker {

enum class StopReason { kNone, kStopLine, kEndOfInput };

class StopSignal {
  public:
    StopSignal()
        : reason_(std::make_shared<std::atomic<int>>(0)),
          started_(std::make_shared<std::atomic<bool>>(false)) {}
    // Starts a detached thread that reads stdin lines until `stop` or the end of input, then
    // records why; `start` is recorded on the way. Other lines are reported on stderr and ignored.
    void start_reading_stdin();
    StopReason reason() const { return static_cast<StopReason>(reason_->load()); }
    bool requested() const { return reason() != StopReason::kNone; }
    bool start_received() const { return started_->load() || requested(); }
    // The stop as a result reports it (kStopLine or kEndOfInput); none while not told.
    std::optional<protocol::StoppedBy> stopped_by() const {
        switch (reason()) {
            case StopReason::kStopLine:
                return protocol::StoppedBy::kStopLine;
            case StopReason::kEndOfInput:
                return protocol::StoppedBy::kEndOfInput;
            case StopReason::kNone:
                break;
        }
        return std::nullopt;
    }

  private:
    // Shared with the reader thread, which may outlive us.
    std::shared_ptr<std::atomic<int>> reason_;
    std::shared_ptr<std::atomic<bool>> started_;
};

}  // namespace migscope::worker
