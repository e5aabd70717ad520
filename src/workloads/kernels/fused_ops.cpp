// Fused transformer operations: autograd functions around transformer_kernels.cu on the GPU, and
// the composition of ATen operations they replace everywhere else.
#include "workloads/kernels/fused_ops.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>

#include "workloads/models/transformer.h"

#ifdef MIGSCOPE_CUDA_KERNELS
#include "workloads/kernels/kernel_tensors.h"
#include "workloads/kernels/transformer_kernels.h"
#endif

namespace migscope::workloads {
namespace {

std::atomic<bool> g_fused_kernels_enabled{true};

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// x's gradient d_out W (d_out [rows, out], weight [out, in]) plus `kept`, the gradient of the
// output that passed x on (undefined where nothing read it), added by the GEMM (beta 1): in place
// where nothing else holds that gradient, which is how autograd hands it over (its other holders
// have run); else as a sum of its own.
torch::Tensor input_gradient(torch::Tensor kept, const torch::Tensor& d_out,
                             const torch::Tensor& weight, at::IntArrayRef sizes) {
    if (!kept.defined())
        return d_out.mm(weight).view(sizes);
    const bool alone = kept.use_count() == 1 && kept.storage().use_count() == 1;
    if (alone && kept.is_contiguous() && kept.scalar_type() == d_out.scalar_type()) {
        kept.view({d_out.size(0), weight.size(1)}).addmm_(d_out, weight);
        return kept;
    }
    return kept + d_out.mm(weight).view(sizes).to(kept.scalar_type());
}

// linear_keeping_input: ATen's GEMMs, on any device. Under autocast the projection may be in
// another dtype than x and the weight; the backward computes in the projection's.
struct LinearKeepingInputFunction : torch::autograd::Function<LinearKeepingInputFunction> {
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& weight) {
        ctx->set_materialize_grads(false);
        ctx->save_for_backward({x, weight});
        return {torch::linear(x, weight), x};
    }
    // grads by reference: the kept input's gradient is moved out, so that it can be added in place.
    static variable_list backward(AutogradContext* ctx, variable_list& grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &weight = saved[1];
        if (!grads[0].defined())
            return {grads[1], torch::Tensor()};
        const torch::Tensor d_out = grads[0].reshape({-1, weight.size(0)});
        const c10::ScalarType dtype = d_out.scalar_type();
        const torch::Tensor d_weight =
            ctx->needs_input_grad(1)
                ? d_out.t().mm(x.reshape({-1, x.size(-1)}).to(dtype)).to(weight.scalar_type())
                : torch::Tensor();
        const torch::Tensor d_x =
            ctx->needs_input_grad(0)
                ? input_gradient(std::move(grads[1]), d_out, weight.to(dtype), x.sizes())
                : torch::Tensor();
        return {d_x, d_weight};
    }
};

#ifdef MIGSCOPE_CUDA_KERNELS
using kernels::bf16_bits;
using kernels::Bf16Bits;
using kernels::current_stream;

// The kernels take bf16 CUDA tensors whose rows (`width` elements) are whole 16-byte vectors,
// starting 16-byte aligned (a non-contiguous tensor is copied into a fresh, aligned one).
bool kernels_apply(std::initializer_list<torch::Tensor> tensors, int64_t width) {
    if (!g_fused_kernels_enabled.load() || width % 8 != 0)
        return false;
    for (const torch::Tensor& t : tensors) {
        if (!t.defined() || !t.is_cuda() || t.scalar_type() != torch::kBFloat16)
            return false;
        if (t.is_contiguous() && !kernels::aligned16(t))
            return false;
    }
    return true;
}

torch::Tensor float_buffer(const torch::Tensor& like, at::IntArrayRef sizes) {
    return torch::empty(sizes, like.options().dtype(torch::kFloat32));
}

struct AddLayerNormFunction : torch::autograd::Function<AddLayerNormFunction> {
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& delta, const torch::Tensor& bias,
                                 const torch::Tensor& gamma, const torch::Tensor& beta,
                                 double eps) {
        const int64_t cols = x.size(-1), rows = x.numel() / cols;
        const torch::Tensor xc = x.contiguous(), dc = delta.contiguous();
        torch::Tensor sum = torch::empty_like(xc), normed = torch::empty_like(xc);
        torch::Tensor mean = float_buffer(x, {rows}), rstd = float_buffer(x, {rows});
        kernels::add_layer_norm_forward(bf16_bits(xc), bf16_bits(dc), bf16_bits(bias), bf16_bits(gamma), bf16_bits(beta),
                                        static_cast<float>(eps), rows, cols, bf16_bits(sum),
                                        bf16_bits(normed), mean.data_ptr<float>(),
                                        rstd.data_ptr<float>(), current_stream());
        ctx->save_for_backward({sum, mean, rstd, gamma});
        ctx->saved_data["has_bias"] = bias.defined();
        return {sum, normed};
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &sum = saved[0], &mean = saved[1], &rstd = saved[2], &gamma = saved[3];
        const int64_t cols = sum.size(-1), rows = sum.numel() / cols;
        const torch::Tensor d_sum = grads[0].defined() ? grads[0].contiguous() : torch::Tensor();
        const torch::Tensor d_normed =
            grads[1].defined() ? grads[1].contiguous() : torch::zeros_like(sum);
        torch::Tensor d_total = torch::empty_like(sum);
        const int64_t row_blocks = kernels::layer_norm_row_blocks(rows, cols);
        const torch::Tensor partials = float_buffer(sum, {row_blocks, 3, cols});
        kernels::add_layer_norm_backward(
            bf16_bits(d_normed), bf16_bits(d_sum), bf16_bits(sum), mean.data_ptr<float>(), rstd.data_ptr<float>(),
            bf16_bits(gamma), rows, cols, bf16_bits(d_total), partials.data_ptr<float>(), current_stream());
        torch::Tensor d_gamma = torch::empty_like(gamma), d_beta = torch::empty_like(gamma),
                      d_bias = torch::empty_like(gamma);
        Bf16Bits* const outputs[3] = {bf16_bits(d_gamma), bf16_bits(d_beta), bf16_bits(d_bias)};
        kernels::column_sums_finish(partials.data_ptr<float>(), row_blocks, 3, cols, outputs,
                                    current_stream());
        const bool has_bias = ctx->saved_data["has_bias"].toBool();
        return {d_total, d_total, has_bias ? d_bias : torch::Tensor(),
                d_gamma, d_beta,  torch::Tensor()};
    }
};

