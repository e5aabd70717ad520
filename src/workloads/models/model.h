// The interface every built-in training workload implements: its network, synthetic data, loss,
// work unit and FLOP count, and how it turns into a fine-tuning job.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>

namespace migscope::workloads {

enum class Mode { kTrain, kFinetune };

struct FinetuneOptions {
    int64_t lora_rank = 8;  // GPT-2: rank of the LoRA adapters
    double lora_alpha = 16;
};

struct Batch {
    torch::Tensor inputs;   // images [B,3,H,W] (float, or uint8 from files), or token ids [B,T]
    torch::Tensor targets;  // class ids [B], or token ids [B,T] with -100 where not scored
};

// Makes one batch of real data in host memory; runs on the loader thread.
using HostBatchMaker = std::function<Batch(torch::Generator& rng)>;

class Model {
  public:
    virtual ~Model() = default;
    virtual torch::nn::Module& module() = 0;
    // Moves the parameters to the device (and into the memory layout the model runs fastest in).
    virtual void to_device(torch::Device device) { module().to(device); }
    // A batch of random data of the real shapes and value ranges, made on `device`.
    virtual Batch synthetic_batch(int64_t batch, torch::Device device) = 0;
    // Opens and checks a data file (llm.c tokens for the language models, CIFAR-10 for the image
    // models); throws std::invalid_argument with the reason before any training starts.
    virtual HostBatchMaker file_data(const std::string& path, int64_t batch) = 0;
    // Last preparation of a batch that arrived on the device (e.g. resizing file images).
    virtual Batch on_device(Batch batch) { return batch; }
    virtual torch::Tensor loss(const Batch& batch) = 0;
    virtual int64_t items_per_sample() const = 0;  // 1 image, or the sequence length in tokens
    virtual std::string item_unit() const = 0;     // "images" or "tokens"
    // Dense FLOPs of one training step's forward and backward per sample, in train mode;
    // nullopt where no analytical count is implemented (then MFU is left empty).
    virtual std::optional<double> train_flops_per_sample() const = 0;
    // CNN/ViT/BERT: freezes everything but the last block and a newly initialised head. GPT-2:
    // freezes the whole base and adds LoRA adapters to the attention and MLP projections.
    virtual void prepare_finetune(const FinetuneOptions& options) = 0;
    // Whether the model trains on CUDA with bf16 parameters and fp32 masters in the optimizer
    // (MasterWeightAdamW) rather than fp32 parameters under autocast: the transformers do (their
    // weights' casts cost ~5 % of a step); the CNNs do not (batch norm keeps fp32 parameters).
    virtual bool trains_with_bf16_weights() const { return false; }
};

// The image classifiers' common part (ResNet, ViT): random images and labels, cross-entropy.
class ImageClassifier : public Model {
  public:
    ImageClassifier(int64_t image_size, int64_t classes)
        : image_size_(image_size), classes_(classes) {}
    // Convolutional nets put images and weights channels-last on CUDA (tensor-core friendly).
    void use_channels_last_on_cuda() { channels_last_on_cuda_ = true; }
    void to_device(torch::Device device) override;
    Batch synthetic_batch(int64_t batch, torch::Device device) override;
    HostBatchMaker file_data(const std::string& path, int64_t batch) override;  // CIFAR-10
    Batch on_device(Batch batch) override;  // uint8 file images -> resized float images
    torch::Tensor loss(const Batch& batch) override;
    int64_t items_per_sample() const override { return 1; }
    std::string item_unit() const override { return "images"; }

  protected:
    virtual torch::Tensor logits(const torch::Tensor& images) = 0;  // [B,3,H,W] -> [B,classes]
    int64_t image_size_;
    int64_t classes_;
    bool channels_last_on_cuda_ = false;
};

// Total and trainable parameter counts of a module.
int64_t parameter_count(torch::nn::Module& module);
int64_t trainable_parameter_count(torch::nn::Module& module);

// Freezes every parameter of `module` (requires_grad = false).
void freeze(torch::nn::Module& module);
void unfreeze(torch::nn::Module& module);

}  // namespace migscope::workloads
