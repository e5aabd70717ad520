// AdamW on fp32 masters for bf16 parameters: the CUDA kernel where built, ATen's fused AdamW else.
#include "workloads/training/master_weight_adamw.h"

#ifdef MIGSCOPE_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include "workloads/kernels/adamw_kernels.h"
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
    if (!master_.empty())
        step_count_ = torch::zeros({}, master_.front().options());
}

void MasterWeightAdamW::zero_grad() {
    for (torch::Tensor& p : parameters_)
        p.mutable_grad() = torch::Tensor();
}

void MasterWeightAdamW::step() {
    // Long as one step's two paths under the build's #ifdef (the CUDA kernel's table and launch,
    // ATen's fused AdamW): the hot path of every built-in job, split only where its GPU test
    // (master_weight_adamw_gpu_test.cpp) runs.
    torch::NoGradGuard no_grad;
    step_count_.add_(1);  // on the device, in stream order: what a replayed graph advances
    std::vector<torch::Tensor> masters, grads, exp_avg, exp_avg_sq, params;
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
        params.push_back(parameters_[i]);
    }
#ifdef MIGSCOPE_CUDA_KERNELS
    if (!on_gpu.empty()) {
        const int count = static_cast<int>(on_gpu.size());
        const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
        std::vector<const void*> gradients;
        for (const kernels::AdamWTensor& t : on_gpu)
            gradients.push_back(t.grad);
        if (gradients != table_gradients_) {
            const auto table_bytes = [](size_t n) {
                return static_cast<int64_t>(kernels::adamw_table_bytes(static_cast<int>(n)));
            };
            if (!host_table_.defined()) {
                const auto bytes = table_bytes(parameters_.size());
                host_table_ = torch::empty(
                    {bytes}, torch::TensorOptions().dtype(torch::kUInt8).pinned_memory(true));
                device_table_ =
                    torch::empty({bytes}, master_.front().options().dtype(torch::kUInt8));
            }
            // The pinned table is rewritten only after the copy of its last version has run.
            // Outside a capture this waits for the stream; a capture comes after steps that the
            // trainer waited for, and becomes a copy node that rereads this memory on every replay.
            cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
            C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
            if (capture == cudaStreamCaptureStatusNone)
                C10_CUDA_CHECK(cudaStreamSynchronize(stream));
            table_blocks_ = kernels::adamw_fill_table(on_gpu.data(), count, host_table_.data_ptr());
            C10_CUDA_CHECK(cudaMemcpyAsync(device_table_.data_ptr(), host_table_.data_ptr(),
                                           static_cast<size_t>(table_bytes(on_gpu.size())),
                                           cudaMemcpyHostToDevice, stream));
            table_gradients_ = std::move(gradients);
        }
        const float lr = static_cast<float>(settings_.learning_rate);
        const kernels::AdamWStepScalars scalars{lr,
                                                lr * static_cast<float>(settings_.weight_decay),
                                                static_cast<float>(settings_.beta1),
                                                static_cast<float>(settings_.beta2),
                                                static_cast<float>(settings_.eps),
                                                step_count_.data_ptr<float>()};
        kernels::adamw_bf16_master_step(device_table_.data_ptr(), count, table_blocks_, scalars,
                                        stream);
    }
#endif
    if (masters.empty())
        return;
    // ATen's kernel reads each tensor's step count; all share the one advanced above.
    const std::vector<torch::Tensor> step_counts(masters.size(), step_count_);
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
