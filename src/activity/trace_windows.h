// The windows in which a sampling probe (MIGSCOPE_ACTIVITY_DUTY below 1) had its kernel records
// on, in the records' nanoseconds: kernel intervals are clipped to them, and their total length is
// what the busy time is divided by. Pure, so it is tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace migscope::activity {

class TraceWindows {
  public:
    // The most recent windows kept for clipping: records of an older one that arrive this late
    // are not counted (at the default period, windows 4 s old).
    static constexpr size_t kKeptWindows = 8;

    // One window [start_ns, end_ns) in which records were on; windows come in order and do not
    // overlap (an end before its start, or a start before the last end, is ignored).
    void add(uint64_t start_ns, uint64_t end_ns);
    // The parts of [start_ns, end_ns) inside the kept windows, in order.
    std::vector<std::pair<uint64_t, uint64_t>> clip(uint64_t start_ns, uint64_t end_ns) const;
    // The length of every window added, kept or not.
    uint64_t traced_ns() const { return traced_ns_; }

  private:
    std::deque<std::pair<uint64_t, uint64_t>> windows_;
    uint64_t traced_ns_ = 0;
};

}  // namespace migscope::activity
