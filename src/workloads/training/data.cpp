// Token, CIFAR-10 and .npy image-array readers, the device-side image resize, and the prefetching
// thread.
#include "workloads/training/data.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <functional>
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

// A NumPy .npy array as stored: its dtype string, order, shape and data bytes.
struct NpyArray {
    std::string descr;  // e.g. "|u1", "<i8"
    bool fortran_order = false;
    std::vector<int64_t> shape;
    std::vector<char> bytes;  // the whole file
    size_t data_offset = 0;
};

// The value after 'key': in a .npy header dict, up to (not including) the next top-level comma
// or closing brace; a tuple is returned with its parentheses.
std::string header_value(const std::string& header, const std::string& key,
                         const std::function<void(const std::string&)>& fail) {
    const size_t at = header.find("'" + key + "':");
    if (at == std::string::npos)
        fail("its header has no '" + key + "'");
    size_t i = at + key.size() + 3;
    while (i < header.size() && header[i] == ' ')
        ++i;
    const size_t end = header[i] == '(' ? header.find(')', i) + 1 : header.find_first_of(",}", i);
    if (end == std::string::npos || end == 0)
        fail("its header's '" + key + "' is not terminated");
    return header.substr(i, end - i);
}

NpyArray read_npy(const std::string& path, const std::string& what) {
    const auto fail = [&](const std::string& why) {
        throw std::invalid_argument(what + " '" + path + "': " + why);
    };
    NpyArray a;
    a.bytes = read_all(path);
    const std::vector<char>& b = a.bytes;
    if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0)
        fail("not a NumPy .npy file (bad magic)");
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(b[i]); };
    size_t header_bytes = 0;
    size_t start = 0;
    if (byte(6) == 1) {
        header_bytes = byte(8) | byte(9) << 8;
        start = 10;
    } else if ((byte(6) == 2 || byte(6) == 3) && b.size() >= 12) {
        header_bytes =
            byte(8) | byte(9) << 8 | byte(10) << 16 | static_cast<size_t>(byte(11)) << 24;
        start = 12;
    } else {
        fail("unsupported .npy version " + std::to_string(byte(6)));
    }
    if (start + header_bytes > b.size())
        fail("header longer than the file");
    const std::string header(b.data() + start, header_bytes);
    std::string descr = header_value(header, "descr", fail);
    if (descr.size() < 2 || descr.front() != '\'' || descr.back() != '\'')
        fail("its dtype " + descr + " is not a quoted string");
    a.descr = descr.substr(1, descr.size() - 2);
    a.fortran_order = header_value(header, "fortran_order", fail) == "True";
    const std::string shape = header_value(header, "shape", fail);
    std::string number;
    for (char c : shape.substr(1)) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            number += c;
        } else if (!number.empty()) {
            a.shape.push_back(std::stoll(number));
            number.clear();
        }
    }
    a.data_offset = start + header_bytes;
    return a;
}

// Bytes per element of a little-endian (or byte-sized) integer dtype; 0 for anything else.
size_t integer_bytes(const std::string& descr) {
    static const std::vector<std::string> kOk = {"|u1", "|i1", "<u1", "<i1", "<u2",
                                                 "<i2", "<u4", "<i4", "<u8", "<i8"};
    if (std::find(kOk.begin(), kOk.end(), descr) == kOk.end())
        return 0;
    return static_cast<size_t>(descr[2] - '0');
}

