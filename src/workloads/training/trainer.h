// One training step, readable top to bottom: zero the gradients, forward and loss (bf16 autocast
// on CUDA, fp32 on CPU), backward, AdamW update of the trainable parameters. On CUDA the step can
// be captured once as a CUDA graph and replayed (step_graph.h).
#pragma once

#include <c10/core/Allocator.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "workloads/training/master_weight_adamw.h"
#include "workloads/models/model.h"

namespace migscope::workloads {

// kBf16Autocast: fp32 parameters, bf16 autocast, fused AdamW (CUDA, models that keep fp32 weights).
// kBf16Weights: bf16 parameters, bf16 autocast (for the loss's fp32 parts), fp32 master weights
// and moments in MasterWeightAdamW (CUDA, Model::trains_with_bf16_weights). kFp32: CPU.
enum class Precision { kFp32, kBf16Autocast, kBf16Weights };

// The name the worker reports: "fp32", "bf16-autocast", "bf16-fp32-master".
const char* precision_name(Precision precision);

struct TrainerOptions {
    torch::Device device = torch::kCPU;
    double learning_rate = 3e-4;
    double weight_decay = 0.01;
    // CUDA only: after kEagerStepsBeforeCapture eager steps, capture the whole step (forward,
    // backward, AdamW) as a CUDA graph on the current stream (not the legacy default stream) and
    // replay it from then on. A step that cannot be captured goes on eagerly (graph_failure()).
    bool cuda_graph = false;
    // The caching-allocator pool the job's stream is routed into (a group job), or none.
    std::optional<c10::MempoolId_t> job_pool = std::nullopt;
};

// Eager steps before the capture: the first builds the optimizer's state and the cuBLAS/cuDNN
// handles and plans (cuDNN autotuning), the second runs on what the first left cached.
constexpr int64_t kEagerStepsBeforeCapture = 2;

class StepGraph;

class Trainer {
  public:
    // Moves the model to the device and builds AdamW over its trainable parameters.
    Trainer(Model& model, TrainerOptions options);
    ~Trainer();
    // Runs one step and returns the loss (reading it waits for the device).
    double step(const Batch& batch);
    // Launches one step without waiting for it: its loss is copied to the host behind it on the
    // stream and read by a later wait_oldest(), in launch order. Launching step k+1 before
    // reading step k's loss keeps the device busy while the host prepares the next launch.
    void launch(const Batch& batch);
    // Waits for the oldest launched step whose loss has not been read and returns that loss; none
    // when every launched step's loss has been read.
    std::optional<double> wait_oldest();
    // Launched steps whose loss has not been read yet.
    size_t unread() const { return unread_.size(); }
    Precision precision() const { return precision_; }
    // Whether the steps now replay a captured CUDA graph.
    bool graph_replaying() const;
    // Why a requested capture failed (the CUDA or LibTorch error); empty when it did not.
    const std::string& graph_failure() const { return graph_failure_; }
    // After training: the model's parameters in fp32 again (kBf16Weights: the masters), e.g. to
    // save them. No steps after this.
    void finish();

  private:
    // One step (captured at kEagerStepsBeforeCapture, replayed after); its loss on the device.
    torch::Tensor run_step(const Batch& batch);
    // Forward, loss, backward, AdamW (gradients already dropped); the loss on the device.
    torch::Tensor forward_backward_update(const Batch& batch);

    Model& model_;
    TrainerOptions options_;
    Precision precision_;
    std::unique_ptr<Optimizer> optimizer_;
    MasterWeightAdamW* master_weights_ = nullptr;  // optimizer_, where it holds fp32 masters
    int64_t steps_ = 0;
    std::unique_ptr<StepGraph> graph_;  // captured; null before, and when capture failed
    std::string graph_failure_;
    struct UnreadLoss;  // a launched step's loss on its way to the host
    std::deque<std::unique_ptr<UnreadLoss>> unread_;
};

}  // namespace migscope::workloads
