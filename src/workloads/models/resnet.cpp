// ResNet (He et al.), torchvision's layout: 7x7 stem, four stages of basic or bottleneck blocks
// (stride on the 3x3 convolution, "v1.5"), global average pool, linear classifier.
#include "workloads/models/resnet.h"

#include <iterator>

#include "workloads/kernels/fused_batch_norm.h"
#include "workloads/kernels/fused_max_pool.h"

namespace migscope::workloads {
namespace {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
    return torch::nn::Conv2d(
        torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// Runs a sequence of convolutions, batch norms, ReLUs and pooling with each batch norm fused with
// the ReLU right after it (batch_norm_add_relu); a batch norm that ends the sequence also adds
// `residual` (may be undefined) and applies ReLU when `final_relu`.
torch::Tensor forward_fused(torch::nn::Sequential& layers, torch::Tensor x,
                            const torch::Tensor& residual, bool final_relu) {
    for (auto layer = layers->begin(); layer != layers->end(); ++layer) {
        auto* norm = layer->ptr()->as<torch::nn::BatchNorm2d>();
        if (norm == nullptr) {
            x = layer->forward(x);
            continue;
        }
        const auto next = std::next(layer);
        if (next == layers->end()) {
            x = batch_norm_add_relu(x, *norm, residual, final_relu);
        } else if (next->ptr()->as<torch::nn::ReLU>() != nullptr) {
            x = batch_norm_add_relu(x, *norm, torch::Tensor(), true);
            layer = next;
        } else {
            x = batch_norm_add_relu(x, *norm, torch::Tensor(), false);
        }
    }
    return x;
}

int64_t expansion(const ResNetConfig& c) {
    return c.block == ResNetConfig::BlockType::kBasic ? 1 : 4;
}

struct ResidualBlockImpl : torch::nn::Module {
    ResidualBlockImpl(bool bottleneck, int64_t in, int64_t channels, int64_t stride) {
        const int64_t out = bottleneck ? 4 * channels : channels;
        if (bottleneck) {
            body = torch::nn::Sequential(conv(in, channels, 1, 1), torch::nn::BatchNorm2d(channels),
                                         torch::nn::ReLU(), conv(channels, channels, 3, stride),
                                         torch::nn::BatchNorm2d(channels), torch::nn::ReLU(),
                                         conv(channels, out, 1, 1), torch::nn::BatchNorm2d(out));
        } else {
            body = torch::nn::Sequential(conv(in, channels, 3, stride),
                                         torch::nn::BatchNorm2d(channels), torch::nn::ReLU(),
                                         conv(channels, out, 3, 1), torch::nn::BatchNorm2d(out));
        }
        register_module("body", body);
        if (stride != 1 || in != out) {
            shortcut = register_module(
                "shortcut",
                torch::nn::Sequential(conv(in, out, 1, stride), torch::nn::BatchNorm2d(out)));
        }
    }
    torch::Tensor forward(const torch::Tensor& x) {
        const torch::Tensor identity =
            shortcut.is_empty() ? x : forward_fused(shortcut, x, torch::Tensor(), false);
        return forward_fused(body, x, identity, true);
    }
    torch::nn::Sequential body{nullptr};
    torch::nn::Sequential shortcut{nullptr};
};
TORCH_MODULE(ResidualBlock);

struct ResNetImpl : torch::nn::Module {
    explicit ResNetImpl(const ResNetConfig& c) {
        const bool bottleneck = c.block == ResNetConfig::BlockType::kBottleneck;
        stem = register_module(
            "stem", torch::nn::Sequential(
                        conv(3, c.width, 7, 2), torch::nn::BatchNorm2d(c.width), torch::nn::ReLU(),
                        torch::nn::Functional(max_pool_3x3_stride2)));
        int64_t in = c.width;
        for (size_t s = 0; s < c.layers.size(); ++s) {
            const int64_t channels = c.width << s;
            torch::nn::Sequential stage;
            for (int64_t b = 0; b < c.layers[s]; ++b) {
                const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
                stage->push_back(ResidualBlock(bottleneck, in, channels, stride));
                in = channels * expansion(c);
            }
            stages.push_back(register_module("stage" + std::to_string(s + 1), stage));
        }
        fc = register_module("fc", torch::nn::Linear(in, c.classes));
        features = in;
    }
    torch::Tensor forward(torch::Tensor x) {
        x = forward_fused(stem, x, torch::Tensor(), false);
        for (auto& stage : stages)
            x = stage->forward(x);
        return fc(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
    }
    torch::nn::Sequential stem{nullptr};
    std::vector<torch::nn::Sequential> stages;
    torch::nn::Linear fc{nullptr};
    int64_t features = 0;
};
TORCH_MODULE(ResNet);

class ResNetModel : public ImageClassifier {
  public:
    explicit ResNetModel(const ResNetConfig& c)
        : ImageClassifier(c.image_size, c.classes), config_(c), net_(c) {
        use_channels_last_on_cuda();
    }
    torch::nn::Module& module() override { return *net_; }
    std::optional<double> train_flops_per_sample() const override {
        return 3.0 * 2.0 * resnet_forward_macs(config_);  // backward = 2 x forward
    }
    void prepare_finetune(const FinetuneOptions&) override {
        freeze(*net_);
        auto& last_stage = net_->stages.back();
        unfreeze(*last_stage->ptr(last_stage->size() - 1));
        net_->fc = net_->replace_module("fc", torch::nn::Linear(net_->features, config_.classes));
    }

  private:
    torch::Tensor logits(const torch::Tensor& images) override { return net_->forward(images); }
    ResNetConfig config_;
    ResNet net_;
};

// Walks the architecture once, adding parameters and MACs of each convolution.
struct Counter {
    int64_t params = 0;
    double macs = 0;
    int64_t size;  // current spatial size
    void conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, bool batch_norm = true) {
        size = (size + 2 * (kernel / 2) - kernel) / stride + 1;
        params += in * out * kernel * kernel + (batch_norm ? 2 * out : 0);
        macs += static_cast<double>(size) * size * in * out * kernel * kernel;
    }
};

Counter count(const ResNetConfig& c) {
    Counter k{0, 0, c.image_size};
    k.conv(3, c.width, 7, 2);
    k.size = (k.size + 2 - 3) / 2 + 1;  // max pool 3x3 stride 2
    int64_t in = c.width;
    const bool bottleneck = c.block == ResNetConfig::BlockType::kBottleneck;
    for (size_t s = 0; s < c.layers.size(); ++s) {
        const int64_t channels = c.width << s;
        for (int64_t b = 0; b < c.layers[s]; ++b) {
            const int64_t stride = (s > 0 && b == 0) ? 2 : 1;
            const int64_t out = channels * expansion(c);
            const int64_t size_in = k.size;
            if (stride != 1 || in != out) {
                Counter shortcut{0, 0, size_in};
                shortcut.conv(in, out, 1, stride);
                k.params += shortcut.params;
                k.macs += shortcut.macs;
            }
            if (bottleneck) {
                k.conv(in, channels, 1, 1);
                k.conv(channels, channels, 3, stride);
                k.conv(channels, out, 1, 1);
            } else {
                k.conv(in, channels, 3, stride);
                k.conv(channels, out, 3, 1);
            }
            in = out;
        }
    }
    k.params += in * c.classes + c.classes;
    k.macs += static_cast<double>(in) * c.classes;
    return k;
}

}  // namespace

int64_t resnet_parameter_count(const ResNetConfig& config) {
    return count(config).params;
}
double resnet_forward_macs(const ResNetConfig& config) {
    return count(config).macs;
}

std::unique_ptr<Model> make_resnet(const ResNetConfig& config) {
    return std::make_unique<ResNetModel>(config);
}

}  // namespace migscope::workloads
