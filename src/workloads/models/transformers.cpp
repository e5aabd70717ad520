// ViT-B/16, BERT-base masked LM and GPT-2 on the shared transformer blocks.
#include "workloads/models/transformers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "workloads/training/data.h"
#include "workloads/kernels/fused_ops.h"
#include "workloads/models/transformer.h"

namespace migscope::workloads {
namespace {

namespace F = torch::nn::functional;

torch::nn::ModuleList make_blocks(int64_t count, int64_t dim, int64_t heads, int64_t hidden,
                                  NormPlacement norm, Causality causality, Gelu gelu, double eps) {
    torch::nn::ModuleList blocks;
    for (int64_t i = 0; i < count; ++i) {
        blocks->push_back(Block(dim, heads, hidden, norm, causality, gelu, eps));
    }
    return blocks;
}

// The stream after the blocks: post-norm blocks (BERT) leave nothing pending, pre-norm ones
// (GPT-2, ViT) their last MLP output, which the final norm adds (add_layer_norm).
Residual run_blocks(torch::nn::ModuleList& blocks, const torch::Tensor& x) {
    Residual stream{x, {}, {}};
    for (auto& block : *blocks)
        stream = block->as<BlockImpl>()->forward_residual(stream);
    return stream;
}

// Per-token training FLOPs of attention: scores and weighted sum, 2*T*d multiply-adds forward per
// layer, times 3 for forward and backward; causal attention needs half.
double attention_train_flops_per_token(int64_t layers, int64_t tokens, int64_t dim, Causality c) {
    const double bidirectional = 12.0 * layers * tokens * dim;
    return c == Causality::kCausal ? bidirectional / 2 : bidirectional;
}

// ---- ViT -------------------------------------------------------------------------------------
struct VitImpl : torch::nn::Module {
    explicit VitImpl(const VitConfig& c) : config(c) {
        patch_embed = register_module(
            "patch_embed",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(3, c.dim, c.patch).stride(c.patch)));
        class_token = register_parameter("class_token", torch::zeros({1, 1, c.dim}));
        position = register_parameter("position", torch::randn({1, c.tokens(), c.dim}) * 0.02);
        blocks = register_module(
            "blocks", make_blocks(c.depth, c.dim, c.heads, c.mlp, NormPlacement::kPreNorm,
                                  Causality::kBidirectional, Gelu::kExact, 1e-6));
        ln = register_module("ln",
                             torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim}).eps(1e-6)));
        head = register_module("head", torch::nn::Linear(c.dim, c.classes));
        init_transformer_weights(*this);
    }
    torch::Tensor forward(const torch::Tensor& images) {
        // [B,3,H,W] -> [B,d,H/p,W/p] -> [B,N,d]; prepend the class token: [B,N+1,d]
        torch::Tensor x = patch_embed(images).flatten(2).transpose(1, 2);
        x = torch::cat({class_token.expand({x.size(0), 1, -1}), x}, 1) + position;
        const Residual r = run_blocks(blocks, to_residual_dtype(x));
        return head(add_layer_norm(r.x, r.delta, r.bias, ln).normed.select(1, 0));
    }
    VitConfig config;
    torch::nn::Conv2d patch_embed{nullptr};
    torch::Tensor class_token, position;
    torch::nn::ModuleList blocks{nullptr};
    torch::nn::LayerNorm ln{nullptr};
    torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Vit);

class VitModel : public ImageClassifier {
  public:
    explicit VitModel(const VitConfig& c)
        : ImageClassifier(c.image_size, c.classes), c_(c), net_(c) {}
    torch::nn::Module& module() override { return *net_; }
    std::optional<double> train_flops_per_sample() const override {
        const double per_token_matmul = c_.depth * (4.0 * c_.dim * c_.dim + 2.0 * c_.dim * c_.mlp) +
                                        3.0 * c_.patch * c_.patch * c_.dim;
        return c_.tokens() * (6.0 * per_token_matmul +
                              attention_train_flops_per_token(c_.depth, c_.tokens(), c_.dim,
                                                              Causality::kBidirectional)) +
               6.0 * c_.dim * c_.classes;
    }
    bool trains_with_bf16_weights() const override { return true; }
    void prepare_finetune(const FinetuneOptions&) override {
        freeze(*net_);
        unfreeze(*net_->blocks->ptr(net_->blocks->size() - 1));
        unfreeze(*net_->ln);
        net_->head = net_->replace_module("head", torch::nn::Linear(c_.dim, c_.classes));
    }

