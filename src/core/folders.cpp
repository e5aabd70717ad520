// Folders the user names, made with errors that name them.
#include "core/folders.h"

#include <unistd.h>

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
}

}  // namespace migscope
