// Tests of the data readers on hand-made files, the device-side resize, and the prefetcher.
#include "workloads/training/data.h"

#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>
#include <cstring>
#include <fstream>

using namespace migscope::workloads;

namespace {
std::string temp(const std::string& name) {
    return testing::TempDir() + "/" + name;
}

// An llm.c token file holding 0, 1, 2, ... count-1; header fields can be overridden.
std::string token_file(const std::string& name, int32_t count, int32_t magic = 20240520,
                       int32_t version = 1, int32_t header_count = -1) {
    std::vector<int32_t> header(256, 0);
    header[0] = magic;
    header[1] = version;
    header[2] = header_count >= 0 ? header_count : count;
    std::vector<uint16_t> tokens(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i)
        tokens[static_cast<size_t>(i)] = static_cast<uint16_t>(i);
    const std::string path = temp(name);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header.data()), 1024);
    out.write(reinterpret_cast<const char*>(tokens.data()),
              static_cast<std::streamsize>(2 * tokens.size()));
    return path;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST(TokenFile, ReadsTokensExactly) {
    TokenFile file(token_file("tokens.bin", 100), 128);
    EXPECT_EQ(file.size(), 100);
    torch::Generator rng = at::detail::createCPUGenerator(1);
    Batch b = file.next_token_batch(4, 16, rng);
    ASSERT_EQ(b.inputs.sizes(), (std::vector<int64_t>{4, 16}));
    // Consecutive tokens 0, 1, 2, ...: every target is its input plus one, every row a run.
    EXPECT_TRUE(torch::equal(b.targets, b.inputs + 1));
    EXPECT_TRUE(torch::equal(b.inputs.slice(1, 1), b.inputs.slice(1, 0, 15) + 1));
    EXPECT_LE(b.targets.max().item<int64_t>(), 99);
}

TEST(TokenFile, MasksForBert) {
    TokenFile file(token_file("bert.bin", 1000), 30522);
    torch::Generator rng = at::detail::createCPUGenerator(2);
    Batch b = file.masked_batch(8, 64, 10, 103, rng);
    torch::Tensor scored = b.targets != -100;
    EXPECT_TRUE(torch::all(b.inputs.masked_select(scored) == 103).item<bool>());
    // Exactly 10 masked positions in every row, at different places in different rows.
    EXPECT_TRUE(torch::all(scored.sum(1) == 10).item<bool>());
    EXPECT_FALSE(torch::equal(scored[0], scored[1]));
    // The unmasked inputs are the file's consecutive tokens.
    const torch::Tensor kept = ~scored;
    EXPECT_TRUE(torch::all(b.inputs.masked_select(kept) < 1000).item<bool>());
}

TEST(TokenFile, RejectsMalformedFilesWithTheReason) {
    EXPECT_NE(
        error_of([] { TokenFile(token_file("magic.bin", 10, 1234), 128); }).find("bad magic 1234"),
        std::string::npos);
    EXPECT_NE(error_of([] {
                  TokenFile(token_file("version.bin", 10, 20240520, 2), 128);
              }).find("unsupported version 2"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  TokenFile(token_file("size.bin", 10, 20240520, 1, 11), 128);
              }).find("size mismatch"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  TokenFile(token_file("vocab.bin", 200), 128);
              }).find("token 128 at position 128 is not below the vocabulary size 128"),
              std::string::npos);
    EXPECT_NE(error_of([] { TokenFile(temp("missing.bin"), 128); }).find("cannot read"),
              std::string::npos);
}

TEST(Cifar10File, ReadsRecordsExactly) {
    const std::string path = temp("cifar.bin");
    {
        std::ofstream out(path, std::ios::binary);
        for (uint8_t label : {3, 7}) {
            std::vector<uint8_t> record(Cifar10File::kRecordBytes,
                                        static_cast<uint8_t>(label * 10));
            record[0] = label;
            out.write(reinterpret_cast<const char*>(record.data()),
                      static_cast<std::streamsize>(record.size()));
        }
    }
    Cifar10File file(path);
    EXPECT_EQ(file.size(), 2);
    torch::Generator rng = at::detail::createCPUGenerator(3);
    Batch b = file.batch(6, rng);
    ASSERT_EQ(b.inputs.sizes(), (std::vector<int64_t>{6, 3, 32, 32}));
    for (int64_t i = 0; i < 6; ++i) {
        const int64_t label = b.targets[i].item<int64_t>();
        EXPECT_TRUE(label == 3 || label == 7);
        EXPECT_TRUE(torch::all(b.inputs[i] == label * 10).item<bool>());  // pixels of that record
    }
}

TEST(Cifar10File, RejectsMalformedFiles) {
    const std::string short_path = temp("short.bin");
    std::ofstream(short_path, std::ios::binary) << std::string(3000, '\0');
    EXPECT_NE(error_of([&] { Cifar10File{short_path}; }).find("3073-byte records"),
              std::string::npos);
    const std::string label_path = temp("label.bin");
    std::ofstream(label_path, std::ios::binary)
        << std::string(1, '\x0c') << std::string(3072, '\0');
    EXPECT_NE(error_of([&] { Cifar10File{label_path}; }).find("label 12"), std::string::npos);
}

namespace {
// A version 1.0 .npy file: magic, version, header length, the header dict padded with spaces to
// a multiple of 64 bytes (ending in a newline), then the data.
void write_npy(const std::string& path, const std::string& descr, const std::string& shape,
               const std::string& data, const std::string& fortran = "False") {
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
    header.append(63 - (10 + header.size()) % 64, ' ');
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out << "\x93NUMPY" << '\x01' << '\x00';
    out.put(static_cast<char>(header.size() & 0xff));
    out.put(static_cast<char>(header.size() >> 8));
    out << header << data;
}
}  // namespace

