// Real training data: llm.c token files for the language models, CIFAR-10 binary batches and raw
// uint8 image arrays (NumPy .npy) for the image models. Files are checked whole before training
// starts; batches are prepared ahead of the GPU on their own thread in pinned memory.
#pragma once

#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "workloads/models/model.h"

namespace migscope::workloads {

// A boolean mask of `scores`' shape with exactly `per_row` true entries in each row, where the
// scores are largest (uniform random scores: positions chosen uniformly, as BERT's own data
// pipeline masks a fixed count per sequence).
torch::Tensor top_scores_mask(const torch::Tensor& scores, int64_t per_row);

// An llm.c token file: a header of 256 int32 (magic 20240520, version 1, token count), then the
// tokens as uint16. Throws std::invalid_argument with the reason when the file is malformed or a
// token is not below `vocabulary`.
class TokenFile {
  public:
    TokenFile(const std::string& path, int64_t vocabulary);
    int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
    // `batch` random windows of seq_len + 1 tokens: inputs [B,T] and next-token targets [B,T].
    Batch next_token_batch(int64_t batch, int64_t seq_len, torch::Generator& rng) const;
    // `batch` random windows of seq_len tokens, masked for BERT: `masked_per_row` random positions
    // of each row get mask_token in the inputs, their original ids in the targets, -100 elsewhere.
    Batch masked_batch(int64_t batch, int64_t seq_len, int64_t masked_per_row, int64_t mask_token,
                       torch::Generator& rng) const;

  private:
    torch::Tensor windows(int64_t batch, int64_t length, torch::Generator& rng) const;
    std::vector<uint16_t> tokens_;
};

// CIFAR-10 binary batches: records of one label byte and 3x32x32 pixel bytes (planar RGB).
class Cifar10File {
  public:
    static constexpr int64_t kRecordBytes = 1 + 3 * 32 * 32;
    explicit Cifar10File(const std::string& path);  // std::invalid_argument when malformed
    int64_t size() const { return static_cast<int64_t>(labels_.size()); }
    // A random batch: uint8 images [B,3,32,32] and labels [B] (resize happens on the device).
    Batch batch(int64_t batch, torch::Generator& rng) const;

  private:
    std::vector<uint8_t> labels_;
    std::vector<uint8_t> pixels_;  // size() * 3072
};

// Raw uint8 image arrays: images in a NumPy .npy file, uint8 [N,H,W,3] (channels last) or
// [N,3,H,W], and their integer labels [N] in a second one; any H and W (resized on the device).
// Named together as "IMAGES.npy,LABELS.npy". Throws std::invalid_argument with the reason (not
// .npy, not uint8, Fortran order, shape, size mismatch, label count or range).
class ImageArrayFile {
  public:
    ImageArrayFile(const std::string& images_path, const std::string& labels_path, int64_t classes);
    int64_t size() const { return static_cast<int64_t>(labels_.size()); }
    int64_t height() const { return height_; }
    int64_t width() const { return width_; }
    // A random batch: uint8 images [B,3,H,W] and labels [B].
    Batch batch(int64_t batch, torch::Generator& rng) const;

  private:
    int64_t height_ = 0;
    int64_t width_ = 0;
    bool channels_last_ = true;
    std::vector<uint8_t> pixels_;  // size() * H * W * 3, as in the file
    std::vector<int64_t> labels_;
};

// Splits "IMAGES.npy,LABELS.npy" into its two paths; nullopt when `data` is not of that form.
std::optional<std::pair<std::string, std::string>> image_array_paths(const std::string& data);

// uint8 images [B,3,h,w] on the device -> float [B,3,size,size], bilinear, scaled to [-1, 1].
torch::Tensor resize_images(const torch::Tensor& images, int64_t size);

// Prepares batches on a background thread (pinned host memory when the target is CUDA) and hands
// them over on the device, `depth` batches ahead.
class Prefetcher {
  public:
    using Make = std::function<Batch()>;  // runs on the loader thread, returns host tensors
    Prefetcher(Make make, torch::Device device, size_t depth = 2);
    ~Prefetcher();
    Batch next();

  private:
    void loop();
    Make make_;
    torch::Device device_;
    size_t depth_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Batch> ready_;
    std::exception_ptr failure_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace migscope::workloads