  private:
    torch::Tensor logits(const torch::Tensor& images) override { return net_->forward(images); }
    VitConfig c_;
    Vit net_;
};

// ---- BERT ------------------------------------------------------------------------------------
struct BertImpl : torch::nn::Module {
    explicit BertImpl(const BertConfig& c) : config(c) {
        word = register_module("word", torch::nn::Embedding(c.vocab, c.dim));
        position = register_module("position", torch::nn::Embedding(c.max_positions, c.dim));
        token_type = register_module("token_type", torch::nn::Embedding(c.token_types, c.dim));
        ln = register_module("ln",
                             torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim}).eps(1e-12)));
        blocks = register_module(
            "blocks", make_blocks(c.layers, c.dim, c.heads, c.ffn, NormPlacement::kPostNorm,
                                  Causality::kBidirectional, Gelu::kExact, 1e-12));
        transform = register_module("transform", torch::nn::Linear(c.dim, c.dim));
        transform_ln = register_module(
            "transform_ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim}).eps(1e-12)));
        decoder_bias = register_parameter("decoder_bias", torch::zeros({c.vocab}));
        init_transformer_weights(*this);
    }
    torch::Tensor encode(const torch::Tensor& ids) {  // [B,T] -> hidden states [B,T,D]
        const int64_t t = ids.size(1);
        auto positions = torch::arange(t, ids.options());
        torch::Tensor x = word(ids) + position(positions) + token_type(torch::zeros_like(ids));
        return run_blocks(blocks, layer_norm_in_input_dtype(ln, to_residual_dtype(x))).x;
    }
    // [..., D] -> logits [..., V padded to a multiple of 64; the padding's logits are -inf]
    torch::Tensor head(const torch::Tensor& hidden) {
        torch::Tensor x =
            layer_norm_in_input_dtype(transform_ln, torch::gelu(apply_linear(transform, hidden)));
        // The decoder is tied to the word embeddings.
        return logits_with_aligned_rows(x, word->weight, decoder_bias);
    }
    BertConfig config;
    torch::nn::Embedding word{nullptr}, position{nullptr}, token_type{nullptr};
    torch::nn::LayerNorm ln{nullptr}, transform_ln{nullptr};
    torch::nn::ModuleList blocks{nullptr};
    torch::nn::Linear transform{nullptr};
    torch::Tensor decoder_bias;
};
TORCH_MODULE(Bert);

constexpr int64_t kBertMaskToken = 103;  // [MASK] in the bert-base-uncased vocabulary

