// Test helper: runs a layer function and its plain-autograd twin on the same random inputs and
// returns the output and every input's gradient, for the CPU and GPU tests of fused_linear.h.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace migscope::workloads::testing {

struct LayerRun {
    torch::Tensor output;
    std::vector<torch::Tensor> grads;  // one per input; undefined where it needs no gradient
};

// Inputs of `shapes`, drawn on the CPU from a fixed seed (so every call gets the same values)
// and moved to `options`; input i requires a gradient where needs_grad[i]. Backward runs on the
// output times a fixed random probe, so that every output element's gradient differs.
template <typename Layer>
LayerRun run_layer(Layer layer, const std::vector<std::vector<int64_t>>& shapes,
                   const std::vector<bool>& needs_grad, torch::TensorOptions options) {
    torch::manual_seed(7);
    std::vector<torch::Tensor> inputs;
    for (size_t i = 0; i < shapes.size(); ++i)
        inputs.push_back((torch::randn(shapes[i]) * 0.5).to(options).requires_grad_(needs_grad[i]));
    LayerRun run;
    run.output = layer(inputs);
    const torch::Tensor probe = torch::randn(run.output.sizes()).to(options);
    if (run.output.requires_grad())
        (run.output * probe).sum().backward();
    run.output = run.output.detach();
    for (const torch::Tensor& input : inputs)
        run.grads.push_back(input.grad());
    return run;
}

// ||a - b|| / ||b||, in fp32.
inline double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
    const torch::Tensor a32 = a.to(torch::kFloat32), b32 = b.to(torch::kFloat32);
    return ((a32 - b32).norm() / b32.norm()).item<double>();
}

}  // namespace migscope::workloads::testing
