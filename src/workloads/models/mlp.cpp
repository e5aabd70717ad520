// The MLP reference workload: x -> [Linear -> GELU] x (layers - 1) -> Linear, MSE loss.
#include "workloads/models/mlp.h"

#include <stdexcept>

namespace migscope::workloads {
namespace {

class Mlp : public Model {
  public:
    explicit Mlp(const MlpConfig& c) : config_(c) {
        for (int64_t i = 0; i < c.layers; ++i) {
            layers_->push_back(
                torch::nn::Linear(torch::nn::LinearOptions(c.width, c.width).bias(false)));
            if (i + 1 < c.layers)
                layers_->push_back(torch::nn::GELU());
        }
        module_.register_module("layers", layers_);
    }
    torch::nn::Module& module() override { return module_; }

    Batch synthetic_batch(int64_t batch, torch::Device device) override {
        auto opts = torch::TensorOptions().device(device);
        return {torch::randn({batch, config_.width}, opts),
                torch::randn({batch, config_.width}, opts)};
    }
    HostBatchMaker file_data(const std::string&, int64_t) override {
        throw std::invalid_argument("the mlp workload trains on synthetic data only");
    }
    torch::Tensor loss(const Batch& b) override {
        // [B, width] -> [B, width]; the loss in fp32.
        return torch::mse_loss(layers_->forward(b.inputs).to(torch::kFloat32), b.targets);
    }
    int64_t items_per_sample() const override { return 1; }
    std::string item_unit() const override { return "samples"; }
    // Forward 2 FLOPs per weight per sample, backward 4.
    std::optional<double> train_flops_per_sample() const override {
        return 6.0 * static_cast<double>(config_.layers * config_.width * config_.width);
    }
    void prepare_finetune(const FinetuneOptions&) override {
        freeze(module_);
        unfreeze(*layers_->ptr(layers_->size() - 1));  // the last linear layer
    }

  private:
    MlpConfig config_;
    torch::nn::Module module_;
    torch::nn::Sequential layers_;
};

}  // namespace

std::unique_ptr<Model> make_mlp(const MlpConfig& config) {
    return std::make_unique<Mlp>(config);
}

}  // namespace migscope::workloads
