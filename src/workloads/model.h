// The interface every built-in training workload implements: its network, synthetic data, loss,
// work unit and FLOP count, and how it turns into a fine-tuning job.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>

namespace migscope::workloads {

enum class Mode { kTrain, kFinetune };

struct Batch {
    torch::Tensor inputs;   // images [B,3,H,W] float, or token ids [B,T] int64
    torch::Tensor targets;  // class ids [B], or token ids [B,T] with -100 where not scored
};

class Model {
  public:
    virtual ~Model() = default;
    virtual torch::nn::Module& module() = 0;
    // A batch of random data of the real shapes and value ranges, made on `device`.
    virtual Batch synthetic_batch(int64_t batch, torch::Device device) = 0;
    virtual torch::Tensor loss(const Batch& batch) = 0;
    virtual int64_t items_per_sample() const = 0;  // 1 image, or the sequence length in tokens
    virtual std::string item_unit() const = 0;     // "images" or "tokens"
    // Dense FLOPs of one training step's forward and backward per sample, in train mode;
    // nullopt where no analytical count is implemented (then MFU is left empty).
    virtual std::optional<double> train_flops_per_sample() const = 0;
    // Freezes everything but the last block and a newly initialised head.
    virtual void prepare_finetune() = 0;
};

// Total and trainable parameter counts of a module.
int64_t parameter_count(torch::nn::Module& module);
int64_t trainable_parameter_count(torch::nn::Module& module);

// Freezes every parameter of `module` (requires_grad = false).
void freeze(torch::nn::Module& module);
void unfreeze(torch::nn::Module& module);

}  // namespace migscope::workloads
