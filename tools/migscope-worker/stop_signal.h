// The runner's way to end a steady-state window: a `stop` line on the worker's stdin, or its end.
#pragma once

#include <atomic>
#include <memory>

namespace migscope::worker {

enum class StopReason { kNone, kStopLine, kEndOfInput };

class StopSignal {
  public:
    StopSignal() : reason_(std::make_shared<std::atomic<int>>(0)) {}
    // Starts a detached thread that reads stdin lines until `stop` or the end of input, then
    // records why. Lines other than `stop` are reported on stderr and ignored.
    void start_reading_stdin();
    StopReason reason() const { return static_cast<StopReason>(reason_->load()); }
    bool requested() const { return reason() != StopReason::kNone; }

  private:
    std::shared_ptr<std::atomic<int>>
        reason_;  // shared with the reader thread, which may outlive us
};

}  // namespace migscope::worker
