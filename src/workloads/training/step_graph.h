// One training step captured as a CUDA graph and replayed: the forward, backward and optimizer
// kernels of a step go to the GPU in one launch instead of thousands, which is what small-batch
// jobs on a whole GPU are bound by. The step must be free of host syncs and its shapes fixed.
// A capture puts the device's default CUDA generator into capture mode: while one job of a group
// captures, no other may draw random numbers on the GPU (the built-in workloads draw them only
// when they make their synthetic batch, before any job steps).
#pragma once

#include <ATen/cuda/CUDAGraph.h>
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>

#include "workloads/models/model.h"

namespace migscope::workloads {

// Routes every caching-allocator allocation made on `stream` into `pool` (a group job's own
// pool, so that its reserved memory is its own), until endAllocateToPool.
void allocate_stream_to_pool(c10::DeviceIndex device, c10::MempoolId_t pool, cudaStream_t stream);

class StepGraph {
  public:
    // The step: launches its work on the current stream and returns the loss (a device scalar).
    using Step = std::function<torch::Tensor(const Batch&)>;

    // job_pool: the pool the job's stream allocates from (group), which the capture then shares;
    // none: the capture gets a new private pool, after the eager steps' cached blocks are
    // released so that the job does not hold its activations twice.
    explicit StepGraph(std::optional<c10::MempoolId_t> job_pool);
    ~StepGraph();

    // Captures `step` on `batch`, whose tensors become the graph's inputs, on the current stream
    // (not the legacy default stream). Nothing runs yet. On failure the capture is ended, the
    // stream left usable, and the CUDA error (e.g. a host sync inside the step) is thrown.
    void capture(const Batch& batch, const Step& step);
    // Copies `batch` into the graph's inputs (unless it is those tensors), replays the step and
    // returns its loss (on the device; the replay has not necessarily finished).
    torch::Tensor replay(const Batch& batch);

  private:
    std::optional<c10::MempoolId_t> job_pool_;
    std::unique_ptr<at::cuda::CUDAGraph> graph_;
    Batch inputs_;
    torch::Tensor loss_;
};

}  // namespace migscope::workloads
