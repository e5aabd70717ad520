// Folders the user names: made with their parents; one that cannot be is an input error naming it.
#include "core/folders.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace migscope {
namespace {

namespace fs = std::filesystem;

TEST(CreateFolder, MakesTheFolderAndItsParents) {
    const fs::path dir = fs::path(testing::TempDir()) / "folders-test" / "a" / "b";
    fs::remove_all(dir.parent_path());
    create_folder(dir.string(), "run directory");
    EXPECT_TRUE(fs::is_directory(dir));
    create_folder(dir.string(), "run directory");  // there already: fine
}

// An uncreatable --run-dir (under a file here) was an internal error from std::filesystem.
TEST(CreateFolder, AnUncreatableFolderIsAnInputErrorNamingIt) {
    const fs::path file = fs::path(testing::TempDir()) / "folders-test-file";
    std::ofstream(file) << "a file, not a folder";
    const std::string wanted = (file / "run").string();
    try {
        create_folder(wanted, "run directory");
        FAIL() << "created " << wanted;
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
        EXPECT_NE(std::string(e.what()).find("cannot create run directory " + wanted),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace migscope
