// Transformer building blocks shared by ViT, BERT and GPT-2: fused-QKV self-attention through
// scaled-dot-product attention, the GELU MLP, and a block with pre- or post-layer-norm.
#pragma once

#include <torch/torch.h>

#include <array>

#include "workloads/kernels/fused_ops.h"

namespace migscope::workloads {

// x W^T + b through ATen's linear, where the bias is added in the matmul's epilogue and autocast
// casts it. torch::nn::Linear's own forward adds the bias in a separate, mixed-dtype kernel for
// inputs of three or more dimensions: measured 25 ms of GPT-2 XL's 262 ms step on the H200.
torch::Tensor apply_linear(const torch::nn::Linear& layer, const torch::Tensor& x);

// The residual stream's dtype. Under autocast (bf16 on CUDA in training) the stream between
// blocks is held in the autocast dtype, as Megatron-LM and llm.c hold it, instead of the fp32 that
// autocast's promotion rules would give (fp32 embeddings, fp32 layer-norm outputs): every residual
// add, layer norm and cast then moves half the bytes. Without autocast (CPU, fp32) x is returned
// as it is. (The parameters' dtype is the trainer's choice: trainer.h.)
torch::Tensor to_residual_dtype(const torch::Tensor& x);

// norm(x) computed in x's dtype (ATen's kernels accumulate in fp32 inside), with the norm's scale
// and shift cast to it where they differ, also under autocast (which would run it in fp32 and
// return fp32). Without autocast and with x in the parameters' dtype it equals norm(x).
torch::Tensor layer_norm_in_input_dtype(const torch::nn::LayerNorm& norm, const torch::Tensor& x);

// Splits a fused projection [batch, tokens, 3 * dim] into query, key and value views of shape
// [batch, heads, tokens, dim / heads]. Its backward writes the three gradients straight into one
// [batch, tokens, 3 * dim] buffer (unbind's backward stacks them and then copies the stack into
// that layout: two passes over the gradients instead of one).
std::array<torch::Tensor, 3> split_heads(const torch::Tensor& qkv, int64_t heads);

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
    // forward(x) less the output projection's bias, which the block adds with the residual.
    torch::Tensor forward_without_out_bias(const torch::Tensor& x);
    // The same, and x to read afterwards instead of x (qkv_heads_keeping_input, fused_ops.h).
    ProjectionAndInput forward_keeping_input(const torch::Tensor& x);
    // Attention over q/k/v [batch, heads, tokens, dim / heads] and the output projection.
    torch::Tensor attend(const std::array<torch::Tensor, 3>& parts);

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
    // forward(x) less the down projection's bias, which the block adds with the residual.
    torch::Tensor forward_without_down_bias(const torch::Tensor& x);
    // The same, and x to read afterwards instead of x (linear_keeping_input, fused_ops.h).
    ProjectionAndInput forward_keeping_input(const torch::Tensor& x);
    // GELU(u + up's bias) through the down projection, without its bias.
    torch::Tensor down_of(const torch::Tensor& u);

    void add_lora(int64_t rank, double alpha);  // adapters on both layers

    Gelu gelu;
    torch::nn::Linear up{nullptr};
    torch::nn::Linear down{nullptr};
    LoraAdapter up_lora{nullptr}, down_lora{nullptr};
};
TORCH_MODULE(Mlp);

// The residual stream between blocks with the last branch's output not added yet: its value is
// x + delta + bias (delta and bias undefined when nothing is pending). The next layer norm adds
// them in the same pass (add_layer_norm, fused_ops.h), so that the stream is read and written
// once per branch instead of twice.
struct Residual {
    torch::Tensor x, delta, bias;
    torch::Tensor value() const;
};

struct BlockImpl : torch::nn::Module {
    BlockImpl(int64_t dim, int64_t heads, int64_t hidden, NormPlacement norm, Causality causality,
              Gelu gelu, double layer_norm_eps);
    torch::Tensor forward(const torch::Tensor& x);  // forward_residual({x, {}, {}}).value()
    // A pre-norm block returns its MLP's output pending; a post-norm block returns nothing
    // pending and takes no pending input.
    Residual forward_residual(const Residual& in);

    NormPlacement norm;
    torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
    SelfAttention attention{nullptr};
    Mlp mlp{nullptr};
};
TORCH_MODULE(Block);

// Parameters of one block: two layer norms, QKV and output projections, the two MLP layers.
int64_t block_parameter_count(int64_t dim, int64_t hidden);

// Logits x W^T + b of a tied vocabulary head (weight [classes, dim]), computed on weight and bias
// padded with rows to a multiple of 64 so that the GEMM's output rows are 16-byte aligned: cuBLAS
// has no fast kernel for GPT-2's 50,257-wide rows (on the H200 the head's three GEMMs took 27.6 ms
// a step unpadded, 5.7 ms padded). The result has the padded width; the padded classes' logits are
// -inf, so softmax and cross-entropy over it equal those over the real classes, in values and
// gradients, and need no copy of a narrowed view. The first `classes` columns equal x W^T + b.
torch::Tensor logits_with_aligned_rows(const torch::Tensor& x, const torch::Tensor& weight,
                                       const torch::Tensor& bias = {});

// The initialisation of BERT and GPT-2 (and timm's ViT): every linear and embedding weight drawn
// from N(0, std), biases zero; layer norms stay at one and zero. Applies to the children of
// `module` (callable from a constructor, before the module is owned by a shared_ptr).
void init_transformer_weights(torch::nn::Module& module, double std = 0.02);

}  // namespace migscope::workloads
