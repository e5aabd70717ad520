// Name -> workload table.
#include "workloads/models/registry.h"

#include <functional>
#include <stdexcept>

#include "workloads/models/mlp.h"
#include "workloads/models/resnet.h"
#include "workloads/models/transformers.h"

namespace migscope::workloads {
namespace {

struct Entry {
    WorkloadInfo info;
    std::function<std::unique_ptr<Model>()> make;
};

const std::vector<Entry>& entries() {
    static const std::vector<Entry> table = {
        {{"resnet18", "ResNet-18, 224x224 images, 1000 classes (torchvision)", 256},
         [] { return make_resnet(ResNetConfig::resnet18()); }},
        {{"resnet50", "ResNet-50, 224x224 images, 1000 classes (torchvision)", 256},
         [] { return make_resnet(ResNetConfig::resnet50()); }},
        {{"vit-b16", "ViT-B/16, 224x224 images, 1000 classes (torchvision vit_b_16)", 128},
         [] { return make_vit(VitConfig{}); }},
        {{"bert-base", "BERT-base masked LM, sequence 512 (HF BertForMaskedLM)", 32},
         [] { return make_bert(BertConfig{}); }},
        {{"gpt2-medium", "GPT-2 medium (355M), sequence 1024, tied embeddings", 16},
         [] { return make_gpt2(Gpt2Config::medium()); }},
        {{"gpt2-xl", "GPT-2 XL (1.56B), sequence 1024, tied embeddings", 8},
         [] { return make_gpt2(Gpt2Config::xl()); }},
        // Not in the study: a matmul-bound reference for checking SM partitions.
        {{"mlp", "Matmul-bound reference: 4 bias-free 8192x8192 linear layers, GELU, MSE", 8192},
         [] { return make_mlp({}); }},
        // Tiny versions of each family: same code, sizes a CPU trains in milliseconds.
        {{"resnet-tiny", "ResNet with basic blocks [1,1], width 8, 32x32 images, 10 classes", 8},
         [] {
             return make_resnet({ResNetConfig::BlockType::kBasic, {1, 1}, 8, 10, 32});
         }},
        {{"vit-tiny", "ViT, 32x32 images, patch 8, width 32, 2 layers, 10 classes", 8},
         [] {
             return make_vit({32, 8, 32, 2, 2, 64, 10});
         }},
        {{"bert-tiny", "BERT masked LM, vocabulary 128, width 32, 2 layers, sequence 32", 8},
         [] {
             return make_bert({128, 32, 2, 32, 2, 2, 64, 32, 0.15});
         }},
        {{"gpt2-tiny", "GPT-2, vocabulary 128, width 32, 2 layers, sequence 32", 8},
         [] {
             return make_gpt2({128, 32, 32, 2, 2, 32});
         }},
        {{"mlp-tiny", "MLP, 2 bias-free 32x32 linear layers, GELU, MSE", 8},
         [] { return make_mlp({32, 2}); }},
    };
    return table;
}

const Entry& find(const std::string& name) {
    for (const Entry& e : entries()) {
        if (e.info.name == name)
            return e;
    }
    std::string known;
    for (const Entry& e : entries())
        known += (known.empty() ? "" : ", ") + e.info.name;
    throw std::invalid_argument("unknown workload '" + name + "' (known: " + known + ")");
}

}  // namespace

const std::vector<WorkloadInfo>& builtin_workloads() {
    static const std::vector<WorkloadInfo> infos = [] {
        std::vector<WorkloadInfo> v;
        for (const Entry& e : entries())
            v.push_back(e.info);
        return v;
    }();
    return infos;
}

std::unique_ptr<Model> make_model(const std::string& name) {
    return find(name).make();
}
const WorkloadInfo& workload_info(const std::string& name) {
    return find(name).info;
}

}  // namespace migscope::workloads
