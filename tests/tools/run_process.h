// Test helper: runs a program with extra environment variables and captures its output and exit.
#pragma once

#include <map>
#include <string>
#include <vector>

struct ProcessResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {});
