// Test helper: runs a program with extra environment variables and captures its output and exit.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

struct ProcessResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// What the program reads on stdin: `text`, written after `delay`; then the pipe is closed at once
// (the program sees the end of input) or kept open until the program exits.
struct ProcessInput {
    enum class Then { kClose, kKeepOpen };
    std::string text;
    std::chrono::milliseconds delay{0};
    Then then = Then::kClose;
};

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {});
// The same with a pipe on stdin.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessInput& input,
                          const std::map<std::string, std::string>& env = {});
