// ResNet-18 and ResNet-50 as torchvision builds them (224x224 inputs, 1000 classes).
#pragma once

#include <vector>

#include "workloads/models/model.h"

namespace migscope::workloads {

struct ResNetConfig {
    enum class BlockType { kBasic, kBottleneck } block = BlockType::kBasic;
    std::vector<int64_t> layers = {2, 2, 2, 2};  // blocks per stage
    int64_t width = 64;                          // channels of the first stage
    int64_t classes = 1000;
    int64_t image_size = 224;

    static ResNetConfig resnet18() { return {}; }
    static ResNetConfig resnet50() { return {BlockType::kBottleneck, {3, 4, 6, 3}, 64, 1000, 224}; }
};

// Parameters, counted from the architecture without building it (batch-norm running statistics
// are buffers, not parameters).
int64_t resnet_parameter_count(const ResNetConfig& config);
// Multiply-accumulates of one forward pass of one image.
double resnet_forward_macs(const ResNetConfig& config);

std::unique_ptr<Model> make_resnet(const ResNetConfig& config);

}  // namespace migscope::workloads
