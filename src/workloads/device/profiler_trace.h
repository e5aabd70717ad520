// A PyTorch-profiler (Kineto) trace of CPU operators and CUDA kernels, written as Chrome trace
// JSON: what `migscope-worker train --profile-trace` records over the measured steps.
#pragma once

#include <string>

namespace migscope::workloads {

class ProfilerTrace {
  public:
    // Starts recording on this thread: CPU operators with their input shapes, and CUDA kernels
    // when `cuda` is true.
    explicit ProfilerTrace(bool cuda);
    ~ProfilerTrace();  // stops without writing, if save() was not called
    ProfilerTrace(const ProfilerTrace&) = delete;
    ProfilerTrace& operator=(const ProfilerTrace&) = delete;

    // Stops recording and writes the trace to `path` (Chrome trace JSON; open it in Perfetto or
    // summarise it with bench/trace_summary.py).
    void save(const std::string& path);

  private:
    bool recording_ = false;
};

}  // namespace migscope::workloads
