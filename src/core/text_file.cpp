// A whole text file read at once (text_file.h).
#include "core/text_file.h"

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope {

std::string read_text_file(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw input_error("cannot read " + what + " " + user_text::escaped(path));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace migscope
