// Batch norm + residual add + ReLU: an autograd function around batch_norm_kernels.cu on the GPU,
// BatchNorm2d's forward and ATen's add and ReLU everywhere else.
#include "workloads/kernels/fused_batch_norm.h"

#include <cstdint>

#include "workloads/kernels/fused_ops.h"

#ifdef MIGSCOPE_CUDA_KERNELS
#include "workloads/kernels/kernel_tensors.h"
#include "workloads/kernels/batch_norm_kernels.h"
#endif

namespace migscope::workloads {
namespace {

#ifdef MIGSCOPE_CUDA_KERNELS
using kernels::aligned16;
using kernels::bf16_bits;
using kernels::Bf16Bits;
using kernels::current_stream;
using kernels::ReluMask;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;


float* floats(const torch::Tensor& t) {
    return t.defined() ? t.data_ptr<float>() : nullptr;
}


// A bf16 CUDA activation the kernels read as rows of channels: channels-last, 16-byte aligned.
bool rows_of_channels(const torch::Tensor& t) {
    return t.is_cuda() && t.scalar_type() == torch::kBFloat16 && t.dim() == 4 &&
           t.is_contiguous(at::MemoryFormat::ChannelsLast) && aligned16(t);
}

bool fp32_vector(const torch::Tensor& t, int64_t size) {
    return t.defined() && t.is_cuda() && t.scalar_type() == torch::kFloat32 && t.dim() == 1 &&
           t.size(0) == size && t.is_contiguous() && aligned16(t);
}

bool kernels_apply(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& norm,
                   const torch::Tensor& residual) {
    const auto& options = norm.options;
    if (!fused_kernels_enabled() || !norm.is_training() || !options.affine() ||
        !options.track_running_stats() || !options.momentum().has_value())
        return false;
    if (!rows_of_channels(x) ||
        (residual.defined() && (!rows_of_channels(residual) || residual.sizes() != x.sizes())))
        return false;
    const int64_t channels = x.size(1);
    const torch::Tensor& count = norm.num_batches_tracked;
    return kernels::batch_norm_channels_supported(channels) && x.numel() / channels > 1 &&
           fp32_vector(norm.weight, channels) && fp32_vector(norm.bias, channels) &&
           fp32_vector(norm.running_mean, channels) && fp32_vector(norm.running_var, channels) &&
           count.defined() && count.is_cuda() && count.scalar_type() == torch::kInt64;
}

// A gradient as the kernels read it (a copy when its layout or alignment differs).
torch::Tensor readable(const torch::Tensor& g) {
    if (g.is_contiguous(at::MemoryFormat::ChannelsLast) && aligned16(g))
        return g;
    return g.clone(at::MemoryFormat::ChannelsLast);
}

torch::Tensor float_buffer(const torch::Tensor& like, at::IntArrayRef sizes) {
    return torch::empty(sizes, like.options().dtype(torch::kFloat32));
}


// `residual` is an empty tensor when there is none (a custom function's inputs must be defined).
struct BatchNormAddReluFunction : torch::autograd::Function<BatchNormAddReluFunction> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                                 const torch::Tensor& residual, const torch::Tensor& gamma,
                                 const torch::Tensor& beta, const torch::Tensor& running_mean,
                                 const torch::Tensor& running_var, const torch::Tensor& count,
                                 double eps, double momentum, bool relu) {
        const int64_t channels = x.size(1), rows = x.numel() / channels;
        const torch::Tensor partials =
            float_buffer(x, {kernels::batch_norm_partials_floats(rows, channels)});
        const torch::Tensor stats = float_buffer(x, {4, channels});
        kernels::batch_norm_statistics(
            bf16_bits(x), rows, channels, floats(gamma), floats(beta), static_cast<float>(eps),
            static_cast<float>(momentum), floats(running_mean), floats(running_var),
            count.data_ptr<int64_t>(), floats(partials), floats(stats), current_stream());
        torch::Tensor y = torch::empty_like(x);
        const bool has_residual = residual.numel() != 0;
        kernels::batch_norm_apply(bf16_bits(x), has_residual ? bf16_bits(residual) : nullptr, floats(stats),
                                  relu, rows, channels, bf16_bits(y), current_stream());
        // With a residual, the ReLU's mask comes from y (the next layer keeps y anyway); without,
        // it is recomputed from x.
        const bool mask_from_output = relu && has_residual;
        ctx->save_for_backward({x, stats, gamma, mask_from_output ? y : torch::Tensor()});
        ctx->saved_data["relu"] = relu;
        ctx->saved_data["residual"] = has_residual;
        return y;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const torch::Tensor &x = saved[0], &stats = saved[1], &gamma = saved[2], &y = saved[3];
        const bool relu = ctx->saved_data["relu"].toBool();
        const bool has_residual = ctx->saved_data["residual"].toBool();
        const int64_t channels = x.size(1), rows = x.numel() / channels;
        const torch::Tensor dy = readable(grads[0]);
        const ReluMask mask = !relu          ? ReluMask::kNone
                              : has_residual ? ReluMask::kFromOutput
                                             : ReluMask::kFromInput;
        const torch::Tensor masked =
            mask == ReluMask::kFromOutput ? torch::empty_like(x) : torch::Tensor();
        const torch::Tensor dx = ctx->needs_input_grad(0) ? torch::empty_like(x) : torch::Tensor();
        torch::Tensor d_gamma = torch::empty_like(gamma), d_beta = torch::empty_like(gamma);
        const torch::Tensor partials =
            float_buffer(x, {kernels::batch_norm_partials_floats(rows, channels)});
        const torch::Tensor coefficients = float_buffer(x, {3, channels});
        kernels::batch_norm_backward(bf16_bits(dy), bf16_bits(x), bf16_bits(y), floats(stats), floats(gamma), mask,
                                     rows, channels, bf16_bits(masked), bf16_bits(dx), floats(d_gamma),
                                     floats(d_beta), floats(partials), floats(coefficients),
                                     current_stream());
        const torch::Tensor d_residual =
            !has_residual ? torch::Tensor() : (masked.defined() ? masked : dy);
        return {dx, d_residual, d_gamma, d_beta, {}, {}, {}, {}, {}, {}};
    }
};
#endif

}  // namespace

torch::Tensor batch_norm_add_relu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& norm,
                                  const torch::Tensor& residual, bool relu) {
#ifdef MIGSCOPE_CUDA_KERNELS
    if (kernels_apply(x, norm, residual)) {
        return BatchNormAddReluFunction::apply(
            x, residual.defined() ? residual : torch::empty({0}, x.options()), norm.weight,
            norm.bias, norm.running_mean, norm.running_var, norm.num_batches_tracked,
            norm.options.eps(), *norm.options.momentum(), relu);
    }
#endif
    torch::Tensor y = norm.forward(x);
    if (residual.defined())
        y = y + residual;
    return relu ? torch::relu(y) : y;
}

}  // namespace migscope::workloads
