// Tests of reading a whole text file: its bytes, or an input error naming what and where.
#include "core/text_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/error.h"

using namespace migscope;

TEST(TextFile, ReadsTheWholeFile) {
    const std::string path = testing::TempDir() + "/text-file-test.txt";
    const std::string bytes = std::string("line 1\nline 2\n\0tail", 20);
    std::ofstream(path, std::ios::binary) << bytes;
    EXPECT_EQ(read_text_file(path, "test file"), bytes);
}

TEST(TextFile, AMissingFileIsAnInputErrorNamingWhatAndWhere) {
    try {
        read_text_file("/nonexistent/trace.json", "trace file");
        FAIL() << "a missing file was read";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_EQ(std::string(e.what()), "cannot read trace file /nonexistent/trace.json");
    }
}
