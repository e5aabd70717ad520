// Folders the user names (run directories, the results store's folder): made with an input error
// naming the folder when they cannot be.
#pragma once

#include <string>

namespace migscope {

// Creates `path` and its parents if missing. An uncreatable or unwritable folder is bad input:
// an error naming `what` ("--run-dir") and the path.
void create_folder(const std::string& path, const std::string& what);

}  // namespace migscope
