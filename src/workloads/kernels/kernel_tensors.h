// What the autograd functions around migscope's CUDA kernels share: a bf16 tensor's bits as the
// launchers take them, whether a tensor starts 16-byte aligned (the kernels' vectors), and the
// current CUDA stream. Included only where the kernels are built (MIGSCOPE_CUDA_KERNELS).
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <torch/torch.h>

#include <cstdint>

namespace migscope::workloads::kernels {

using Bf16Bits = uint16_t;

// Null for an undefined tensor (an optional input).
inline Bf16Bits* bf16_bits(const torch::Tensor& t) {
    return t.defined() ? static_cast<Bf16Bits*>(t.data_ptr()) : nullptr;
}

inline bool aligned16(const torch::Tensor& t) {
    return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

inline void* current_stream() {
    return at::cuda::getCurrentCUDAStream().stream();
}

}  // namespace migscope::workloads::kernels
