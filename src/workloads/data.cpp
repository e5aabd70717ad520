// Token and CIFAR-10 file readers, the device-side image resize, and the prefetching thread.
#include "workloads/data.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace migscope::workloads {
namespace {

constexpr int32_t kTokenMagic = 20240520;
constexpr int32_t kTokenVersion = 1;
constexpr int64_t kTokenHeaderInts = 256;

std::vector<char> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in)
        throw std::invalid_argument("cannot read data file '" + path + "'");
    std::vector<char> bytes(static_cast<size_t>(in.tellg()));
    in.seekg(0);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return bytes;
}

}  // namespace

TokenFile::TokenFile(const std::string& path, int64_t vocabulary) {
    const std::vector<char> bytes = read_all(path);
    const auto fail = [&](const std::string& why) {
        throw std::invalid_argument("token file '" + path + "': " + why);
    };
    if (bytes.size() < kTokenHeaderInts * sizeof(int32_t))
        fail("shorter than its 1024-byte header");
    int32_t header[3];
    std::memcpy(header, bytes.data(), sizeof(header));
    if (header[0] != kTokenMagic) {
        fail("bad magic " + std::to_string(header[0]) + " (expected " +
             std::to_string(kTokenMagic) + ")");
    }
    if (header[1] != kTokenVersion)
        fail("unsupported version " + std::to_string(header[1]));
    const int64_t count = header[2];
    const int64_t expected = kTokenHeaderInts * 4 + 2 * count;
    if (count <= 0 || static_cast<int64_t>(bytes.size()) != expected) {
        fail("size mismatch: header says " + std::to_string(count) + " tokens (" +
             std::to_string(expected) + " bytes), file has " + std::to_string(bytes.size()) +
             " bytes");
    }
    tokens_.resize(static_cast<size_t>(count));
    std::memcpy(tokens_.data(), bytes.data() + kTokenHeaderInts * 4,
                tokens_.size() * sizeof(uint16_t));
    for (size_t i = 0; i < tokens_.size(); ++i) {
        if (tokens_[i] >= vocabulary) {
            fail("token " + std::to_string(tokens_[i]) + " at position " + std::to_string(i) +
                 " is not below the vocabulary size " + std::to_string(vocabulary));
        }
    }
}

torch::Tensor TokenFile::windows(int64_t batch, int64_t length, torch::Generator& rng) const {
    if (size() < length) {
        throw std::invalid_argument("token file holds " + std::to_string(size()) +
                                    " tokens, fewer than one window of " + std::to_string(length));
    }
    torch::Tensor starts = torch::randint(0, size() - length + 1, {batch}, rng);
    torch::Tensor out = torch::empty({batch, length}, torch::kInt64);
    auto o = out.accessor<int64_t, 2>();
    auto s = starts.accessor<int64_t, 1>();
    for (int64_t b = 0; b < batch; ++b) {
        for (int64_t t = 0; t < length; ++t)
            o[b][t] = tokens_[static_cast<size_t>(s[b] + t)];
    }
    return out;
}

Batch TokenFile::next_token_batch(int64_t batch, int64_t seq_len, torch::Generator& rng) const {
    torch::Tensor w = windows(batch, seq_len + 1, rng);
    return {w.slice(1, 0, seq_len).contiguous(), w.slice(1, 1, seq_len + 1).contiguous()};
}

Batch TokenFile::masked_batch(int64_t batch, int64_t seq_len, double mask_fraction,
                              int64_t mask_token, torch::Generator& rng) const {
    torch::Tensor ids = windows(batch, seq_len, rng);
    torch::Tensor masked = torch::rand({batch, seq_len}, rng) < mask_fraction;
    return {torch::where(masked, torch::full_like(ids, mask_token), ids),
            torch::where(masked, ids, torch::full_like(ids, -100))};
}

Cifar10File::Cifar10File(const std::string& path) {
    const std::vector<char> bytes = read_all(path);
    if (bytes.empty() || bytes.size() % kRecordBytes != 0) {
        throw std::invalid_argument("CIFAR-10 file '" + path + "': size " +
                                    std::to_string(bytes.size()) +
                                    " is not a whole number of 3073-byte records");
    }
    const size_t records = bytes.size() / kRecordBytes;
    labels_.resize(records);
    pixels_.resize(records * (kRecordBytes - 1));
    for (size_t r = 0; r < records; ++r) {
        const char* record = bytes.data() + r * kRecordBytes;
        labels_[r] = static_cast<uint8_t>(record[0]);
        if (labels_[r] >= 10) {
            throw std::invalid_argument("CIFAR-10 file '" + path + "': record " +
                                        std::to_string(r) + " has label " +
                                        std::to_string(labels_[r]) + " (expected 0-9)");
        }
        std::memcpy(pixels_.data() + r * (kRecordBytes - 1), record + 1, kRecordBytes - 1);
    }
}

Batch Cifar10File::batch(int64_t batch, torch::Generator& rng) const {
    torch::Tensor pick = torch::randint(0, size(), {batch}, rng);
    torch::Tensor images = torch::empty({batch, 3, 32, 32}, torch::kUInt8);
    torch::Tensor labels = torch::empty({batch}, torch::kInt64);
    auto p = pick.accessor<int64_t, 1>();
    for (int64_t b = 0; b < batch; ++b) {
        const auto r = static_cast<size_t>(p[b]);
        std::memcpy(images[b].data_ptr<uint8_t>(), pixels_.data() + r * (kRecordBytes - 1),
                    kRecordBytes - 1);
        labels[b] = static_cast<int64_t>(labels_[r]);
    }
    return {images, labels};
}

torch::Tensor resize_images(const torch::Tensor& images, int64_t size) {
    namespace F = torch::nn::functional;
    torch::Tensor x = images.to(torch::kFloat32).div_(127.5).sub_(1.0);
    if (x.size(2) == size && x.size(3) == size)
        return x;
    return F::interpolate(x, F::InterpolateFuncOptions()
                                 .size(std::vector<int64_t>{size, size})
                                 .mode(torch::kBilinear)
                                 .align_corners(false));
}

Prefetcher::Prefetcher(Make make, torch::Device device, size_t depth)
    : make_(std::move(make)), device_(device), depth_(depth), thread_([this] { loop(); }) {}

Prefetcher::~Prefetcher() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void Prefetcher::loop() {
    while (true) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [this] { return stop_ || ready_.size() < depth_; });
            if (stop_)
                return;
        }
        Batch b;
        try {
            b = make_();
            if (device_.is_cuda()) {
                b.inputs = b.inputs.pin_memory();
                b.targets = b.targets.pin_memory();
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex_);
            failure_ = std::current_exception();
            changed_.notify_all();
            return;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.push_back(std::move(b));
        changed_.notify_all();
    }
}

Batch Prefetcher::next() {
    Batch b;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return !ready_.empty() || failure_; });
        if (ready_.empty())
            std::rethrow_exception(failure_);
        b = std::move(ready_.front());
        ready_.pop_front();
    }
    changed_.notify_all();
    return {b.inputs.to(device_, /*non_blocking=*/true),
            b.targets.to(device_, /*non_blocking=*/true)};
}

}  // namespace migscope::workloads
