// Benchmarks of migscope's CUDA kernels against ATen's on the GPU, the GPU time of each between
// two CUDA events (manual time), at batch 32 and 256: the ResNet stem's max pooling, forward and
// backward, on a bf16 channels-last activation of 64 channels at 112 x 112 (what ResNet-18 and
// -50 pool); and a ResNet block's last batch norm with its residual add and ReLU, forward and
// backward, at each stage's channels and size, replayed as a CUDA graph as the worker replays its
// steps (so that launch gaps are left out on both sides). Skipped without a GPU. Results go to
// docs/benchmarks.md.
#include <ATen/cuda/CUDAContext.h>
#include <benchmark/benchmark.h>
#include <c10/core/AutogradState.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <torch/torch.h>

#include <cstdint>

#include "workloads/kernels/fused_batch_norm.h"
#include "workloads/kernels/fused_ops.h"
#include "workloads/kernels/max_pool_kernels.h"
#include "workloads/training/step_graph.h"

namespace {

using migscope::workloads::kernels::Bf16Bits;

constexpr int64_t kChannels = 64, kSize = 112;

// Times `step` on the current stream between two events, as the iteration's time.
template <typename Step>
void time_on_gpu(benchmark::State& state, Step step) {
    cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    step();  // warm-up: ATen's caching allocator holds its outputs after this
    for (auto _ : state) {
        cudaEventRecord(start, stream);
        step();
        cudaEventRecord(stop, stream);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        state.SetIterationTime(ms / 1e3);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
}

// Arguments: 0 ATen, 1 migscope; the batch.
void BM_MaxPoolForwardBackward(benchmark::State& state) {
    if (!torch::cuda::is_available()) {
        state.SkipWithError("no GPU");
        return;
    }
    const bool migscope = state.range(0) == 1;
    const int64_t batch = state.range(1), out = (kSize - 1) / 2 + 1;
    const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
    const torch::Tensor x = torch::randn({batch, kChannels, kSize, kSize}, options)
                                .contiguous(torch::MemoryFormat::ChannelsLast);
    const torch::Tensor dy = torch::randn({batch, kChannels, out, out}, options)
                                 .contiguous(torch::MemoryFormat::ChannelsLast);
    if (migscope) {
        torch::Tensor y = torch::empty_like(dy), dx = torch::empty_like(x);
        torch::Tensor argmax =
            torch::empty({batch, out, out, kChannels}, options.dtype(torch::kByte));
        void* stream = at::cuda::getCurrentCUDAStream().stream();
        const auto bits = [](const torch::Tensor& t) {
            return static_cast<Bf16Bits*>(t.data_ptr());
        };
        time_on_gpu(state, [&] {
            migscope::workloads::kernels::max_pool_forward(bits(x), batch, kSize, kSize, kChannels,
                                                           bits(y), argmax.data_ptr<uint8_t>(),
                                                           stream);
            migscope::workloads::kernels::max_pool_backward(bits(dy), argmax.data_ptr<uint8_t>(),
                                                            batch, kSize, kSize, kChannels,
                                                            bits(dx), stream);
        });
    } else {
        time_on_gpu(state, [&] {
            const auto [y, indices] = at::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1});
            benchmark::DoNotOptimize(at::max_pool2d_with_indices_backward(
                dy, x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, indices));
        });
    }
}
BENCHMARK(BM_MaxPoolForwardBackward)
    ->ArgNames({"migscope", "batch"})
    ->ArgsProduct({{0, 1}, {32, 256}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Arguments: 0 ATen (BatchNorm2d, add, ReLU), 1 migscope (batch_norm_add_relu's kernels); the
// batch; the ResNet stage (0-3: 64 channels at 56 x 56 up to 512 at 7 x 7).
void BM_BatchNormAddReluForwardBackward(benchmark::State& state) {
    if (!torch::cuda::is_available()) {
        state.SkipWithError("no GPU");
        return;
    }
    namespace w = migscope::workloads;
    const bool fused = state.range(0) == 1;
    const int64_t batch = state.range(1), stage = state.range(2);
    const int64_t channels = 64 << stage, size = 56 >> stage;
    const bool was_fused = w::fused_kernels_enabled();
    w::set_fused_kernels_enabled(fused);
    const auto options = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
    const auto activation = [&] {
        return torch::randn({batch, channels, size, size}, options)
            .contiguous(torch::MemoryFormat::ChannelsLast);
    };
    const torch::Tensor x = activation().requires_grad_(), residual = activation(),
                        dy = activation();
    torch::nn::BatchNorm2d norm(channels);
    norm->to(torch::kCUDA);  // fp32 parameters, as the ResNets keep them
    const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
    const c10::cuda::CUDAStreamGuard on_stream(stream);  // a graph is not captured on stream 0
    // The backward on this thread, as the worker runs it, so that it is captured here.
    c10::AutogradState::get_tls_state().set_multithreading_enabled(false);
    const w::StepGraph::Step step = [&](const w::Batch&) {
        const torch::Tensor y = w::batch_norm_add_relu(x, *norm, residual, true);
        y.backward(dy);
        return y;
    };
    for (int i = 0; i < 3; ++i)  // the gradients' buffers exist before the capture
        step({});
    w::StepGraph graph(std::nullopt);
    graph.capture({}, step);
    time_on_gpu(state, [&] { graph.replay({}); });
    w::set_fused_kernels_enabled(was_fused);
}
BENCHMARK(BM_BatchNormAddReluForwardBackward)
    ->ArgNames({"migscope", "batch", "stage"})
    ->ArgsProduct({{0, 1}, {32, 256}, {0, 1, 2, 3}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
