// Parameter counting and freezing helpers shared by the workloads.
#include "workloads/model.h"

namespace migscope::workloads {

Batch ImageClassifier::synthetic_batch(int64_t batch, torch::Device device) {
    auto f = torch::TensorOptions().device(device);
    torch::Tensor images = torch::randn({batch, 3, image_size_, image_size_}, f);
    if (channels_last_on_cuda_ && device.is_cuda()) {
        images = images.contiguous(torch::MemoryFormat::ChannelsLast);
    }
    return {images, torch::randint(0, classes_, {batch}, f.dtype(torch::kInt64))};
}

void ImageClassifier::to_device(torch::Device device) {
    module().to(device);
    if (!(channels_last_on_cuda_ && device.is_cuda()))
        return;
    torch::NoGradGuard no_grad;
    for (auto& p : module().parameters()) {
        if (p.dim() == 4)
            p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
    }
}

torch::Tensor ImageClassifier::loss(const Batch& batch) {
    return torch::cross_entropy_loss(logits(batch.inputs), batch.targets);
}

int64_t parameter_count(torch::nn::Module& module) {
    int64_t n = 0;
    for (const auto& p : module.parameters())
        n += p.numel();
    return n;
}

int64_t trainable_parameter_count(torch::nn::Module& module) {
    int64_t n = 0;
    for (const auto& p : module.parameters()) {
        if (p.requires_grad())
            n += p.numel();
    }
    return n;
}

void freeze(torch::nn::Module& module) {
    for (auto& p : module.parameters())
        p.set_requires_grad(false);
}

void unfreeze(torch::nn::Module& module) {
    for (auto& p : module.parameters())
        p.set_requires_grad(true);
}

}  // namespace migscope::workloads
