// The training step.
#include "workloads/trainer.h"

#include <ATen/autocast_mode.h>

namespace migscope::workloads {
namespace {

// Enables bf16 autocast on CUDA for one scope, like Python's `torch.autocast("cuda",
// torch.bfloat16)`.
class CudaBf16Autocast {
  public:
    CudaBf16Autocast() {
        at::autocast::set_autocast_enabled(at::kCUDA, true);
        at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
        at::autocast::increment_nesting();
    }
    ~CudaBf16Autocast() {
        if (at::autocast::decrement_nesting() == 0)
            at::autocast::clear_cache();
        at::autocast::set_autocast_enabled(at::kCUDA, false);
    }
};

}  // namespace

Trainer::Trainer(Model& model, TrainerOptions options)
    : model_(model),
      options_(options),
      precision_(options.device.is_cuda() ? Precision::kBf16Autocast : Precision::kFp32) {
    model_.to_device(options_.device);
    model_.module().train();
    std::vector<torch::Tensor> trainable;
    for (const auto& p : model_.module().parameters()) {
        if (p.requires_grad())
            trainable.push_back(p);
    }
    TORCH_CHECK(!trainable.empty(), "the model has no trainable parameters");
    optimizer_ = std::make_unique<FusedAdamW>(
        trainable, AdamWSettings{options_.learning_rate, options_.weight_decay});
}

double Trainer::step(const Batch& batch) {
    optimizer_->zero_grad();
    torch::Tensor loss;
    if (precision_ == Precision::kBf16Autocast) {
        CudaBf16Autocast autocast;
        loss = model_.loss(batch);
    } else {
        loss = model_.loss(batch);
    }
    loss.backward();
    optimizer_->step();
    return loss.item<double>();
}

}  // namespace migscope::workloads