int64_t read_integer(const char* p, const std::string& descr) {
    const bool is_signed = descr[1] == 'i';
    switch (integer_bytes(descr)) {
        case 1: {
            return is_signed ? static_cast<int64_t>(static_cast<int8_t>(*p))
                             : static_cast<int64_t>(static_cast<uint8_t>(*p));
        }
        case 2: {
            uint16_t v;
            std::memcpy(&v, p, 2);
            return is_signed ? static_cast<int16_t>(v) : static_cast<int64_t>(v);
        }
        case 4: {
            uint32_t v;
            std::memcpy(&v, p, 4);
            return is_signed ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
        }
        default: {
            int64_t v;
            std::memcpy(&v, p, 8);
            return v;
        }
    }
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

torch::Tensor top_scores_mask(const torch::Tensor& scores, int64_t per_row) {
    const torch::Tensor chosen = std::get<1>(scores.topk(per_row, /*dim=*/1));
    return torch::zeros_like(scores, scores.options().dtype(torch::kBool))
        .scatter_(1, chosen, true);
}

Batch TokenFile::masked_batch(int64_t batch, int64_t seq_len, int64_t masked_per_row,
                              int64_t mask_token, torch::Generator& rng) const {
    torch::Tensor ids = windows(batch, seq_len, rng);
    torch::Tensor masked = top_scores_mask(torch::rand({batch, seq_len}, rng), masked_per_row);
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

ImageArrayFile::ImageArrayFile(const std::string& images_path, const std::string& labels_path,
                               int64_t classes) {
    const NpyArray images = read_npy(images_path, "image array");
    const auto fail = [&](const std::string& path, const std::string& why) {
        throw std::invalid_argument("image array '" + path + "': " + why);
    };
    if (images.descr != "|u1" && images.descr != "<u1")
        fail(images_path, "dtype " + images.descr + " is not uint8 (|u1)");
    if (images.fortran_order)
        fail(images_path, "Fortran order is not supported (save it C-contiguous)");
    const std::vector<int64_t>& s = images.shape;
    if (s.size() != 4 || (s[3] != 3 && s[1] != 3))
        fail(images_path, "shape must be [N,H,W,3] or [N,3,H,W]");
    channels_last_ = s[3] == 3;
    height_ = channels_last_ ? s[1] : s[2];
    width_ = channels_last_ ? s[2] : s[3];
    const size_t expected = static_cast<size_t>(s[0] * s[1] * s[2] * s[3]);
    const size_t present = images.bytes.size() - images.data_offset;
    if (s[0] <= 0 || height_ <= 0 || width_ <= 0 || present != expected) {
        fail(images_path, "size mismatch: shape needs " + std::to_string(expected) +
                              " bytes of pixels, the file has " + std::to_string(present));
    }
    const NpyArray labels = read_npy(labels_path, "label array");
    const size_t label_bytes = integer_bytes(labels.descr);
    if (label_bytes == 0)
        fail(labels_path, "dtype " + labels.descr + " is not a little-endian integer");
    if (labels.shape.size() != 1 || labels.shape[0] != s[0]) {
        fail(labels_path,
             "expected " + std::to_string(s[0]) + " labels (one per image) in a 1-D array");
    }
    if (labels.bytes.size() - labels.data_offset != label_bytes * static_cast<size_t>(s[0]))
        fail(labels_path, "size mismatch with its shape");
    labels_.resize(static_cast<size_t>(s[0]));
    for (size_t i = 0; i < labels_.size(); ++i) {
        labels_[i] =
            read_integer(labels.bytes.data() + labels.data_offset + i * label_bytes, labels.descr);
        if (labels_[i] < 0 || labels_[i] >= classes) {
            fail(labels_path, "label " + std::to_string(labels_[i]) + " of image " +
                                  std::to_string(i) + " is outside 0-" +
                                  std::to_string(classes - 1));
        }
    }
    pixels_.assign(images.bytes.begin() + static_cast<std::ptrdiff_t>(images.data_offset),
                   images.bytes.end());
}

Batch ImageArrayFile::batch(int64_t batch, torch::Generator& rng) const {
    torch::Tensor pick = torch::randint(0, size(), {batch}, rng);
    const int64_t image_bytes = 3 * height_ * width_;
    torch::Tensor images = channels_last_
                               ? torch::empty({batch, height_, width_, 3}, torch::kUInt8)
                               : torch::empty({batch, 3, height_, width_}, torch::kUInt8);
    torch::Tensor labels = torch::empty({batch}, torch::kInt64);
    auto p = pick.accessor<int64_t, 1>();
    for (int64_t b = 0; b < batch; ++b) {
        const auto r = static_cast<size_t>(p[b]);
        std::memcpy(images[b].data_ptr<uint8_t>(), pixels_.data() + r * image_bytes,
                    static_cast<size_t>(image_bytes));
        labels[b] = labels_[r];
    }
    if (channels_last_)
        images = images.permute({0, 3, 1, 2}).contiguous();
    return {images, labels};
}

std::optional<std::pair<std::string, std::string>> image_array_paths(const std::string& data) {
    const size_t comma = data.find(',');
    if (comma == std::string::npos || data.find(',', comma + 1) != std::string::npos)
        return std::nullopt;
    std::pair<std::string, std::string> paths{data.substr(0, comma), data.substr(comma + 1)};
    const auto is_npy = [](const std::string& p) {
        return p.size() > 4 && p.compare(p.size() - 4, 4, ".npy") == 0;
    };
    if (!is_npy(paths.first) || !is_npy(paths.second))
        return std::nullopt;
    return paths;
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
