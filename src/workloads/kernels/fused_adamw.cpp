// Fused AdamW: keeps the moments and step counts as tensors on the parameters' device and hands
// them all to one kernel.
#include "workloads/kernels/fused_adamw.h"

namespace migscope::workloads {

FusedAdamW::FusedAdamW(std::vector<torch::Tensor> parameters, AdamWSettings settings)
    : parameters_(std::move(parameters)), settings_(settings) {
    for (const torch::Tensor& p : parameters_) {
        exp_avg_.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        exp_avg_sq_.push_back(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        steps_.push_back(torch::zeros({}, p.options().dtype(torch::kFloat32)));
    }
}

void FusedAdamW::zero_grad() {
    for (torch::Tensor& p : parameters_)
        p.mutable_grad() = torch::Tensor();
}

void FusedAdamW::step() {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> params, grads, exp_avg, exp_avg_sq, steps;
    for (size_t i = 0; i < parameters_.size(); ++i) {
        if (!parameters_[i].grad().defined())
            continue;
        params.push_back(parameters_[i]);
        grads.push_back(parameters_[i].grad());
        exp_avg.push_back(exp_avg_[i]);
        exp_avg_sq.push_back(exp_avg_sq_[i]);
        steps.push_back(steps_[i]);
    }
    if (params.empty())
        return;
    at::_foreach_add_(steps, 1);  // the kernel reads the step count, the caller advances it
    at::_fused_adamw_(params, grads, exp_avg, exp_avg_sq, /*max_exp_avg_sqs=*/{}, steps,
                      settings_.learning_rate, settings_.beta1, settings_.beta2,
                      settings_.weight_decay, settings_.eps, /*amsgrad=*/false,
                      /*maximize=*/false);
}

}  // namespace migscope::workloads
