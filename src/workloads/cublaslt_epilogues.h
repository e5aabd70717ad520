// Two GEMMs of a transformer's training step with the cuBLASLt epilogue that folds in work ATen
// runs as a separate kernel: the bias gradient in the weight-gradient GEMM (BGRADB), and the tanh
// GELU in the up-projection, keeping its input for the backward (GELU_AUX_BIAS). Not used:
// DGELU_BGRAD (GELU's derivative and the bias gradient in the down-projection's input-gradient
// GEMM), which cuBLASLt 13.1 ran on the H200 as the GEMM plus a separate epilogue kernel that
// took 25.5 ms of GPT-2 XL's step (docs/benchmarks.md).
// They run on the cuBLASLt LibTorch loaded (looked up in the process, never linked, as
// driver_api.h does for the driver), on the current stream. Each returns false and leaves its
// outputs alone where it cannot run: a build without CUDA, tensors that are not contiguous bf16
// on a GPU, sizes that are not multiples of 8, or no cuBLASLt algorithm for the problem. The
// caller then computes the same with ATen. A cuBLASLt error after an algorithm was found throws.
#pragma once

#include <torch/torch.h>

namespace migscope::workloads {

// grad_weight [out, in] = grad_output^T input and grad_bias [out] = grad_output's column sums, in
// one GEMM. grad_output [tokens, out], input [tokens, in].
bool weight_and_bias_grad(const torch::Tensor& grad_output, const torch::Tensor& input,
                          torch::Tensor& grad_weight, torch::Tensor& grad_bias);

// pre_activation = input weight^T + bias and output = gelu_tanh(pre_activation), in one GEMM.
// input [tokens, in], weight [hidden, in], bias [hidden]; both outputs [tokens, hidden].
bool linear_gelu_tanh(const torch::Tensor& input, const torch::Tensor& weight,
                      const torch::Tensor& bias, torch::Tensor& output,
                      torch::Tensor& pre_activation);

}  // namespace migscope::workloads
