// Transformer blocks: attention through at::scaled_dot_product_attention (flash / memory-efficient
// kernels on CUDA when LibTorch picks them), GELU MLP, pre- or post-norm residuals; residual adds,
// biases, layer norms and GELU through the fused operations of fused_ops.h.
#include "workloads/models/transformer.h"

#include "workloads/kernels/fused_ops.h"

#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cmath>
#include <limits>
#include <vector>

namespace migscope::workloads {

LoraAdapterImpl::LoraAdapterImpl(int64_t in, int64_t out, int64_t rank, double alpha)
    : scale(alpha / static_cast<double>(rank)) {
    a = register_parameter("a", torch::randn({rank, in}) / std::sqrt(static_cast<double>(in)));
    b = register_parameter("b", torch::zeros({out, rank}));
}

torch::Tensor LoraAdapterImpl::forward(const torch::Tensor& x) {
    return torch::matmul(torch::matmul(x, a.t()), b.t()) * scale;
}

torch::Tensor apply_linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
    return torch::linear(x, layer->weight, layer->bias);
}

torch::Tensor to_residual_dtype(const torch::Tensor& x) {
    const c10::DeviceType device = x.device().type();
    if (!at::autocast::is_autocast_enabled(device))
        return x;
    return x.to(at::autocast::get_autocast_dtype(device));
}

torch::Tensor layer_norm_in_input_dtype(const torch::nn::LayerNorm& norm, const torch::Tensor& x) {
    const torch::nn::LayerNormOptions& o = norm->options;
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    return torch::layer_norm(x, o.normalized_shape(), norm->weight.to(x.scalar_type()),
                             norm->bias.to(x.scalar_type()), o.eps());
}

namespace {

// The layer's output plus its adapter's, when it has one.
torch::Tensor with_lora(torch::nn::Linear& layer, LoraAdapter& adapter, const torch::Tensor& x) {
    return adapter.is_empty() ? apply_linear(layer, x) : apply_linear(layer, x) + adapter(x);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct SplitHeads : torch::autograd::Function<SplitHeads> {
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& qkv, int64_t heads) {
        const int64_t b = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3;
        ctx->saved_data["heads"] = heads;
        const auto parts = qkv.view({b, t, 3, heads, d / heads}).permute({2, 0, 3, 1, 4}).unbind(0);
        return {parts[0], parts[1], parts[2]};
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const int64_t heads = ctx->saved_data["heads"].toInt();
        const torch::Tensor& any = grads[0].defined()   ? grads[0]
                                   : grads[1].defined() ? grads[1]
                                                        : grads[2];
        const int64_t b = any.size(0), t = any.size(2), head_dim = any.size(3);
        // One concatenation of [b, t, 1, heads, head_dim] views into the fused layout (on the
        // H200 as fast as three strided copies: GPT-2 XL 180.9 ms a step either way).
        std::vector<torch::Tensor> parts;
        for (int64_t i = 0; i < 3; ++i) {
            const torch::Tensor& g = grads[i].defined() ? grads[i] : torch::zeros_like(any);
            parts.push_back(g.transpose(1, 2).unsqueeze(2));
        }
        const torch::Tensor grad = torch::cat(parts, 2);
        return {grad.view({b, t, 3 * heads * head_dim}), torch::Tensor()};
    }
};

}  // namespace

std::array<torch::Tensor, 3> split_heads(const torch::Tensor& qkv, int64_t heads) {
    const variable_list parts = SplitHeads::apply(qkv, heads);
    return {parts[0], parts[1], parts[2]};
}

SelfAttentionImpl::SelfAttentionImpl(int64_t dim, int64_t heads_, Causality causality_)
    : heads(heads_), causality(causality_) {
    TORCH_CHECK(dim % heads == 0, "model width ", dim, " is not a multiple of ", heads, " heads");
    qkv = register_module("qkv", torch::nn::Linear(dim, 3 * dim));
    out = register_module("out", torch::nn::Linear(dim, dim));
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x) {
    return forward_without_out_bias(x) + out->bias.to(x.scalar_type());
}

torch::Tensor SelfAttentionImpl::forward_without_out_bias(const torch::Tensor& x) {
    return attend(qkv_lora.is_empty() ? qkv_heads(x, qkv->weight, qkv->bias, heads)
                                      : split_heads(with_lora(qkv, qkv_lora, x), heads));
}

ProjectionAndInput SelfAttentionImpl::forward_keeping_input(const torch::Tensor& x) {
    if (!qkv_lora.is_empty())
        return {forward_without_out_bias(x), x};
    const HeadsAndInput parts = qkv_heads_keeping_input(x, qkv->weight, qkv->bias, heads);
    return {attend(parts.heads), parts.input};
}

torch::Tensor SelfAttentionImpl::attend(const std::array<torch::Tensor, 3>& parts) {
    const int64_t b = parts[0].size(0), t = parts[0].size(2), d = out->options.in_features();
    torch::Tensor y = at::scaled_dot_product_attention(parts[0], parts[1], parts[2], {}, 0.0,
                                                       causality == Causality::kCausal);
    y = y.transpose(1, 2).reshape({b, t, d});
    const torch::Tensor projected = torch::linear(y, out->weight);
    return out_lora.is_empty() ? projected : projected + out_lora(y);
}

void SelfAttentionImpl::add_lora(int64_t rank, double alpha) {
    const int64_t dim = out->options.in_features();
    qkv_lora = register_module("qkv_lora", LoraAdapter(dim, 3 * dim, rank, alpha));
    out_lora = register_module("out_lora", LoraAdapter(dim, dim, rank, alpha));
}

