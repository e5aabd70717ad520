// The transformer workloads: ViT-B/16 (torchvision vit_b_16), BERT-base masked LM (HF
// BertForMaskedLM, tied embeddings) and GPT-2 medium / XL (tied embeddings), with their configs.
#pragma once

#include "workloads/models/model.h"

namespace migscope::workloads {

struct VitConfig {
    int64_t image_size = 224, patch = 16, dim = 768, depth = 12, heads = 12, mlp = 3072;
    int64_t classes = 1000;
    int64_t tokens() const { return (image_size / patch) * (image_size / patch) + 1; }
};

struct BertConfig {
    int64_t vocab = 30522, max_positions = 512, token_types = 2;
    int64_t dim = 768, layers = 12, heads = 12, ffn = 3072;
    int64_t seq_len = 512;
    double mask_fraction = 0.15;
    // Positions masked in each sequence: round(mask_fraction × seq_len), at least 1 (77 of 512).
    int64_t masked_per_sequence() const;
};

struct Gpt2Config {
    int64_t vocab = 50257, context = 1024, dim = 1024, layers = 24, heads = 16;
    int64_t seq_len = 1024;
    static Gpt2Config medium() { return {}; }
    static Gpt2Config xl() { return {50257, 1024, 1600, 48, 25, 1024}; }
};

// Parameter counts from the architecture, without building it.
int64_t vit_parameter_count(const VitConfig& c);
int64_t bert_parameter_count(const BertConfig& c);
int64_t gpt2_parameter_count(const Gpt2Config& c);

std::unique_ptr<Model> make_vit(const VitConfig& c);
std::unique_ptr<Model> make_bert(const BertConfig& c);
std::unique_ptr<Model> make_gpt2(const Gpt2Config& c);

// BERT's masked-LM loss as HF BertForMaskedLM computes it (the head's logits at every position),
// for tests: the model's own loss() runs the head at the masked positions only, which gives the
// same loss and gradients. `bert` must come from make_bert.
torch::Tensor bert_loss_at_every_position(Model& bert, const Batch& batch);

}  // namespace migscope::workloads
