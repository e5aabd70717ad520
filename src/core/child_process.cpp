// Starting, talking to and stopping child processes (fork/exec, no shell).
#include "core/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace migscope {
namespace {

std::string errno_text(int err) {
    return strerror(err);
}

void set_nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Our environment with the overrides applied, as "KEY=value" strings.
std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry = *e;
        const std::string key = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& [k, v] : overrides)
            replaced = replaced || k == key;
        if (!replaced)
            env.push_back(entry);
    }
    for (const auto& [k, v] : overrides)
        env.push_back(k + "=" + v);
    return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

ExitStatus decode(int status) {
    ExitStatus s;
    if (WIFEXITED(status))
        s.code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        s.signal = WTERMSIG(status);
    return s;
}

}  // namespace

bool LineReader::read_available(int fd, std::vector<std::string>& lines) {
    char buffer[65536];
    for (;;) {
        const ssize_t n = read(fd, buffer, sizeof buffer);
        if (n > 0) {
            pending_.append(buffer, static_cast<size_t>(n));
            size_t start = 0;
            for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
                lines.push_back(pending_.substr(start, nl - start));
            pending_.erase(0, start);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        // End of file (or an error, which ends the stream all the same).
        if (!pending_.empty()) {
            lines.push_back(pending_);
            pending_.clear();
        }
        return false;
    }
}

std::string ExitStatus::describe() const {
    if (code)
        return "exit " + std::to_string(*code);
    if (signal)
        return "killed by signal " + std::to_string(*signal) + " (" + strsignal(*signal) + ")";
    return "ended, exit status not available";
}

namespace {

// The child's ends of its pipes: stdin, stdout (its log where its progress goes to fd 3),
// stderr and progress (-1: none), and the pipe that carries exec's errno back.
struct ChildFds {
    int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1, progress_fd = -1, exec_status_fd = -1;
};

// The child's side of fork, up to exec: only async-signal-safe calls. Runs in its own process
// group, killed with `parent`, on `cores` (null: wherever it may). Never returns: on exec's
// failure its errno goes into the status pipe and the child exits 127.
[[noreturn]] void exec_child(pid_t parent, const ChildFds& fds, const cpu_set_t* cores,
                             char* const* argv, char* const* envp) {
    setpgid(0, 0);
    // Killed with its parent, even by SIGKILL (which no handler sees): a job must not run on
    // unmeasured. A parent that died before this line is no longer our parent.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    dup2(fds.stdin_fd, STDIN_FILENO);
    dup2(fds.stdout_fd, STDOUT_FILENO);
    if (fds.stderr_fd >= 0)
        dup2(fds.stderr_fd, STDERR_FILENO);
    if (fds.progress_fd >= 0)
        dup2(fds.progress_fd, 3);
    if (cores)
        sched_setaffinity(0, sizeof *cores, cores);
    execvpe(argv[0], argv, envp);
    const int err = errno;
    (void)!write(fds.exec_status_fd, &err, sizeof err);
    _exit(127);
}

}  // namespace

ChildProcess ChildProcess::start(const ChildOptions& options) {
    if (options.argv.empty())
        throw input_error("no command given");
    std::vector<std::string> args = options.argv;
    auto overrides = options.env;
    if (options.progress == ProgressPipe::kFd3)
        overrides.emplace_back("MIGSCOPE_PROGRESS_FD", "3");
    std::vector<std::string> env = merged_environment(overrides);
    std::vector<char*> argv = c_strings(args);
    std::vector<char*> envp = c_strings(env);

    // stdin is a socket so that writing to a child that stopped reading returns EPIPE instead of
    // raising SIGPIPE in this process (send with MSG_NOSIGNAL).
    int in[2], out[2], progress[2] = {-1, -1}, exec_status[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
        pipe2(exec_status, O_CLOEXEC) != 0 ||
        (options.progress == ProgressPipe::kFd3 && pipe2(progress, O_CLOEXEC) != 0)) {
        throw runtime_error("cannot create pipes for " + options.argv[0] + ": " +
                            errno_text(errno));
    }
    int stderr_fd = -1;
    if (!options.stderr_path.empty()) {
        stderr_fd =
            open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (stderr_fd < 0)
            throw runtime_error("cannot open " + options.stderr_path + ": " + errno_text(errno));
    }
    cpu_set_t cores;
    CPU_ZERO(&cores);
    for (unsigned c : options.cpu_cores)
        CPU_SET(c, &cores);

    // A command that reports on fd 3 prints what it likes on stdout: into its log.
    const bool stdout_to_log = options.progress == ProgressPipe::kFd3 && stderr_fd >= 0;
    const ChildFds child_fds{in[1], stdout_to_log ? stderr_fd : out[1], stderr_fd, progress[1],
                             exec_status[1]};

    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0)
        throw runtime_error("fork failed: " + errno_text(errno));
    if (pid == 0)  // the child: only async-signal-safe calls from here to exec
        exec_child(parent, child_fds, options.cpu_cores.empty() ? nullptr : &cores, argv.data(),
                   envp.data());
    setpgid(pid, pid);  // also from the parent, so the group exists before we signal it
    close(in[1]);
    close(out[1]);
    close(exec_status[1]);
    if (progress[1] >= 0)
        close(progress[1]);
    if (stderr_fd >= 0)
        close(stderr_fd);

    ChildProcess child;
    child.pid_ = pid;
    child.stdin_fd_ = in[0];
    child.stdout_fd_ = out[0];
    child.progress_fd_ = progress[0];
    set_nonblocking(child.stdout_fd_);
    if (child.progress_fd_ >= 0)
        set_nonblocking(child.progress_fd_);

    // exec succeeded when the status pipe closes without data.
    int err = 0;
    ssize_t n;
    while ((n = read(exec_status[0], &err, sizeof err)) < 0 && errno == EINTR) {
    }
    close(exec_status[0]);
    if (n == sizeof err) {
        child.wait();
        throw input_error("cannot run '" + options.argv[0] + "': " + errno_text(err));
    }
    return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept {
    *this = std::move(other);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        std::swap(pid_, other.pid_);
        std::swap(stdin_fd_, other.stdin_fd_);
        std::swap(stdout_fd_, other.stdout_fd_);
        std::swap(progress_fd_, other.progress_fd_);
        std::swap(stdout_reader_, other.stdout_reader_);
        std::swap(progress_reader_, other.progress_reader_);
        std::swap(status_, other.status_);
    }
    return *this;
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0 && !status_) {
        signal_group(SIGKILL);
        wait();
    }
    close_fds();
}

