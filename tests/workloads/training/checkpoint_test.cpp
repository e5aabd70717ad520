// Tests of safetensors checkpoints: round trips, partial matches, dtype conversion and every way a
// file can be malformed (CPU, tiny models).
#include "workloads/training/checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "workloads/models/registry.h"

using namespace migscope::workloads;

namespace {

std::string temp_path(const std::string& name) {
    return testing::TempDir() + "/checkpoint-" + name + ".safetensors";
}

// Writes a safetensors file by hand: header JSON (as given) and raw data bytes.
void write_file(const std::string& path, const std::string& header, const std::string& data) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
        out.put(static_cast<char>(n >> (8 * i)));
    out << header << data;
}

std::string floats(std::initializer_list<float> values) {
    std::string bytes(values.size() * 4, '\0');
    std::memcpy(bytes.data(), std::data(values), bytes.size());
    return bytes;
}

std::string load_error(torch::nn::Module& m, const std::string& path) {
    try {
        load_checkpoint(m, path);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Checkpoint, RoundTripRestoresEveryParameterAndBuffer) {
    torch::manual_seed(1);
    auto trained = make_model("resnet-tiny");
    const std::string path = temp_path("roundtrip");
    save_checkpoint(trained->module(), path);

    torch::manual_seed(2);
    auto fresh = make_model("resnet-tiny");
    const CheckpointLoad load = load_checkpoint(fresh->module(), path);
    EXPECT_TRUE(load.missing.empty());
    EXPECT_TRUE(load.unused.empty());
    const auto a = trained->module().named_parameters(true);
    const auto b = fresh->module().named_parameters(true);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(load.loaded, a.size() + trained->module().named_buffers(true).size());
    for (size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(torch::equal(a[i].value(), b[i].value())) << a[i].key();
    for (const auto& buffer : trained->module().named_buffers(true)) {
        EXPECT_TRUE(torch::equal(buffer.value(), fresh->module().named_buffers(true)[buffer.key()]))
            << buffer.key();
    }
}

TEST(Checkpoint, ReportsMissingAndUnusedTensorsAndConvertsTheDtype) {
    torch::nn::Linear linear(2, 2);
    // bf16 1.0 = 0x3f80, 2.0 = 0x4000 (little-endian), for a float32 weight.
    const std::string weight_bf16 = std::string("\x80\x3f\x00\x40\x80\x3f\x00\x40", 8);
    const std::string path = temp_path("partial");
    write_file(path,
               R"({"weight": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]},)"
               R"( "extra": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]},)"
               R"( "__metadata__": {"format": "pt"}})",
               weight_bf16 + floats({7.0f}));
    const CheckpointLoad load = load_checkpoint(*linear, path);
    EXPECT_EQ(load.loaded, 1u);
    EXPECT_EQ(load.missing, std::vector<std::string>{"bias"});
    EXPECT_EQ(load.unused, std::vector<std::string>{"extra"});
    EXPECT_TRUE(torch::equal(linear->weight, torch::tensor({{1.0f, 2.0f}, {1.0f, 2.0f}})));
}

TEST(Checkpoint, AShapeMismatchNamesTheTensorAndChangesNothing) {
    torch::nn::Linear saved(4, 3);
    const std::string path = temp_path("shape");
    save_checkpoint(*saved, path);
    torch::nn::Linear other(4, 2);
    const torch::Tensor before = other->bias.clone();
    const std::string error = load_error(*other, path);
    EXPECT_NE(error.find("tensor bias has shape [3], the model's is [2]"), std::string::npos)
        << error;
    EXPECT_TRUE(torch::equal(other->bias, before));  // checked before anything is copied
}

TEST(Checkpoint, MalformedFilesAreRejectedWithTheReason) {
    torch::nn::Linear linear(1, 1);
    const auto error_for = [&](const std::string& name, const std::string& header,
                               const std::string& data) {
        const std::string path = temp_path(name);
        write_file(path, header, data);
        return load_error(*linear, path);
    };
    const std::string tiny = temp_path("tiny");
    std::ofstream(tiny, std::ios::binary) << "abc";
    EXPECT_NE(load_error(*linear, tiny).find("shorter than the 8-byte header"), std::string::npos);
    EXPECT_NE(load_error(*linear, temp_path("absent")).find("cannot open"), std::string::npos);
    EXPECT_NE(error_for("json", "{not json", "").find("not JSON"), std::string::npos);
    EXPECT_NE(
        error_for("dtype",
                  R"({"weight": {"dtype": "F8", "shape": [1, 1], "data_offsets": [0, 1]}})", "x")
            .find("unknown dtype"),
        std::string::npos);
    EXPECT_NE(
        error_for("past",
                  R"({"weight": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}})", "xy")
            .find("past the end"),
        std::string::npos);
    EXPECT_NE(error_for("size",
                        R"({"weight": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 2]}})",
                        "xyzw")
                  .find("its shape and dtype need 4"),
              std::string::npos);
    EXPECT_NE(
        error_for("noshape", R"({"weight": {"dtype": "F32", "data_offsets": [0, 4]}})", "xyzw")
            .find("weight.shape: missing field"),
        std::string::npos);
    // A header length beyond the file.
    const std::string huge = temp_path("huge");
    {
        std::ofstream out(huge, std::ios::binary);
        const uint64_t n = 1000;
        out.write(reinterpret_cast<const char*>(&n), 8);
        out << "{}";
    }
    EXPECT_NE(load_error(*linear, huge).find("past the file's"), std::string::npos);
}
