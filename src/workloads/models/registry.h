// The built-in workloads by name: the six of the study, and tiny versions for CPU tests and demos.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "workloads/models/model.h"

namespace migscope::workloads {

struct WorkloadInfo {
    std::string name;         // "resnet18"
    std::string description;  // "ResNet-18, 224x224 images, 1000 classes (torchvision)"
    int64_t default_batch;    // the study's batch size on a whole GPU
};

const std::vector<WorkloadInfo>& builtin_workloads();

// Builds a workload's model by name; throws std::invalid_argument naming it and the known names.
std::unique_ptr<Model> make_model(const std::string& name);
const WorkloadInfo& workload_info(const std::string& name);

}  // namespace migscope::workloads
