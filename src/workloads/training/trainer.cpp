// The training step.
#include "workloads/training/trainer.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include "workloads/training/autocast.h"
#include "workloads/training/step_graph.h"

namespace migscope::workloads {
namespace {

Precision choose_precision(const Model& model, torch::Device device) {
    if (!device.is_cuda())
        return Precision::kFp32;
    return model.trains_with_bf16_weights() ? Precision::kBf16Weights : Precision::kBf16Autocast;
}

}  // namespace

const char* precision_name(Precision precision) {
    switch (precision) {
        case Precision::kFp32:
            return "fp32";
        case Precision::kBf16Autocast:
            return "bf16-autocast";
        case Precision::kBf16Weights:
            return "bf16-fp32-master";
    }
    return "unknown";
}

struct Trainer::UnreadLoss {
    torch::Tensor host;                       // the loss; on CUDA a pinned copy, filled by `done`
    std::optional<at::cuda::CUDAEvent> done;  // CUDA: recorded on the stream after the copy
};

Trainer::Trainer(Model& model, TrainerOptions options)
    : model_(model), options_(options), precision_(choose_precision(model, options.device)) {
    model_.to_device(options_.device);
    model_.module().train();
    std::vector<torch::Tensor> trainable;
    for (auto& p : model_.module().parameters()) {
        if (p.requires_grad()) {
            trainable.push_back(p);
        } else if (precision_ == Precision::kBf16Weights && p.is_floating_point()) {
            torch::NoGradGuard no_grad;  // frozen: bf16 too, and nothing to keep a master of
            p.set_data(p.detach().to(torch::kBFloat16));
        }
    }
    TORCH_CHECK(!trainable.empty(), "the model has no trainable parameters");
    const AdamWSettings settings{options_.learning_rate, options_.weight_decay};
    if (precision_ == Precision::kBf16Weights) {
        auto optimizer = std::make_unique<MasterWeightAdamW>(trainable, settings);
        master_weights_ = optimizer.get();
        optimizer_ = std::move(optimizer);
    } else {
        optimizer_ = std::make_unique<FusedAdamW>(trainable, settings);
    }
}

Trainer::~Trainer() = default;

bool Trainer::graph_replaying() const {
    return graph_ != nullptr;
}

double Trainer::step(const Batch& batch) {
    while (wait_oldest()) {  // steps launched before, whose loss nobody read
    }
    return run_step(batch).item<double>();
}

void Trainer::launch(const Batch& batch) {
    auto unread = std::make_unique<UnreadLoss>();
    const torch::Tensor loss = run_step(batch);
    if (options_.device.is_cuda()) {
        unread->host = loss.to(torch::kCPU, /*non_blocking=*/true);  // into pinned memory
        unread->done.emplace();
        unread->done->record();  // on the current stream, behind the copy
    } else {
        unread->host = loss;
    }
    unread_.push_back(std::move(unread));
}

torch::Tensor Trainer::run_step(const Batch& batch) {
    const bool capture_now = options_.cuda_graph && options_.device.is_cuda() && !graph_ &&
                             graph_failure_.empty() && steps_ == kEagerStepsBeforeCapture;
    torch::Tensor loss;
    if (capture_now) {
        if (!unread_.empty())  // nothing of an earlier step may still run while this is captured
            c10::cuda::getCurrentCUDAStream().synchronize();
        optimizer_->zero_grad();  // the captured backward allocates the gradients: no zeroing
        auto graph = std::make_unique<StepGraph>(options_.job_pool);
        try {
            graph->capture(batch, [this](const Batch& b) { return forward_backward_update(b); });
            graph_ = std::move(graph);
        } catch (const std::exception& e) {
            graph_failure_ = e.what();
            if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
                graph_failure_ = c10_error->what_without_backtrace();
            optimizer_->forget_captured_work();
        }
    }
    if (graph_) {
        loss = graph_->replay(batch);  // the graph's own output: the next replay overwrites it
    } else {
        optimizer_->zero_grad();
        loss = forward_backward_update(batch);
    }
    ++steps_;
    return loss;
}

std::optional<double> Trainer::wait_oldest() {
    if (unread_.empty())
        return std::nullopt;
    const std::unique_ptr<UnreadLoss> oldest = std::move(unread_.front());
    unread_.pop_front();
    if (oldest->done)
        oldest->done->synchronize();
    return oldest->host.item<double>();
}

torch::Tensor Trainer::forward_backward_update(const Batch& batch) {
    torch::Tensor loss;
    if (precision_ != Precision::kFp32) {
        Bf16Autocast autocast(at::kCUDA);
        loss = model_.loss(batch);
    } else {
        loss = model_.loss(batch);
    }
    loss.backward();
    // Free the autograd graph now, while the GPU still runs the backward, not after the wait in
    // step(), where the GPU idles until the next step's first kernel (GPT-2 XL on the H200: about
    // 1 ms a step faster; measured in the sixth run of docs/benchmarks.md, in its git history).
    const torch::Tensor value = loss.detach();
    loss.reset();
    optimizer_->step();
    return value;
}

void Trainer::finish() {
    while (wait_oldest()) {
    }
    if (master_weights_)
        master_weights_->restore_master_weights();
}

}  // namespace migscope::workloads
