// Runs this same migscope binary as a child (`migscope run ...` for profile and plan --verify).
#pragma once
#include <string>
#include <vector>

namespace migscope::cli {

struct SelfRun {
    int exit_code = 0;  // 128 + signal when a signal ended it
    std::string stdout_text;
};

// Starts /proc/self/exe with `args` (its stderr is ours), collects its stdout and waits.
SelfRun run_self(const std::vector<std::string>& args);

// The path of this executable.
std::string self_path();

}  // namespace migscope::cli
