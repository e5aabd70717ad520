// Batch norm fused with the residual add and ReLU after it, as a ResNet block runs them:
// migscope's CUDA kernels (batch_norm_kernels.h) for a bf16 channels-last tensor on a GPU in
// training mode, BatchNorm2d's own forward followed by the add and ReLU everywhere else (CPU,
// other dtypes or layouts, evaluation mode). Both compute the same values, up to the order of fp32
// sums and bf16 rounding (the kernels round once, at the end), and update the running statistics
// and batch count alike. fused_kernels_enabled() (fused_ops.h) switches the kernels off.
#pragma once

#include <torch/torch.h>

namespace migscope::workloads {

// relu(norm(x) + residual): residual may be undefined (no add), relu false (no ReLU).
torch::Tensor batch_norm_add_relu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& norm,
                                  const torch::Tensor& residual, bool relu);

}  // namespace migscope::workloads