class BertModel : public Model {
  public:
    explicit BertModel(const BertConfig& c) : c_(c), net_(c) {}
    torch::nn::Module& module() override { return *net_; }
    Batch synthetic_batch(int64_t batch, torch::Device device) override {
        auto f = torch::TensorOptions().device(device).dtype(torch::kInt64);
        torch::Tensor ids = torch::randint(0, c_.vocab, {batch, c_.seq_len}, f);
        torch::Tensor masked = top_scores_mask(
            torch::rand({batch, c_.seq_len}, f.dtype(torch::kFloat32)), c_.masked_per_sequence());
        return {torch::where(masked, torch::full_like(ids, kBertMaskToken), ids),
                torch::where(masked, ids, torch::full_like(ids, -100))};
    }
    HostBatchMaker file_data(const std::string& path, int64_t batch) override {
        auto file = std::make_shared<const TokenFile>(path, c_.vocab);
        const BertConfig c = c_;
        return [file, batch, c](torch::Generator& rng) {
            return file->masked_batch(batch, c.seq_len, c.masked_per_sequence(), kBertMaskToken,
                                      rng);
        };
    }
    // The head (transform, layer norm, the 30522-way decoder) runs at the masked positions only:
    // each sequence has exactly masked_per_sequence() of them, so they are gathered with a fixed
    // shape and no host sync. The loss and gradients equal those of logits at every position
    // (bert_loss_at_every_position), at 15 % of the head's cost and without [B,T,V] logits.
    torch::Tensor loss(const Batch& b) override {
        const torch::Tensor hidden = net_->encode(b.inputs);
        // Masked positions first in each row (a stable sort of the 0/1 key keeps their order).
        const torch::Tensor positions =
            std::get<1>(torch::sort((b.targets == -100).to(torch::kInt32), /*stable=*/true,
                                    /*dim=*/1, /*descending=*/false))
                .narrow(1, 0, c_.masked_per_sequence());
        const torch::Tensor picked =
            hidden.gather(1, positions.unsqueeze(-1).expand({-1, -1, hidden.size(-1)}));
        const torch::Tensor logits = net_->head(picked), targets = b.targets.gather(1, positions);
        // Every picked target is a class (none is -100): migscope's cross-entropy, as GPT-2's (2 %
        // off bert-base:32's step against ATen's log-softmax, docs/benchmarks.md §3).
        return cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
    }
    torch::Tensor loss_at_every_position(const Batch& b) {
        return masked_lm_loss(net_->head(net_->encode(b.inputs)), b.targets);
    }
    int64_t items_per_sample() const override { return c_.seq_len; }
    std::string item_unit() const override { return "tokens"; }
    std::optional<double> train_flops_per_sample() const override {
        // The head runs at the masked positions only (loss()).
        const double masked = double(c_.masked_per_sequence()) / double(c_.seq_len);
        const double per_token_matmul =
            c_.layers * (4.0 * c_.dim * c_.dim + 2.0 * c_.dim * c_.ffn) +
            masked * (1.0 * c_.dim * c_.dim + 1.0 * c_.dim * c_.vocab);
        return c_.seq_len * (6.0 * per_token_matmul +
                             attention_train_flops_per_token(c_.layers, c_.seq_len, c_.dim,
                                                             Causality::kBidirectional));
    }
    bool trains_with_bf16_weights() const override { return true; }
    void prepare_finetune(const FinetuneOptions&) override {
        freeze(*net_);
        unfreeze(*net_->blocks->ptr(net_->blocks->size() - 1));
        net_->transform = net_->replace_module("transform", torch::nn::Linear(c_.dim, c_.dim));
        net_->transform_ln = net_->replace_module(
            "transform_ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c_.dim}).eps(1e-12)));
        net_->decoder_bias.set_requires_grad(true);
    }

  private:
    static torch::Tensor masked_lm_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
        return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}),
                                F::CrossEntropyFuncOptions().ignore_index(-100));
    }
    BertConfig c_;
    Bert net_;
};

// ---- GPT-2 -----------------------------------------------------------------------------------
struct Gpt2Impl : torch::nn::Module {
    explicit Gpt2Impl(const Gpt2Config& c) : config(c) {
        wte = register_module("wte", torch::nn::Embedding(c.vocab, c.dim));
        wpe = register_module("wpe", torch::nn::Embedding(c.context, c.dim));
        blocks = register_module(
            "blocks", make_blocks(c.layers, c.dim, c.heads, 4 * c.dim, NormPlacement::kPreNorm,
                                  Causality::kCausal, Gelu::kTanh, 1e-5));
        ln_f = register_module(
            "ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim}).eps(1e-5)));
        init_transformer_weights(*this);
        // GPT-2 scales the residual projections by 1/sqrt(2 * layers).
        torch::NoGradGuard no_grad;
        const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));
        for (auto& block : *blocks) {
            BlockImpl* b = block->as<BlockImpl>();
            b->attention->out->weight.normal_(0.0, residual_std);
            b->mlp->down->weight.normal_(0.0, residual_std);
        }
    }
    // [B,T] -> logits [B,T,V padded to a multiple of 64; the padding's logits are -inf]
    torch::Tensor forward(const torch::Tensor& ids) {
        auto positions = torch::arange(ids.size(1), ids.options());
        const Residual r = run_blocks(blocks, to_residual_dtype(wte(ids) + wpe(positions)));
        return logits_with_aligned_rows(add_layer_norm(r.x, r.delta, r.bias, ln_f).normed,
                                        wte->weight);  // head tied to wte
    }
    Gpt2Config config;
    torch::nn::Embedding wte{nullptr}, wpe{nullptr};
    torch::nn::ModuleList blocks{nullptr};
    torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(Gpt2);

