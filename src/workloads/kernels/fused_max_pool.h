// The ResNet stem's max pooling (3x3 window, stride 2, padding 1): migscope's CUDA kernels
// (max_pool_kernels.h) for a bf16 channels-last tensor on a GPU whose channels are a multiple of 8,
// ATen's max_pool2d everywhere else. Both give the same values and gradients (the kernels keep the
// argmax as a byte a value instead of ATen's 8, and gather the backward instead of scattering it).
// fused_kernels_enabled() (fused_ops.h) switches the kernels off.
#pragma once

#include <torch/torch.h>

namespace migscope::workloads {

torch::Tensor max_pool_3x3_stride2(const torch::Tensor& x);

}  // namespace migscope::workloads
