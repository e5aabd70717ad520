// Folders the user names (run directories, the results store's folder): made with an input error
// naming the folder when they cannot be or a file cannot be written in them, and the files
// written there checked to the last byte.
#pragma once

#include <string>

namespace migscope {

// Creates `path` and its parents if missing. An uncreatable or unwritable folder is bad input:
// an error naming `what` ("--run-dir") and the path. Unwritable includes a folder where a byte
// cannot be written (a full or read-only file system, a file size limit), which a probe file
// finds (written, then removed): root passes every permission check.
void create_folder(const std::string& path, const std::string& what);

// Writes `text` to the file `path` (replacing it) and checks that every byte reached it; a
// runtime error naming `what` ("result.json"), the path and the system's reason otherwise.
void write_file(const std::string& path, const std::string& text, const std::string& what);

}  // namespace migscope
