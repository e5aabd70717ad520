// migscope-worker: the process that runs training jobs for the runner (the only binary that links
// LibTorch). For now it answers `probe`: the LibTorch build and the CUDA devices it can see, as
// JSON.
#include <torch/torch.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/version.h"

namespace {

int probe() {
    nlohmann::json j;
    j["migscope_version"] = migscope::kVersion;
    j["torch_version"] = TORCH_VERSION;
    j["cuda_available"] = torch::cuda::is_available();
    j["cuda_device_count"] = torch::cuda::device_count();
    j["cudnn_available"] = torch::cuda::cudnn_is_available();
    // A tiny computation proves the library loads and runs, not only links.
    j["cpu_check"] = torch::arange(1, 5, torch::kFloat32).sum().item<float>();
    std::cout << j.dump() << '\n';
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "probe")
        return probe();
    std::cerr << "usage: migscope-worker probe\n"
                 "  probe   print the LibTorch version and visible CUDA devices as JSON\n";
    return command == "--help" || command == "-h" ? 0 : 2;
}
