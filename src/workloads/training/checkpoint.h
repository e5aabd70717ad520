// Model weights in safetensors files: loaded into a built-in workload by parameter and buffer name
// (`--checkpoint`), and written from one (`--save-checkpoint`). Names are migscope's own (see
// docs/worker-protocol.md for converting torchvision / Hugging Face weights).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

namespace migscope::workloads {

struct CheckpointLoad {
    size_t loaded = 0;                 // tensors copied into the module
    std::vector<std::string> missing;  // the module's tensors the file lacks (left as they were)
    std::vector<std::string> unused;   // the file's tensors the module lacks
};

// Copies every tensor of the file whose name the module has (parameters and buffers, recursively)
// into it, converting the dtype, on the module's device. Throws std::invalid_argument with the
// reason before anything is copied when the file is malformed (header, dtype, offsets past the
// end) or a tensor's shape differs from the module's (naming the tensor and both shapes).
CheckpointLoad load_checkpoint(torch::nn::Module& module, const std::string& path);

// Writes the module's parameters and buffers, as they are (dtype and shape), to a safetensors file.
// Throws a runtime error naming the path when it cannot be written.
void save_checkpoint(torch::nn::Module& module, const std::string& path);

}  // namespace migscope::workloads
