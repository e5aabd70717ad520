// The CLI11 command tree walked into the plain records the shell files (bash and zsh completion,
// the man page: report/shell_files.h) are printed from.
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "report/shell_files.h"

namespace migscope::cli {

// The root, then every visible subcommand depth-first in declaration order. Hidden commands and
// options (CLI11 group "") are left out, with everything under them.
std::vector<report::CommandInfo> describe_cli(CLI::App& app);

}  // namespace migscope::cli
