// safetensors reading and writing: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the raw tensor bytes.
#include "workloads/training/checkpoint.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/user_text.h"

namespace migscope::workloads {
namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the format's own limit

const std::map<std::string, torch::ScalarType>& dtypes() {
    static const std::map<std::string, torch::ScalarType> table = {
        {"F64", torch::kFloat64},   {"F32", torch::kFloat32}, {"F16", torch::kFloat16},
        {"BF16", torch::kBFloat16}, {"I64", torch::kInt64},   {"I32", torch::kInt32},
        {"I16", torch::kInt16},     {"I8", torch::kInt8},     {"U8", torch::kUInt8},
        {"BOOL", torch::kBool}};
    return table;
}

std::string dtype_name(torch::ScalarType type) {
    for (const auto& [name, t] : dtypes()) {
        if (t == type)
            return name;
    }
    throw std::invalid_argument(std::string("checkpoint: cannot store dtype ") +
                                c10::toString(type));
}

std::string shape_text(c10::IntArrayRef shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// One tensor of the file, checked against the file's size.
struct Entry {
    torch::ScalarType dtype;
    std::vector<int64_t> shape;
    uint64_t begin = 0;  // from the start of the data section
    uint64_t bytes = 0;
};

std::map<std::string, Entry> read_header(std::ifstream& in, const std::string& path,
                                         uint64_t& data_start) {
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument("checkpoint " + path + ": " + why);
    };
    in.seekg(0, std::ios::end);
    const uint64_t file_bytes = static_cast<uint64_t>(in.tellg());
    in.seekg(0);
    uint8_t length_bytes[8] = {};
    if (file_bytes < 8 || !in.read(reinterpret_cast<char*>(length_bytes), 8))
        throw bad("shorter than the 8-byte header length (not a safetensors file)");
    uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i)
        header_bytes = header_bytes << 8 | length_bytes[i];
    if (header_bytes > kMaxHeaderBytes || header_bytes > file_bytes - 8)
        throw bad("header length " + std::to_string(header_bytes) + " is past the file's " +
                  std::to_string(file_bytes) + " bytes (not a safetensors file)");
    std::string text(header_bytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(header_bytes));
    data_start = 8 + header_bytes;
    const uint64_t data_bytes = file_bytes - data_start;
    json header;
    try {
        header = json::parse(text);
    } catch (const json::exception& e) {
        throw bad(std::string("header is not JSON: ") + e.what());
    }
    if (!header.is_object())
        throw bad("header is not a JSON object");
    std::map<std::string, Entry> entries;
    for (const auto& [name, t] : header.items()) {
        if (name == "__metadata__")
            continue;
        const auto field = [&](const char* key) -> const json& {
            if (!t.is_object())
                throw bad(
                    strict::wrong_type(user_text::shown(name), "an object", json_type(t)).what());
            if (!t.contains(key))
                throw bad(
                    strict::missing_field(strict::field_path(user_text::shown(name), key)).what());
            return t.at(key);
        };
        const json& dtype = field("dtype");
        if (!dtype.is_string() || !dtypes().contains(dtype.get<std::string>()))
            throw bad("tensor " + name + " has unknown dtype " + dtype.dump());
        Entry e;
        e.dtype = dtypes().at(dtype.get<std::string>());
        int64_t numel = 1;
        for (const json& d : field("shape")) {
            if (!d.is_number_integer() || d.get<int64_t>() < 0)
                throw bad("tensor " + name + " has a bad shape " + field("shape").dump());
            e.shape.push_back(d.get<int64_t>());
            numel *= e.shape.back();
        }
        const json& offsets = field("data_offsets");
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
            !offsets[1].is_number_unsigned())
            throw bad("tensor " + name + " has bad data_offsets " + offsets.dump());
        const uint64_t begin = offsets[0].get<uint64_t>();
        const uint64_t end = offsets[1].get<uint64_t>();
        const uint64_t expected = static_cast<uint64_t>(numel) * c10::elementSize(e.dtype);
        if (begin > end || end > data_bytes)
            throw bad("tensor " + name + " lies past the end of the file (bytes " +
                      std::to_string(begin) + "-" + std::to_string(end) + " of " +
                      std::to_string(data_bytes) + ")");
        if (end - begin != expected)
            throw bad("tensor " + name + " has " + std::to_string(end - begin) +
                      " bytes, its shape and dtype need " + std::to_string(expected));
        e.begin = begin;
        e.bytes = end - begin;
        entries.emplace(name, std::move(e));
    }
    return entries;
}

// The module's parameters and buffers by their full dotted names.
std::map<std::string, torch::Tensor> module_tensors(torch::nn::Module& module) {
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& p : module.named_parameters(true))
        tensors.emplace(p.key(), p.value());
    for (const auto& b : module.named_buffers(true))
        tensors.emplace(b.key(), b.value());
    return tensors;
}

}  // namespace

CheckpointLoad load_checkpoint(torch::nn::Module& module, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::invalid_argument("checkpoint " + path + ": cannot open it");
    uint64_t data_start = 0;
    const std::map<std::string, Entry> entries = read_header(in, path, data_start);
    const std::map<std::string, torch::Tensor> tensors = module_tensors(module);

    CheckpointLoad result;
    for (const auto& [name, e] : entries) {
        const auto it = tensors.find(name);
        if (it == tensors.end()) {
            result.unused.push_back(name);
        } else if (it->second.sizes() != c10::IntArrayRef(e.shape)) {
            throw std::invalid_argument("checkpoint " + path + ": tensor " + name + " has shape " +
                                        shape_text(e.shape) + ", the model's is " +
                                        shape_text(it->second.sizes()));
        }
    }
    torch::NoGradGuard no_grad;
    for (const auto& [name, target] : tensors) {
        const auto it = entries.find(name);
        if (it == entries.end()) {
            result.missing.push_back(name);
            continue;
        }
        const Entry& e = it->second;
        torch::Tensor host = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype));
        in.seekg(static_cast<std::streamoff>(data_start + e.begin));
        if (!in.read(static_cast<char*>(host.data_ptr()), static_cast<std::streamsize>(e.bytes)))
            throw std::invalid_argument("checkpoint " + path + ": cannot read tensor " + name);
        target.copy_(host.to(target.dtype()));
        ++result.loaded;
    }
    return result;
}

void save_checkpoint(torch::nn::Module& module, const std::string& path) {
    json header = {{"__metadata__", {{"format", "pt"}, {"writer", "migscope"}}}};
    std::vector<std::pair<std::string, torch::Tensor>> ordered;
    uint64_t offset = 0;
    for (const auto& [name, tensor] : module_tensors(module)) {
        torch::Tensor host = tensor.detach().to(torch::kCPU).contiguous();
        const uint64_t bytes = static_cast<uint64_t>(host.nbytes());
        header[name] = {{"dtype", dtype_name(host.scalar_type())},
                        {"shape", host.sizes().vec()},
                        {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
        ordered.emplace_back(name, host);
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    uint8_t length_bytes[8];
    for (int i = 0; i < 8; ++i)
        length_bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(length_bytes), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, host] : ordered)
        out.write(static_cast<const char*>(host.data_ptr()),
                  static_cast<std::streamsize>(host.nbytes()));
    if (!out.flush())
        throw runtime_error("checkpoint: cannot write " + path);
}

}  // namespace migscope::workloads