struct BiasGeluFunction : torch::autograd::Function<BiasGeluFunction> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& u,
                                 const torch::Tensor& bias, bool tanh_form) {
        const torch::Tensor uc = u.contiguous();
        const int64_t cols = u.size(-1), rows = u.numel() / cols;
        torch::Tensor h = torch::empty_like(uc);
        kernels::bias_gelu_forward(bf16_bits(uc), bf16_bits(bias), rows, cols, tanh_form, bf16_bits(h), current_stream());
        ctx->save_for_backward({uc, bias});
        ctx->saved_data["tanh"] = tanh_form;
        return h;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &u = saved[0], &bias = saved[1];
        const int64_t cols = u.size(-1), rows = u.numel() / cols;
        const torch::Tensor dh = grads[0].contiguous();
        torch::Tensor du = torch::empty_like(u), d_bias = torch::empty_like(bias);
        const int64_t row_blocks = kernels::column_sum_row_blocks(rows);
        const torch::Tensor partials = float_buffer(u, {row_blocks, cols});
        kernels::bias_gelu_backward(bf16_bits(dh), bf16_bits(u), bf16_bits(bias), rows, cols,
                                    ctx->saved_data["tanh"].toBool(), bf16_bits(du),
                                    partials.data_ptr<float>(), current_stream());
        Bf16Bits* const outputs[3] = {bf16_bits(d_bias), nullptr, nullptr};
        kernels::column_sums_finish(partials.data_ptr<float>(), row_blocks, 1, cols, outputs,
                                    current_stream());
        return {du, d_bias, torch::Tensor()};
    }
};

