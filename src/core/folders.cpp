// Folders the user names, made with errors that name them; files written there, checked.
#include "core/folders.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace migscope {

void create_folder(const std::string& path, const std::string& what) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec)
        throw input_error("cannot create " + what + " " + path + ": " + ec.message());
    if (access(path.c_str(), W_OK | X_OK) != 0)
        throw input_error(what + " " + path + " is not a writable folder");
    const std::string probe = path + "/.migscope-probe-" + std::to_string(getpid());
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        throw input_error(what + " " + path + " is not a writable folder: " + std::strerror(errno));
    const ssize_t written = write(fd, "\n", 1);
    const int write_errno = errno;
    close(fd);
    unlink(probe.c_str());
    if (written != 1)
        throw input_error(what + " " + path + " cannot take a file: " + std::strerror(write_errno));
}

void write_file(const std::string& path, const std::string& text, const std::string& what) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw runtime_error("cannot write " + what + " " + path + ": " + std::strerror(errno));
    size_t done = 0;
    int problem = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            problem = n < 0 ? errno : ENOSPC;
            break;
        }
        done += static_cast<size_t>(n);
    }
    if (close(fd) != 0 && problem == 0)
        problem = errno;
    if (problem != 0)
        throw runtime_error("cannot write " + what + " " + path + ": " + std::strerror(problem) +
                            " (" + std::to_string(done) + " of " + std::to_string(text.size()) +
                            " bytes written)");
}

}  // namespace migscope
