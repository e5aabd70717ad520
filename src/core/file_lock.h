// An exclusive lock on a file that lasts while its holder lives (flock: released when the process
// ends, kill -9 included), so that two processes do not do the same work at once.
#pragma once

#include <optional>
#include <string>

namespace migscope {

class FileLock {
  public:
    // Creates `path` when missing and locks it without waiting; writes this process's id into
    // it. None when another process holds it (`holder` then gets the id it wrote, or "").
    // Throws a runtime error when the file cannot be created or opened.
    static std::optional<FileLock> try_lock(const std::string& path, std::string* holder = nullptr);

    FileLock(FileLock&& other) noexcept;
    FileLock& operator=(FileLock&& other) noexcept;
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    ~FileLock();  // unlocks; the file stays (removing it would race with the next locker)

  private:
    explicit FileLock(int fd) : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace migscope