MlpImpl::MlpImpl(int64_t dim, int64_t hidden, Gelu gelu_) : gelu(gelu_) {
    up = register_module("up", torch::nn::Linear(dim, hidden));
    down = register_module("down", torch::nn::Linear(hidden, dim));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
    return forward_without_down_bias(x) + down->bias.to(x.scalar_type());
}

torch::Tensor MlpImpl::forward_without_down_bias(const torch::Tensor& x) {
    torch::Tensor u = torch::linear(x, up->weight);
    if (!up_lora.is_empty())
        u = u + up_lora(x);
    return down_of(u);
}

ProjectionAndInput MlpImpl::forward_keeping_input(const torch::Tensor& x) {
    if (!up_lora.is_empty())
        return {forward_without_down_bias(x), x};
    const ProjectionAndInput u = linear_keeping_input(x, up->weight);
    return {down_of(u.projection), u.input};
}

torch::Tensor MlpImpl::down_of(const torch::Tensor& u) {
    const torch::Tensor h = bias_gelu(u, up->bias, gelu == Gelu::kTanh);
    const torch::Tensor projected = torch::linear(h, down->weight);
    return down_lora.is_empty() ? projected : projected + down_lora(h);
}

void MlpImpl::add_lora(int64_t rank, double alpha) {
    const int64_t dim = up->options.in_features(), hidden = up->options.out_features();
    up_lora = register_module("up_lora", LoraAdapter(dim, hidden, rank, alpha));
    down_lora = register_module("down_lora", LoraAdapter(hidden, dim, rank, alpha));
}

BlockImpl::BlockImpl(int64_t dim, int64_t heads, int64_t hidden, NormPlacement norm_,
                     Causality causality, Gelu gelu, double layer_norm_eps)
    : norm(norm_) {
    auto ln_options = torch::nn::LayerNormOptions({dim}).eps(layer_norm_eps);
    ln1 = register_module("ln1", torch::nn::LayerNorm(ln_options));
    ln2 = register_module("ln2", torch::nn::LayerNorm(ln_options));
    attention = register_module("attention", SelfAttention(dim, heads, causality));
    mlp = register_module("mlp", Mlp(dim, hidden, gelu));
}

torch::Tensor Residual::value() const {
    torch::Tensor v = delta.defined() ? x + delta : x;
    return bias.defined() ? v + bias.to(v.scalar_type()) : v;
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
    return forward_residual({x, {}, {}}).value();
}

Residual BlockImpl::forward_residual(const Residual& in) {
    if (norm == NormPlacement::kPreNorm) {
        const NormedSum a = add_layer_norm(in.x, in.delta, in.bias, ln1);
        const NormedSum m = add_layer_norm(a.sum, attention->forward_without_out_bias(a.normed),
                                           attention->out->bias, ln2);
        return {m.sum, mlp->forward_without_down_bias(m.normed), mlp->down->bias};
    }
    TORCH_CHECK(!in.delta.defined() && !in.bias.defined(),
                "a post-norm block takes the residual stream with nothing pending");
    // Each sublayer's input goes on to the residual add through the branch's kept input, so
    // that its two gradients are added in the branch's first GEMM (linear_keeping_input).
    const ProjectionAndInput a = attention->forward_keeping_input(in.x);
    const torch::Tensor y = add_layer_norm(a.input, a.projection, attention->out->bias, ln1).normed;
    const ProjectionAndInput m = mlp->forward_keeping_input(y);
    return {add_layer_norm(m.input, m.projection, mlp->down->bias, ln2).normed, {}, {}};
}

torch::Tensor logits_with_aligned_rows(const torch::Tensor& x, const torch::Tensor& weight,
                                       const torch::Tensor& bias) {
    constexpr int64_t kRowMultiple = 64;  // 16-byte-aligned bf16 output rows
    const int64_t rows = weight.size(0);
    const int64_t padding = (rows + kRowMultiple - 1) / kRowMultiple * kRowMultiple - rows;
    if (padding == 0)
        return torch::linear(x, weight, bias);
    namespace F = torch::nn::functional;
    constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();
    const torch::Tensor padded_bias =
        F::pad(bias.defined() ? bias : torch::zeros({rows}, weight.options()),
               F::PadFuncOptions({0, padding}).value(kMinusInfinity));
    return torch::linear(x, F::pad(weight, F::PadFuncOptions({0, 0, 0, padding})), padded_bias);
}

void init_transformer_weights(torch::nn::Module& module, double std) {
    torch::NoGradGuard no_grad;
    for (auto& m : module.modules(/*include_self=*/false)) {
        if (auto* linear = m->as<torch::nn::LinearImpl>()) {
            linear->weight.normal_(0.0, std);
            if (linear->bias.defined())
                linear->bias.zero_();
        } else if (auto* embedding = m->as<torch::nn::EmbeddingImpl>()) {
            embedding->weight.normal_(0.0, std);
        }
    }
}

int64_t block_parameter_count(int64_t dim, int64_t hidden) {
    const int64_t norms = 2 * (2 * dim);
    const int64_t attention = (dim * 3 * dim + 3 * dim) + (dim * dim + dim);
    const int64_t mlp = (dim * hidden + hidden) + (hidden * dim + dim);
    return norms + attention + mlp;
}

}  // namespace migscope::workloads