TEST(ImageArrayFile, ReadsChannelsLastAndChannelsFirstImagesExactly) {
    // Two 2x3 images, channels last: image i has pixel value 10*i + channel.
    std::string hwc;
    for (int i = 0; i < 2; ++i)
        for (int p = 0; p < 6; ++p)
            for (int c = 0; c < 3; ++c)
                hwc += static_cast<char>(10 * i + c);
    const std::string images = temp("hwc.npy"), labels = temp("labels.npy");
    write_npy(images, "|u1", "(2, 2, 3, 3)", hwc);
    const int64_t label_values[2] = {5, 999};
    write_npy(labels, "<i8", "(2,)", std::string(reinterpret_cast<const char*>(label_values), 16));
    ImageArrayFile file(images, labels, 1000);
    EXPECT_EQ(file.size(), 2);
    EXPECT_EQ(file.height(), 2);
    EXPECT_EQ(file.width(), 3);
    torch::Generator rng = at::detail::createCPUGenerator(1);
    const Batch b = file.batch(8, rng);
    ASSERT_EQ(b.inputs.sizes(), (std::vector<int64_t>{8, 3, 2, 3}));
    for (int64_t k = 0; k < 8; ++k) {
        const int64_t i = b.targets[k].item<int64_t>() == 5 ? 0 : 1;
        for (int64_t c = 0; c < 3; ++c)
            EXPECT_TRUE(torch::all(b.inputs[k][c] == 10 * i + c).item<bool>()) << k << c;
    }

    // Channels first, labels as uint8.
    std::string chw;
    for (int i = 0; i < 2; ++i)
        for (int c = 0; c < 3; ++c)
            chw += std::string(8, static_cast<char>(10 * i + c));
    write_npy(images, "|u1", "(2, 3, 2, 4)", chw);  // [N,3,H,W] with W != 3: channels first
    write_npy(labels, "|u1", "(2,)", std::string("\x07\x08", 2));
    ImageArrayFile first(images, labels, 10);
    const Batch f = first.batch(4, rng);
    for (int64_t k = 0; k < 4; ++k) {
        const int64_t i = f.targets[k].item<int64_t>() - 7;
        EXPECT_TRUE(torch::all(f.inputs[k][2] == 10 * i + 2).item<bool>());
    }
    EXPECT_EQ(image_array_paths(images + "," + labels)->second, labels);
    EXPECT_FALSE(image_array_paths("cifar.bin"));
    EXPECT_FALSE(image_array_paths("a.npy,b.bin"));
}

TEST(ImageArrayFile, RejectsMalformedArraysWithTheReason) {
    const std::string images = temp("img.npy"), labels = temp("lab.npy");
    write_npy(labels, "|u1", "(1,)", std::string(1, '\x01'));
    const auto error_for = [&](const std::string& descr, const std::string& shape,
                               const std::string& data, const std::string& fortran = "False") {
        write_npy(images, descr, shape, data, fortran);
        return error_of([&] { ImageArrayFile(images, labels, 10); });
    };
    const std::string pixels(12, '\0');
    EXPECT_NE(error_for("<f4", "(1, 2, 2, 3)", pixels).find("not uint8"), std::string::npos);
    EXPECT_NE(error_for("|u1", "(1, 2, 2, 3)", pixels, "True").find("Fortran"), std::string::npos);
    EXPECT_NE(error_for("|u1", "(1, 2, 2, 4)", std::string(16, '\0')).find("shape must be"),
              std::string::npos);
    EXPECT_NE(error_for("|u1", "(1, 2, 2, 3)", std::string(11, '\0')).find("size mismatch"),
              std::string::npos);
    std::ofstream(images, std::ios::binary) << "PK\x03\x04 not numpy";
    EXPECT_NE(error_of([&] { ImageArrayFile(images, labels, 10); }).find("bad magic"),
              std::string::npos);

    write_npy(images, "|u1", "(1, 2, 2, 3)", pixels);
    write_npy(labels, "|u1", "(1,)", std::string(1, '\x0a'));
    EXPECT_NE(error_of([&] { ImageArrayFile(images, labels, 10); }).find("label 10 of image 0"),
              std::string::npos);
    write_npy(labels, "|u1", "(2,)", std::string(2, '\x01'));
    EXPECT_NE(error_of([&] { ImageArrayFile(images, labels, 10); }).find("expected 1 labels"),
              std::string::npos);
    write_npy(labels, "<f8", "(1,)", std::string(8, '\0'));
    EXPECT_NE(
        error_of([&] { ImageArrayFile(images, labels, 10); }).find("not a little-endian integer"),
        std::string::npos);
}

TEST(ResizeImages, ScalesToMinusOneToOneAndResizes) {
    torch::Tensor images = torch::full({2, 3, 32, 32}, 255, torch::kUInt8);
    torch::Tensor out = resize_images(images, 64);
    ASSERT_EQ(out.sizes(), (std::vector<int64_t>{2, 3, 64, 64}));
    EXPECT_TRUE(torch::allclose(out, torch::ones_like(out)));
}

TEST(Prefetcher, HandsOverBatchesInOrderAndPassesOnFailures) {
    int made = 0;
    {
        Prefetcher loader(
            [&made] {
                ++made;
                return Batch{torch::full({1}, made), torch::zeros({1})};
            },
            torch::kCPU);
        for (int i = 1; i <= 5; ++i)
            EXPECT_EQ(loader.next().inputs.item<int>(), i);
    }
    Prefetcher failing([]() -> Batch { throw std::invalid_argument("disk gone"); }, torch::kCPU);
    EXPECT_THROW(failing.next(), std::invalid_argument);
}
