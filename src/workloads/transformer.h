// Transformer building blocks shared by ViT, BERT and GPT-2: fused-QKV self-attention through
// scaled-dot-product attention, the GELU MLP, and a block with pre- or post-layer-norm.
#pragma once

#include <torch/torch.h>

namespace migscope::workloads {

// A LoRA adapter beside a frozen linear layer: adds scale * x A^T B^T, with A [rank, in] random and
// B [out, rank] zero, so a fresh adapter leaves the layer's output unchanged.
struct LoraAdapterImpl : torch::nn::Module {
    LoraAdapterImpl(int64_t in, int64_t out, int64_t rank, double alpha);
    torch::Tensor forward(const torch::Tensor& x);

    torch::Tensor a, b;
    double scale;
};
TORCH_MODULE(LoraAdapter);

enum class NormPlacement { kPreNorm, kPostNorm };  // GPT-2/ViT normalise first; BERT after
enum class Causality { kBidirectional, kCausal };

struct SelfAttentionImpl : torch::nn::Module {
    SelfAttentionImpl(int64_t dim, int64_t heads, Causality causality);
    // x: [batch, tokens, dim] -> [batch, tokens, dim]
    torch::Tensor forward(const torch::Tensor& x);

    // Adds LoRA adapters to both projections.
    void add_lora(int64_t rank, double alpha);

    int64_t heads;
    Causality causality;
    torch::nn::Linear qkv{nullptr};  // dim -> 3*dim
    torch::nn::Linear out{nullptr};  // dim -> dim
    LoraAdapter qkv_lora{nullptr}, out_lora{nullptr};
};
TORCH_MODULE(SelfAttention);

enum class Gelu { kExact, kTanh };  // BERT and ViT use the exact GELU, GPT-2 the tanh form

struct MlpImpl : torch::nn::Module {
    MlpImpl(int64_t dim, int64_t hidden, Gelu gelu);
    torch::Tensor forward(const torch::Tensor& x);  // dim -> hidden -> GELU -> dim

    void add_lora(int64_t rank, double alpha);  // adapters on both layers

    Gelu gelu;
    torch::nn::Linear up{nullptr};
    torch::nn::Linear down{nullptr};
    LoraAdapter up_lora{nullptr}, down_lora{nullptr};
};
TORCH_MODULE(Mlp);

struct BlockImpl : torch::nn::Module {
    BlockImpl(int64_t dim, int64_t heads, int64_t hidden, NormPlacement norm, Causality causality,
              Gelu gelu, double layer_norm_eps);
    torch::Tensor forward(torch::Tensor x);

    NormPlacement norm;
    torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
    SelfAttention attention{nullptr};
    Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

// Parameters of one block: two layer norms, QKV and output projections, the two MLP layers.
int64_t block_parameter_count(int64_t dim, int64_t hidden);

// The initialisation of BERT and GPT-2 (and timm's ViT): every linear and embedding weight drawn
// from N(0, std), biases zero; layer norms stay at one and zero. Applies to the children of
// `module` (callable from a constructor, before the module is owned by a shared_ptr).
void init_transformer_weights(torch::nn::Module& module, double std = 0.02);

}  // namespace migscope::workloads
