// A whole text file read at once, or an input error naming what it was meant to be and its path.
#pragma once

#include <string>

namespace migscope {

// The file's bytes; an input error "cannot read WHAT PATH" when it cannot be opened (the path
// escaped, as a message shows a user's text).
std::string read_text_file(const std::string& path, const std::string& what);

}  // namespace migscope
