// Tests of the file lock: one holder at a time, its process id named, released with its holder.
#include "core/file_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"

namespace migscope {
namespace {

TEST(FileLock, OneHolderAtATimeNamedByItsProcessId) {
    const std::string path = (std::filesystem::path(testing::TempDir()) / "one.lock").string();
    std::filesystem::remove(path);
    std::optional<FileLock> first = FileLock::try_lock(path);
    ASSERT_TRUE(first);
    std::string holder;
    EXPECT_FALSE(FileLock::try_lock(path, &holder));  // flock: another open file is refused
    EXPECT_EQ(holder, std::to_string(getpid()));
    first.reset();
    EXPECT_TRUE(FileLock::try_lock(path));  // released with its holder; the file stays
    EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(FileLock, AFileThatCannotBeMadeIsAnError) {
    EXPECT_THROW(FileLock::try_lock("/nonexistent-folder/x.lock"), Error);
}

}  // namespace
}  // namespace migscope
