// AdamW on fp32 masters for bf16 parameters: the CUDA kernel where built, ATen's fused AdamW else.
#include "workloads/master_weight_adamw.h"

#include <cmath>

#ifdef MIGSCOPE_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>

#include "workloads/adamw_kernels.h"
#endif

namespace migscope::workloads {

MasterWeightAdamW::MasterWeightAdamW(std::vector<torch::Tensor> parameters, AdamWSettings settings)
    : parameters_(std::move(parameters)), settings_(settings) {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& p : parameters_) {
        TORCH_CHECK(p.scalar_type() == torch::kFloat32,
                    "master-weight AdamW takes fp32 parameters, got ", p.scalar_type());
        master_.push_back(p.detach().clone().contiguous());
        exp_avg_.push_back(torch::zeros_like(master_.back()));
        exp_avg_sq_.push_back(torch::zeros_like(master_.back()));
        p.set_data(p.detach().to(torch::kBFloat16).contiguous());
    }
}

void MasterWeightAdamW::zero_grad() {
    for (torch::Tensor& p : parameters_)
        p.mutable_grad() = torch::Tensor();
}

void MasterWeightAdamW::step() {
    torch::NoGradGuard no_grad;
    ++steps_;
    // ATen's fused AdamW works these out in fp32 from the step count; so does the kernel.
    const float beta1 = static_cast<float>(settings_.beta1);
    const float beta2 = static_cast<float>(settings_.beta2);
    const float step = static_cast<float>(steps_);
    const float lr = static_cast<float>(settings_.learning_rate);
    std::vector<torch::Tensor> masters, grads, exp_avg, exp_avg_sq, step_counts, params;
#ifdef MIGSCOPE_CUDA_KERNELS
    std::vector<kernels::AdamWTensor> on_gpu;
    std::vector<torch::Tensor> keep_alive;  // gradients made contiguous bf16 for the kernel
#endif
    for (size_t i = 0; i < parameters_.size(); ++i) {
        const torch::Tensor& grad = parameters_[i].grad();
        if (!grad.defined())
            continue;
#ifdef MIGSCOPE_CUDA_KERNELS
        if (grad.is_cuda()) {
            const torch::Tensor* g = &grad;
            if (grad.scalar_type() != torch::kBFloat16 || !grad.is_contiguous()) {
                keep_alive.push_back(grad.to(torch::kBFloat16).contiguous());
                g = &keep_alive.back();
            }
            on_gpu.push_back({master_[i].data_ptr<float>(), exp_avg_[i].data_ptr<float>(),
                              exp_avg_sq_[i].data_ptr<float>(),
                              reinterpret_cast<const uint16_t*>(g->data_ptr<at::BFloat16>()),
                              reinterpret_cast<uint16_t*>(parameters_[i].data_ptr<at::BFloat16>()),
                              master_[i].numel()});
            continue;
        }
#endif
        masters.push_back(master_[i]);
        grads.push_back(grad.to(torch::kFloat32));
        exp_avg.push_back(exp_avg_[i]);
        exp_avg_sq.push_back(exp_avg_sq_[i]);
        step_counts.push_back(torch::full({}, step, master_[i].options()));
        params.push_back(parameters_[i]);
    }
#ifdef MIGSCOPE_CUDA_KERNELS
    if (!on_gpu.empty()) {
        const int count = static_cast<int>(on_gpu.size());
        // The table goes to the device through pinned memory, which the caching host allocator
        // keeps until the copy has run; the device copy is freed in stream order after the kernel.
        torch::Tensor table =
            torch::empty({static_cast<int64_t>(kernels::adamw_table_bytes(count))},
                         torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
        const int64_t blocks = kernels::adamw_fill_table(on_gpu.data(), count, table.data_ptr());
        const torch::Tensor device_table = table.to(
            torch::TensorOptions().device(master_.front().device()), /*non_blocking=*/true);
        const kernels::AdamWStepScalars scalars{lr * static_cast<float>(settings_.weight_decay),
                                                beta1,
                                                beta2,
                                                static_cast<float>(settings_.eps),
                                                lr / (1.0f - std::pow(beta1, step)),
                                                std::sqrt(1.0f - std::pow(beta2, step))};
        kernels::adamw_bf16_master_step(device_table.data_ptr(), count, blocks, scalars,
                                        at::cuda::getCurrentCUDAStream().stream());
    }
#endif
    if (masters.empty())
        return;
    at::_fused_adamw_(masters, grads, exp_avg, exp_avg_sq, /*max_exp_avg_sqs=*/{}, step_counts,
                      settings_.learning_rate, settings_.beta1, settings_.beta2,
                      settings_.weight_decay, settings_.eps, /*amsgrad=*/false,
                      /*maximize=*/false);
    for (size_t i = 0; i < params.size(); ++i)
        params[i].copy_(masters[i]);
}

void MasterWeightAdamW::restore_master_weights() {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < parameters_.size(); ++i)
        parameters_[i].set_data(master_[i].clone());
}

}  // namespace migscope::workloads