void ChildProcess::close_fds() {
    for (int* fd : {&stdin_fd_, &stdout_fd_, &progress_fd_}) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
    }
}

namespace {

// Reads what `fd` has; at its end closes it and sets it to -1.
bool read_lines_until_end(int& fd, LineReader& reader, std::vector<std::string>& lines) {
    if (fd < 0)
        return false;
    if (reader.read_available(fd, lines))
        return true;
    close(fd);
    fd = -1;
    return false;
}

}  // namespace

bool ChildProcess::read_stdout_lines(std::vector<std::string>& lines) {
    return read_lines_until_end(stdout_fd_, stdout_reader_, lines);
}

bool ChildProcess::read_progress_lines(std::vector<std::string>& lines) {
    return read_lines_until_end(progress_fd_, progress_reader_, lines);
}

bool ChildProcess::write_line(std::string_view line) {
    if (stdin_fd_ < 0)
        return false;
    std::string data(line);
    data += '\n';
    size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = send(stdin_fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        sent += static_cast<size_t>(n);
    }
    return true;
}

void ChildProcess::close_stdin() {
    if (stdin_fd_ >= 0)
        close(stdin_fd_);
    stdin_fd_ = -1;
}

void ChildProcess::signal_group(int signal) const {
    if (pid_ > 0 && !status_)
        kill(-pid_, signal);
}

std::optional<ExitStatus> ChildProcess::try_wait() {
    if (status_ || pid_ <= 0)
        return status_;
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
    }
    if (r == pid_)
        status_ = decode(status);
    else if (r < 0 && errno == ECHILD)
        status_ = ExitStatus{};  // reaped by someone else (SIGCHLD ignored): ended, status unknown
    return status_;
}

ExitStatus ChildProcess::wait() {
    if (status_ || pid_ <= 0)
        return status_.value_or(ExitStatus{});
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    status_ = r == pid_ ? decode(status) : ExitStatus{};  // ECHILD: ended, status unknown
    return *status_;
}

ExitStatus ChildProcess::terminate(double grace_s) {
    if (try_wait())
        return *status_;
    signal_group(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (std::chrono::steady_clock::now() < deadline) {
        if (try_wait())
            return *status_;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    signal_group(SIGKILL);
    return wait();
}

}  // namespace migscope
