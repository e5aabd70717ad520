// A GPU's kernel busy time from a process's kernel activity records: the union of their
// [start, end) intervals, so that kernels running at once on several streams count once.
// Records arrive in batches (one CUPTI flush), not in order; pure, so it is tested without a GPU.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace migscope::activity {

class BusyTime {
  public:
    // One kernel's interval, in the records' nanoseconds; an end before its start is ignored.
    void add(uint64_t start_ns, uint64_t end_ns);
    // Folds the batch added since the last flush into the total: sorted by start, merged, and
    // clipped at the latest end already counted, so a record that arrives after a later one
    // never counts twice (it may count short when it fills a gap already passed).
    void flush();
    uint64_t busy_ns() const { return busy_ns_; }  // flushed intervals only
    uint64_t kernels() const { return kernels_; }

  private:
    std::vector<std::pair<uint64_t, uint64_t>> batch_;
    uint64_t covered_until_ns_ = 0;
    uint64_t busy_ns_ = 0;
    uint64_t kernels_ = 0;
};

}  // namespace migscope::activity
