// Test helper: fork/exec with stdout and stderr captured through temporary files.
#include "run_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace {
std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

ProcessResult run(const std::vector<std::string>& argv, const ProcessInput* input,
                  const std::map<std::string, std::string>& env) {
    char out_path[] = "/tmp/migscope-test-out-XXXXXX";
    char err_path[] = "/tmp/migscope-test-err-XXXXXX";
    const int out_fd = mkstemp(out_path);
    const int err_fd = mkstemp(err_path);
    int in_pipe[2] = {-1, -1};
    if (input != nullptr) {
        signal(SIGPIPE, SIG_IGN);  // the program may exit before reading
        if (pipe(in_pipe) != 0)
            return {};
    }
    const pid_t pid = fork();
    if (pid == 0) {
        if (input != nullptr) {
            dup2(in_pipe[0], 0);
            close(in_pipe[0]);
            close(in_pipe[1]);
        }
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        for (const auto& [k, v] : env)
            setenv(k.c_str(), v.c_str(), 1);
        std::vector<char*> args;
        for (const std::string& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(126);
    }
    if (input != nullptr) {
        close(in_pipe[0]);
        std::this_thread::sleep_for(input->delay);
        if (!input->text.empty()) {
            [[maybe_unused]] const ssize_t n =
                write(in_pipe[1], input->text.data(), input->text.size());
        }
        if (input->then == ProcessInput::Then::kClose)
            close(in_pipe[1]);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (input != nullptr && input->then == ProcessInput::Then::kKeepOpen)
        close(in_pipe[1]);
    close(out_fd);
    close(err_fd);
    ProcessResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    unlink(out_path);
    unlink(err_path);
    return r;
}
}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env) {
    return run(argv, nullptr, env);
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessInput& input,
                          const std::map<std::string, std::string>& env) {
    return run(argv, &input, env);
}
