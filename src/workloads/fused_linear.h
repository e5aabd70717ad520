// The transformers' linear layers and GPT-2's MLP as autograd functions whose GEMMs carry the
// bias gradient and the forward GELU (cublaslt_epilogues.h) on a GPU, in place of the separate
// reduction and element-wise kernels of ATen's autograd; elsewhere (CPU, fp32, odd sizes) the
// same arithmetic in ATen. Values and gradients equal plain autograd's up to rounding.
#pragma once

#include <torch/torch.h>

namespace migscope::workloads {

// x W^T + b for x [..., in], W [out, in], b [out]. Where all three are bf16 on a GPU the
// backward computes W's and b's gradients in one GEMM. Where their dtypes differ (autocast over
// fp32 weights) it is plain torch::linear.
torch::Tensor linear_with_bias(const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias);

// gelu_tanh(x W1^T + b1) W2^T + b2 for x [..., dim], W1 [hidden, dim], W2 [dim_out, hidden]:
// GPT-2's MLP. Where all are bf16 on a GPU the first GEMM applies the GELU and keeps its input,
// and both layers' weight and bias gradients come as in linear_with_bias. Where the dtypes
// differ, plain ATen ops.
torch::Tensor gelu_tanh_mlp(const torch::Tensor& x, const torch::Tensor& up_weight,
                            const torch::Tensor& up_bias, const torch::Tensor& down_weight,
                            const torch::Tensor& down_bias);

}  // namespace migscope::workloads
