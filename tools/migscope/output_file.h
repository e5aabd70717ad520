// Where a command's data goes: the file of `-o FILE` when given, else stdout.
#pragma once

#include <fstream>
#include <iostream>
#include <string>

#include "core/error.h"

namespace migscope::cli {

class Output {
  public:
    // Opens `path` now (an unwritable path is bad input before any work); empty: stdout.
    explicit Output(const std::string& path) {
        if (path.empty())
            return;
        file_.open(path);
        if (!file_)
            throw input_error("cannot write " + path);
    }
    std::ostream& stream() { return file_.is_open() ? file_ : std::cout; }

  private:
    std::ofstream file_;
};

}  // namespace migscope::cli
