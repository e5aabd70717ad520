// Parameter counting and freezing helpers shared by the workloads.
#include "workloads/models/model.h"

#include "workloads/training/data.h"

namespace migscope::workloads {

Batch ImageClassifier::synthetic_batch(int64_t batch, torch::Device device) {
    auto f = torch::TensorOptions().device(device);
    torch::Tensor images = torch::randn({batch, 3, image_size_, image_size_}, f);
    if (channels_last_on_cuda_ && device.is_cuda()) {
        images = images.contiguous(torch::MemoryFormat::ChannelsLast);
    }
    return {images, torch::randint(0, classes_, {batch}, f.dtype(torch::kInt64))};
}

HostBatchMaker ImageClassifier::file_data(const std::string& path, int64_t batch) {
    if (const auto arrays = image_array_paths(path)) {
        auto file = std::make_shared<const ImageArrayFile>(arrays->first, arrays->second, classes_);
        return [file, batch](torch::Generator& rng) { return file->batch(batch, rng); };
    }
    auto file = std::make_shared<const Cifar10File>(path);
    return [file, batch](torch::Generator& rng) { return file->batch(batch, rng); };
}

Batch ImageClassifier::on_device(Batch batch) {
    if (batch.inputs.scalar_type() != torch::kUInt8)
        return batch;
    batch.inputs = resize_images(batch.inputs, image_size_);
    if (channels_last_on_cuda_ && batch.inputs.is_cuda()) {
        batch.inputs = batch.inputs.contiguous(torch::MemoryFormat::ChannelsLast);
    }
    return batch;
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
