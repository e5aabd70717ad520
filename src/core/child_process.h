// A child process started from an argv (never through a shell), in its own process group, with
// piped stdin/stdout, stderr to a file and optionally a progress pipe on fd 3.
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace migscope {

enum class ProgressPipe { kNone, kFd3 };  // kFd3: a pipe on fd 3, MIGSCOPE_PROGRESS_FD=3 in env

struct ChildOptions {
    std::vector<std::string> argv;                         // argv[0] is looked up in PATH
    std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing) ours
    std::vector<unsigned> cpu_cores;                       // CPU affinity; empty: inherit
    std::string stderr_path;                               // empty: inherit our stderr
    // kFd3: the child reports on fd 3, and its stdout (not protocol lines) goes to stderr_path too
    ProgressPipe progress = ProgressPipe::kNone;
};

// Buffers bytes read from a non-blocking pipe and hands out whole lines.
class LineReader {
  public:
    // Reads what is available from `fd` and appends complete lines (without '\n') to `lines`.
    // Returns false once the pipe reached end of file (a last unterminated line is delivered).
    bool read_available(int fd, std::vector<std::string>& lines);

  private:
    std::string pending_;
};

// How a process ended.
struct ExitStatus {
    std::optional<int> code;       // exit code when it exited
    std::optional<int> signal;     // signal number when a signal killed it
    std::string describe() const;  // "exit 0", "killed by signal 6 (Aborted)"
};

class ChildProcess {
  public:
    // Starts the process. Throws an input error when argv[0] cannot be found or executed (the
    // message names it), a runtime error for other failures. The process gets SIGKILL when the
    // thread that started it ends (PR_SET_PDEATHSIG): when migscope dies, even by SIGKILL, its
    // jobs do not run on. Start children from a thread that outlives them (the main thread).
    static ChildProcess start(const ChildOptions& options);

    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    // A process still running is killed (SIGKILL to its group) and reaped.
    ~ChildProcess();

    pid_t pid() const { return pid_; }
    int stdout_fd() const { return stdout_fd_; }      // non-blocking; -1 once closed
    int progress_fd() const { return progress_fd_; }  // non-blocking; -1 without one

    // Appends complete lines; returns false at end of file (and closes that pipe).
    bool read_stdout_lines(std::vector<std::string>& lines);
    bool read_progress_lines(std::vector<std::string>& lines);

    // Writes one line to the child's stdin; false when the child no longer reads it.
    bool write_line(std::string_view line);
    void close_stdin();

    void signal_group(int signal) const;   // to the whole process group; ignored once reaped
    std::optional<ExitStatus> try_wait();  // the status once it ended; never blocks
    ExitStatus wait();                     // blocks
    // SIGTERM, then SIGKILL after `grace_s` if still running; returns how it ended.
    ExitStatus terminate(double grace_s);
    bool finished() const { return status_.has_value(); }

  private:
    ChildProcess() = default;
    void close_fds();

    pid_t pid_ = -1;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    int progress_fd_ = -1;
    LineReader stdout_reader_;
    LineReader progress_reader_;
    std::optional<ExitStatus> status_;
};

}  // namespace migscope
