// A whole text file read at once (text_file.h).
#include "core/text_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope {

std::string read_text_file(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))  // which an ifstream opens, and reads as empty
        throw input_error("cannot read " + what + " " + user_text::escaped(path) +
                          ": it is a folder");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw input_error("cannot read " + what + " " + user_text::escaped(path));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace migscope
