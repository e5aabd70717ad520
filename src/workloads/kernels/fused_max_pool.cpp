// 3x3 stride-2 max pooling: an autograd function around max_pool_kernels.cu on the GPU, ATen's
// max_pool2d everywhere else.
#include "workloads/kernels/fused_max_pool.h"

#include <cstdint>

#include "workloads/kernels/fused_ops.h"

#ifdef MIGSCOPE_CUDA_KERNELS
#include "workloads/kernels/kernel_tensors.h"
#include "workloads/kernels/max_pool_kernels.h"
#endif

namespace migscope::workloads {
namespace {

#ifdef MIGSCOPE_CUDA_KERNELS
using kernels::aligned16;
using kernels::bf16_bits;
using kernels::Bf16Bits;
using kernels::current_stream;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;



// A bf16 CUDA activation the kernels read: channels-last, 16-byte aligned, 8-channel vectors.
bool kernels_apply(const torch::Tensor& t) {
    return fused_kernels_enabled() && t.is_cuda() && t.scalar_type() == torch::kBFloat16 &&
           t.dim() == 4 && t.numel() > 0 && t.is_contiguous(at::MemoryFormat::ChannelsLast) &&
           aligned16(t) && kernels::max_pool_channels_supported(t.size(1));
}


struct MaxPoolFunction : torch::autograd::Function<MaxPoolFunction> {
    static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x) {
        const int64_t batch = x.size(0), channels = x.size(1), height = x.size(2),
                      width = x.size(3);
        const int64_t out_height = kernels::max_pool_output_size(height),
                      out_width = kernels::max_pool_output_size(width);
        torch::Tensor y = torch::empty({batch, channels, out_height, out_width},
                                       x.options().memory_format(at::MemoryFormat::ChannelsLast));
        // [n][oh][ow][c], as y's bytes are laid out.
        torch::Tensor argmax =
            torch::empty({batch, out_height, out_width, channels}, x.options().dtype(torch::kByte));
        kernels::max_pool_forward(bf16_bits(x), batch, height, width, channels, bf16_bits(y),
                                  argmax.data_ptr<uint8_t>(), current_stream());
        ctx->save_for_backward({argmax});
        ctx->saved_data["height"] = height;
        ctx->saved_data["width"] = width;
        return y;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const torch::Tensor argmax = ctx->get_saved_variables()[0];
        const int64_t height = ctx->saved_data["height"].toInt(),
                      width = ctx->saved_data["width"].toInt();
        const int64_t batch = argmax.size(0), channels = argmax.size(3);
        torch::Tensor dy = grads[0];
        if (!dy.is_contiguous(at::MemoryFormat::ChannelsLast) || !aligned16(dy))
            dy = dy.clone(at::MemoryFormat::ChannelsLast);
        torch::Tensor dx = torch::empty({batch, channels, height, width},
                                        dy.options().memory_format(at::MemoryFormat::ChannelsLast));
        kernels::max_pool_backward(bf16_bits(dy), argmax.data_ptr<uint8_t>(), batch, height, width,
                                   channels, bf16_bits(dx), current_stream());
        return {dx};
    }
};
#endif

}  // namespace

torch::Tensor max_pool_3x3_stride2(const torch::Tensor& x) {
#ifdef MIGSCOPE_CUDA_KERNELS
    if (kernels_apply(x))
        return MaxPoolFunction::apply(x);
#endif
    return torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
}

}  // namespace migscope::workloads