class Gpt2Model : public Model {
  public:
    explicit Gpt2Model(const Gpt2Config& c) : c_(c), net_(c) {}
    torch::nn::Module& module() override { return *net_; }
    Batch synthetic_batch(int64_t batch, torch::Device device) override {
        auto f = torch::TensorOptions().device(device).dtype(torch::kInt64);
        return {torch::randint(0, c_.vocab, {batch, c_.seq_len}, f),
                torch::randint(0, c_.vocab, {batch, c_.seq_len}, f)};
    }
    HostBatchMaker file_data(const std::string& path, int64_t batch) override {
        auto file = std::make_shared<const TokenFile>(path, c_.vocab);
        const int64_t seq_len = c_.seq_len;
        return [file, batch, seq_len](torch::Generator& rng) {
            return file->next_token_batch(batch, seq_len, rng);
        };
    }
    torch::Tensor loss(const Batch& b) override {
        const torch::Tensor logits = net_->forward(b.inputs);
        return cross_entropy(logits.view({-1, logits.size(-1)}), b.targets.view({-1}));
    }
    int64_t items_per_sample() const override { return c_.seq_len; }
    std::string item_unit() const override { return "tokens"; }
    std::optional<double> train_flops_per_sample() const override {
        // 6N + 6*L*C*T per token (N all parameters), as llm.c counts.
        return c_.seq_len *
               (6.0 * gpt2_parameter_count(c_) +
                attention_train_flops_per_token(c_.layers, c_.seq_len, c_.dim, Causality::kCausal));
    }
    bool trains_with_bf16_weights() const override { return true; }
    void prepare_finetune(const FinetuneOptions& options) override {
        freeze(*net_);
        for (auto& block : *net_->blocks) {
            BlockImpl* b = block->as<BlockImpl>();
            b->attention->add_lora(options.lora_rank, options.lora_alpha);
            b->mlp->add_lora(options.lora_rank, options.lora_alpha);
        }
        // On CUDA the trainer then holds the frozen base in bf16 (trains_with_bf16_weights).
    }

  private:
    Gpt2Config c_;
    Gpt2 net_;
};

}  // namespace

int64_t vit_parameter_count(const VitConfig& c) {
    return (3 * c.patch * c.patch * c.dim + c.dim) + c.dim + c.tokens() * c.dim +
           c.depth * block_parameter_count(c.dim, c.mlp) + 2 * c.dim +
           (c.dim * c.classes + c.classes);
}

int64_t bert_parameter_count(const BertConfig& c) {
    const int64_t embeddings = (c.vocab + c.max_positions + c.token_types) * c.dim + 2 * c.dim;
    const int64_t head = (c.dim * c.dim + c.dim) + 2 * c.dim + c.vocab;  // decoder weight is tied
    return embeddings + c.layers * block_parameter_count(c.dim, c.ffn) + head;
}

int64_t gpt2_parameter_count(const Gpt2Config& c) {
    return (c.vocab + c.context) * c.dim + c.layers * block_parameter_count(c.dim, 4 * c.dim) +
           2 * c.dim;
}

std::unique_ptr<Model> make_vit(const VitConfig& c) {
    return std::make_unique<VitModel>(c);
}
std::unique_ptr<Model> make_bert(const BertConfig& c) {
    return std::make_unique<BertModel>(c);
}
std::unique_ptr<Model> make_gpt2(const Gpt2Config& c) {
    return std::make_unique<Gpt2Model>(c);
}

int64_t BertConfig::masked_per_sequence() const {
    return std::max<int64_t>(1, std::llround(mask_fraction * double(seq_len)));
}

torch::Tensor bert_loss_at_every_position(Model& bert, const Batch& batch) {
    return dynamic_cast<BertModel&>(bert).loss_at_every_position(batch);
}

}  // namespace migscope::workloads
