// Capturing a training step as a CUDA graph, cleaning up when it cannot be, and replaying it.
#include "workloads/training/step_graph.h"

#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <mutex>

namespace migscope::workloads {
namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;

// The device's default CUDA generator, which a capture puts into capture mode (its random
// offsets then advance inside the graph) and only a successful capture_end takes out of it.
class GeneratorCheckpoint {
  public:
    explicit GeneratorCheckpoint(c10::DeviceIndex device)
        : generator_(at::cuda::detail::getDefaultCUDAGenerator(device)),
          device_(device),
          seed_(generator_.current_seed()),
          offset_(generator_.get_offset()) {}
    // After a failed capture: a generator state out of capture mode, at the seed and offset of
    // before the capture.
    void restore() {
        at::Generator fresh = at::cuda::detail::createCUDAGenerator(device_);
        fresh.set_current_seed(seed_);
        fresh.set_offset(offset_);
        std::lock_guard<std::mutex> lock(generator_.mutex());
        generator_.unsafeGetGeneratorImpl()->graphsafe_set_state(fresh.getIntrusivePtr());
    }

  private:
    at::Generator generator_;
    c10::DeviceIndex device_;
    uint64_t seed_, offset_;
};

// Ends a capture that failed half-way (the step threw, or the capture was invalidated): the
// stream leaves capture mode, the allocator stops routing the stream into the capture's pool and
// drops the capture's reference to it, and the sticky-free CUDA error state is cleared.
void abandon_capture(cudaStream_t stream, c10::DeviceIndex device, c10::MempoolId_t pool,
                     bool pool_routed) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
        cudaGraph_t partial = nullptr;
        cudaStreamEndCapture(stream, &partial);
        if (partial != nullptr)
            cudaGraphDestroy(partial);
    }
    (void)cudaGetLastError();
    if (pool_routed) {
        alloc::endAllocateToPool(device, pool);
        alloc::releasePool(device, pool);
    }
}

}  // namespace

void allocate_stream_to_pool(c10::DeviceIndex device, c10::MempoolId_t pool, cudaStream_t stream) {
    alloc::beginAllocateToPool(device, pool, [stream](cudaStream_t s) { return s == stream; });
}

StepGraph::StepGraph(std::optional<c10::MempoolId_t> job_pool) : job_pool_(job_pool) {}

StepGraph::~StepGraph() = default;

void StepGraph::capture(const Batch& batch, const Step& step) {
    const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream();
    const c10::DeviceIndex device = stream.device_index();
    inputs_ = batch;
    if (job_pool_) {
        // The capture routes the stream into the same pool itself; one route per pool at a time.
        alloc::endAllocateToPool(device, *job_pool_);
    } else {
        alloc::emptyCache();  // the eager steps' activations, cached: the graph gets its own
    }
    const c10::MempoolId_t pool = job_pool_ ? *job_pool_ : at::cuda::graph_pool_handle();
    GeneratorCheckpoint generator(device);
    graph_ = std::make_unique<at::cuda::CUDAGraph>();
    std::exception_ptr failure;
    // Thread-local: the other jobs of a group go on allocating and launching meanwhile.
    graph_->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
    try {
        loss_ = step(inputs_);
    } catch (...) {
        failure = std::current_exception();
        loss_ = torch::Tensor();
        abandon_capture(stream.stream(), device, pool, /*pool_routed=*/true);
    }
    if (!failure) {
        try {
            graph_->capture_end();
        } catch (...) {
            failure = std::current_exception();
            loss_ = torch::Tensor();
            // Whether the allocator still routes into the pool depends on where capture_end
            // failed; the pool's reference is left alone (a leak of cached memory at worst).
            abandon_capture(stream.stream(), device, pool, /*pool_routed=*/false);
            try {
                alloc::endAllocateToPool(device, pool);
            } catch (const c10::Error&) {
            }
        }
    }
    if (job_pool_)
        allocate_stream_to_pool(device, *job_pool_, stream.stream());
    if (failure) {
        generator.restore();
        graph_.reset();
        inputs_ = Batch();
        std::rethrow_exception(failure);
    }
}

torch::Tensor StepGraph::replay(const Batch& batch) {
    TORCH_CHECK(graph_, "StepGraph::replay before a successful capture");
    const auto copy_into = [](torch::Tensor& input, const torch::Tensor& given) {
        if (!given.defined() || given.is_same(input))
            return;
        TORCH_CHECK(given.sizes() == input.sizes(),
                    "a captured step's batch changed shape: ", input.sizes(), " -> ",
                    given.sizes());
        input.copy_(given);
    };
    copy_into(inputs_.inputs, batch.inputs);
    copy_into(inputs_.targets, batch.targets);
    graph_->replay();
    return loss_;
}

}  // namespace migscope::workloads
