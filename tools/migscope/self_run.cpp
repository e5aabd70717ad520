// Running migscope itself as a child process.
#include "self_run.h"

#include <poll.h>

#include <filesystem>

#include "core/child_process.h"

namespace migscope::cli {

std::string self_path() {
    return std::filesystem::read_symlink("/proc/self/exe").string();
}

SelfRun run_self(const std::vector<std::string>& args) {
    ChildOptions options;
    options.argv = {self_path()};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    ChildProcess child = ChildProcess::start(options);
    child.close_stdin();
    SelfRun out;
    std::vector<std::string> lines;
    while (true) {
        pollfd fd{child.stdout_fd(), POLLIN, 0};
        ::poll(&fd, 1, 200);
        if (!child.read_stdout_lines(lines))
            break;
    }
    for (const std::string& l : lines)
        out.stdout_text += l + "\n";
    const ExitStatus status = child.wait();
    out.exit_code = status.code ? *status.code : 128 + status.signal.value_or(0);
    return out;
}

}  // namespace migscope::cli
