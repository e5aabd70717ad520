// A private MPS control daemon for one run: own pipe and log directories, always stopped.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace migscope::partition {

// The longest pipe directory the daemon is given. The control daemon makes UNIX sockets in it,
// whose paths hold at most 107 bytes with the daemon's own file names added: a pipe directory of
// 99 characters already fails (`nvidia-cuda-mps-control -d` exits 1 naming only the socket).
constexpr size_t kMpsPipeDirMaxBytes = 64;

class MpsDaemon {
  public:
    // Starts `control_binary -d` with CUDA_VISIBLE_DEVICES=`device` and its pipe and log
    // directories (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY) in a short private directory
    // made for it, whatever the length of `dir`: `$XDG_RUNTIME_DIR/migscope-mps-XXXXXX` when that
    // is short enough, else `/tmp/migscope-mps-XXXXXX` (mode 0700, unique). `dir` (created; the
    // run directory's `mps/`) keeps what outlives the daemon: the control binary's output, the
    // path of the pipe directory while it runs (`pipe-directory`), and the daemon's logs
    // (`control.log`, `server.log`) once it stopped. The private directory is removed when the
    // daemon stops, and when it fails to start. Throws an unavailable error when the binary is
    // missing, a runtime error when the daemon does not come up (its output and log quoted).
    MpsDaemon(const std::string& dir, const std::string& device,
              const std::string& control_binary = "nvidia-cuda-mps-control");
    ~MpsDaemon();  // stop()
    MpsDaemon(const MpsDaemon&) = delete;
    MpsDaemon& operator=(const MpsDaemon&) = delete;

    // The environment a client needs to reach this daemon.
    std::vector<std::pair<std::string, std::string>> client_env() const;
    // Sends "quit" and waits (up to 10 s) until the daemon answers no more; then keeps its logs
    // in `dir` and removes the private directory (kept, and said, when the daemon still answers).
    // Idempotent; returns problems met (empty when it stopped cleanly).
    std::vector<std::string> stop();
    bool running() const { return running_; }

  private:
    bool answers() const;  // true while the control daemon responds
    // Copies the daemon's logs into dir_ and removes the private directory.
    void keep_logs_and_remove_private_dir();
    std::string dir_;
    std::string private_dir_;
    std::string pipe_dir_;
    std::string log_dir_;
    std::string device_;
    std::string control_binary_;
    bool running_ = false;
};

}  // namespace migscope::partition