// Whether the kernel can read g as [batch, heads, tokens, head_dim] in 16-byte vectors (its dtype
// is the bf16 of the views it is the gradient of).
bool gatherable(const torch::Tensor& g) {
    if (g.stride(3) != 1)
        return false;
    for (int i = 0; i < 3; ++i) {
        if (g.stride(i) % 8 != 0)
            return false;
    }
    return reinterpret_cast<uintptr_t>(g.data_ptr()) % 16 == 0;
}

// q, k, v and x itself (qkv_heads_keeping_input; its gradient added as input_gradient does).
struct QkvHeadsFunction : torch::autograd::Function<QkvHeadsFunction> {
    static variable_list forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& weight, const torch::Tensor& bias,
                                 int64_t heads) {
        const int64_t b = x.size(0), t = x.size(1), d = weight.size(0) / 3;
        const torch::Tensor qkv = torch::linear(x, weight, bias);
        ctx->set_materialize_grads(false);
        ctx->save_for_backward({x, weight});
        const auto parts = qkv.view({b, t, 3, heads, d / heads}).permute({2, 0, 3, 1, 4});
        return {parts[0], parts[1], parts[2], x};
    }
    // grads by reference: the kept input's gradient is moved out, so that it can be added in place.
    static variable_list backward(AutogradContext* ctx, variable_list& grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &weight = saved[1];
        const int64_t batch = x.size(0), tokens = x.size(1), width = weight.size(0);
        const int64_t rows = batch * tokens;
        // The three gradients as the kernel reads them: a missing one as zeros, a layout it does
        // not read copied into a contiguous one.
        const torch::Tensor& any = grads[0].defined()   ? grads[0]
                                   : grads[1].defined() ? grads[1]
                                                        : grads[2];
        kernels::HeadsGradient parts[3];
        std::array<torch::Tensor, 3> readable;
        for (int i = 0; i < 3; ++i) {
            readable[i] = grads[i].defined() ? grads[i] : torch::zeros_like(any);
            if (!gatherable(readable[i]))
                readable[i] = readable[i].contiguous();
            parts[i] = {bf16_bits(readable[i]), readable[i].stride(0), readable[i].stride(1),
                        readable[i].stride(2)};
        }
        const int64_t heads = any.size(1), head_dim = any.size(3);
        const torch::Tensor dqkv = torch::empty({rows, width}, x.options());
        torch::Tensor d_bias = torch::empty({width}, x.options());
        const int64_t row_blocks = kernels::column_sum_row_blocks(rows);
        const torch::Tensor partials = float_buffer(x, {row_blocks, width});
        kernels::gather_qkv_gradient(parts, batch, heads, tokens, head_dim, bf16_bits(dqkv),
                                     partials.data_ptr<float>(), current_stream());
        Bf16Bits* const outputs[3] = {bf16_bits(d_bias), nullptr, nullptr};
        kernels::column_sums_finish(partials.data_ptr<float>(), row_blocks, 1, width, outputs,
                                    current_stream());
        const torch::Tensor d_weight = dqkv.t().mm(x.reshape({rows, x.size(2)}));
        const torch::Tensor d_x = input_gradient(std::move(grads[3]), dqkv, weight, x.sizes());
        return {d_x, d_weight, d_bias, torch::Tensor()};
    }
};

struct CrossEntropyFunction : torch::autograd::Function<CrossEntropyFunction> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits,
                                 const torch::Tensor& targets) {
        const torch::Tensor lc = logits.contiguous(), tc = targets.contiguous();
        const int64_t rows = logits.size(0), cols = logits.size(1);
        torch::Tensor loss = float_buffer(logits, {rows}), lse = float_buffer(logits, {rows});
        kernels::cross_entropy_forward(bf16_bits(lc), tc.data_ptr<int64_t>(), rows, cols,
                                       loss.data_ptr<float>(), lse.data_ptr<float>(), current_stream());
        ctx->save_for_backward({lc, tc, lse});
        return loss.mean();
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &logits = saved[0], &targets = saved[1], &lse = saved[2];
        const int64_t rows = logits.size(0), cols = logits.size(1);
        const torch::Tensor grad = grads[0].to(torch::kFloat32).contiguous();
        torch::Tensor d_logits = torch::empty_like(logits);
        kernels::cross_entropy_backward(bf16_bits(logits), targets.data_ptr<int64_t>(),
                                        lse.data_ptr<float>(), grad.data_ptr<float>(),
                                        1.0f / static_cast<float>(rows), rows, cols, bf16_bits(d_logits),
                                        current_stream());
        return {d_logits, torch::Tensor()};
    }
};
#else
bool kernels_apply(std::initializer_list<torch::Tensor>, int64_t) {
    return false;
}
#endif

