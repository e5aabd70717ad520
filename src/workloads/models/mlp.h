// A matmul-bound reference workload (not one of the study's six): bias-free square linear layers
// with GELU between them, MSE against random targets. It calibrates SM partitions: its step time
// should scale with the SM count.
#pragma once
#include <memory>

#include "workloads/models/model.h"

namespace migscope::workloads {

struct MlpConfig {
    int64_t width = 8192;
    int64_t layers = 4;
};

std::unique_ptr<Model> make_mlp(const MlpConfig& config);

}  // namespace migscope::workloads
