// Linear layers and the GELU MLP with hand-written backward passes that use cuBLASLt epilogues.
#include "workloads/fused_linear.h"

#include <tuple>

#include "workloads/cublaslt_epilogues.h"

namespace migscope::workloads {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// [..., features] as the contiguous matrix [rows, features].
torch::Tensor as_matrix(const torch::Tensor& t) {
    return t.reshape({-1, t.size(-1)}).contiguous();
}

// x's shape with its last size replaced.
std::vector<int64_t> with_last_size(const torch::Tensor& x, int64_t last) {
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes.back() = last;
    return sizes;
}

// The gradients of W and b for output gradient dy and input x (both matrices), each only where
// wanted: in one GEMM where both are and cuBLASLt can, else ATen's GEMM and column sum.
std::pair<torch::Tensor, torch::Tensor> weight_and_bias_grads(const torch::Tensor& dy,
                                                              const torch::Tensor& x,
                                                              bool weight_wanted,
                                                              bool bias_wanted) {
    torch::Tensor grad_weight, grad_bias;
    if (weight_wanted && bias_wanted && weight_and_bias_grad(dy, x, grad_weight, grad_bias))
        return {grad_weight, grad_bias};
    if (weight_wanted)
        grad_weight = dy.t().mm(x);
    if (bias_wanted)
        grad_bias = dy.sum(0);
    return {grad_weight, grad_bias};
}

struct LinearWithBias : torch::autograd::Function<LinearWithBias> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& weight, const torch::Tensor& bias) {
        ctx->save_for_backward({x, weight});
        return torch::linear(x, weight, bias);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &weight = saved[1];
        const torch::Tensor dy = as_matrix(grads[0]);
        torch::Tensor grad_x;
        if (ctx->needs_input_grad(0))
            grad_x = dy.mm(weight).view(x.sizes());
        auto [grad_weight, grad_bias] = weight_and_bias_grads(
            dy, as_matrix(x), ctx->needs_input_grad(1), ctx->needs_input_grad(2));
        return {grad_x, grad_weight, grad_bias};
    }
};

struct GeluTanhMlp : torch::autograd::Function<GeluTanhMlp> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& up_weight, const torch::Tensor& up_bias,
                                 const torch::Tensor& down_weight, const torch::Tensor& down_bias) {
        const torch::Tensor x2 = as_matrix(x);
        torch::Tensor hidden, pre_activation;
        if (!linear_gelu_tanh(x2, up_weight, up_bias, hidden, pre_activation)) {
            pre_activation = torch::linear(x2, up_weight, up_bias);
            hidden = torch::gelu(pre_activation, "tanh");
        }
        ctx->save_for_backward({x, up_weight, down_weight, pre_activation, hidden});
        return torch::linear(hidden, down_weight, down_bias)
            .view(with_last_size(x, down_weight.size(0)));
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &up_weight = saved[1], &down_weight = saved[2],
                            &pre_activation = saved[3], &hidden = saved[4];
        const torch::Tensor dy = as_matrix(grads[0]);
        auto [grad_down_weight, grad_down_bias] =
            weight_and_bias_grads(dy, hidden, ctx->needs_input_grad(3), ctx->needs_input_grad(4));

        torch::Tensor grad_x, grad_up_weight, grad_up_bias;
        if (ctx->needs_input_grad(0) || ctx->needs_input_grad(1) || ctx->needs_input_grad(2)) {
            const torch::Tensor grad_pre =
                torch::gelu_backward(dy.mm(down_weight), pre_activation, "tanh");
            std::tie(grad_up_weight, grad_up_bias) = weight_and_bias_grads(
                grad_pre, as_matrix(x), ctx->needs_input_grad(1), ctx->needs_input_grad(2));
            if (ctx->needs_input_grad(0))
                grad_x = grad_pre.mm(up_weight).view(x.sizes());
        }
        return {grad_x, grad_up_weight, grad_up_bias, grad_down_weight, grad_down_bias};
    }
};

bool same_dtype(std::initializer_list<const torch::Tensor*> tensors) {
    for (const torch::Tensor* t : tensors)
        if (t->scalar_type() != (*tensors.begin())->scalar_type())
            return false;
    return true;
}

}  // namespace

torch::Tensor linear_with_bias(const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias) {
    if (!same_dtype({&x, &weight, &bias}))
        return torch::linear(x, weight, bias);
    return LinearWithBias::apply(x, weight, bias);
}

torch::Tensor gelu_tanh_mlp(const torch::Tensor& x, const torch::Tensor& up_weight,
                            const torch::Tensor& up_bias, const torch::Tensor& down_weight,
                            const torch::Tensor& down_bias) {
    if (!same_dtype({&x, &up_weight, &up_bias, &down_weight, &down_bias}))
        return torch::linear(torch::gelu(torch::linear(x, up_weight, up_bias), "tanh"), down_weight,
                             down_bias);
    return GeluTanhMlp::apply(x, up_weight, up_bias, down_weight, down_bias);
}

}  // namespace migscope::workloads