torch::Tensor to_dtype_of(const torch::Tensor& t, const torch::Tensor& like) {
    return t.defined() ? t.to(like.scalar_type()) : t;
}

}  // namespace

bool fused_kernels_enabled() {
    return g_fused_kernels_enabled.load();
}

void set_fused_kernels_enabled(bool enabled) {
    g_fused_kernels_enabled.store(enabled);
}

NormedSum add_layer_norm(const torch::Tensor& x, const torch::Tensor& delta,
                         const torch::Tensor& bias, const torch::nn::LayerNorm& norm) {
    if (!delta.defined() && !bias.defined())
        return {x, layer_norm_in_input_dtype(norm, x)};
    const torch::Tensor gamma = to_dtype_of(norm->weight, x), beta = to_dtype_of(norm->bias, x);
    const torch::Tensor bias_x = to_dtype_of(bias, x);
#ifdef MIGSCOPE_CUDA_KERNELS
    if (delta.defined() && kernels_apply({x, delta, gamma, beta}, x.size(-1)) &&
        delta.sizes() == x.sizes() && x.size(-1) <= kernels::kLayerNormMaxCols) {
        const variable_list out =
            AddLayerNormFunction::apply(x, delta, bias_x, gamma, beta, norm->options.eps());
        return {out[0], out[1]};
    }
#endif
    const torch::Tensor sum = Residual{x, delta, bias_x}.value();
    return {sum, layer_norm_in_input_dtype(norm, sum)};
}

torch::Tensor bias_gelu(const torch::Tensor& u, const torch::Tensor& bias, bool tanh_form) {
    const torch::Tensor bias_u = to_dtype_of(bias, u);
#ifdef MIGSCOPE_CUDA_KERNELS
    if (kernels_apply({u, bias_u}, u.size(-1)))
        return BiasGeluFunction::apply(u, bias_u, tanh_form);
#endif
    return torch::gelu(u + bias_u, tanh_form ? "tanh" : "none");
}

ProjectionAndInput linear_keeping_input(const torch::Tensor& x, const torch::Tensor& weight) {
    if (!g_fused_kernels_enabled.load())
        return {torch::linear(x, weight), x};
    const variable_list out = LinearKeepingInputFunction::apply(x, weight);
    return {out[0], out[1]};
}

HeadsAndInput qkv_heads_keeping_input(const torch::Tensor& x, const torch::Tensor& weight,
                                      const torch::Tensor& bias, int64_t heads) {
#ifdef MIGSCOPE_CUDA_KERNELS
    if (x.dim() == 3 && kernels_apply({x, weight, bias}, (weight.size(0) / 3) / heads)) {
        const variable_list parts = QkvHeadsFunction::apply(x, weight, bias, heads);
        return {{parts[0], parts[1], parts[2]}, parts[3]};
    }
#endif
    return {split_heads(torch::linear(x, weight, bias), heads), x};
}

std::array<torch::Tensor, 3> qkv_heads(const torch::Tensor& x, const torch::Tensor& weight,
                                       const torch::Tensor& bias, int64_t heads) {
    return qkv_heads_keeping_input(x, weight, bias, heads).heads;
}

torch::Tensor cross_entropy(const torch::Tensor& logits, const torch::Tensor& targets) {
#ifdef MIGSCOPE_CUDA_KERNELS
    if (logits.dim() == 2 && targets.scalar_type() == torch::kInt64 &&
        kernels_apply({logits}, logits.size(1)))
        return CrossEntropyFunction::apply(logits, targets);
#endif
    return torch::cross_entropy_loss(logits, targets);
}

}  // namespace migscope::workloads
