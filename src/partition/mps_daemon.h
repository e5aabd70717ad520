// A private MPS control daemon for one run: own pipe and log directories, always stopped.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace migscope::partition {

class MpsDaemon {
  public:
    // Starts `control_binary -d` with CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY under
    // `dir` (created) and CUDA_VISIBLE_DEVICES=`device`. Throws an unavailable error when the
    // binary is missing, a runtime error when the daemon does not come up (its log is quoted).
    MpsDaemon(const std::string& dir, const std::string& device,
              const std::string& control_binary = "nvidia-cuda-mps-control");
    ~MpsDaemon();  // stop()
    MpsDaemon(const MpsDaemon&) = delete;
    MpsDaemon& operator=(const MpsDaemon&) = delete;

    // The environment a client needs to reach this daemon.
    std::vector<std::pair<std::string, std::string>> client_env() const;
    // Sends "quit" and waits (up to 10 s) until the daemon answers no more. Idempotent; returns
    // problems met (empty when it stopped cleanly).
    std::vector<std::string> stop();
    bool running() const { return running_; }

  private:
    bool answers() const;  // true while the control daemon responds
    std::string pipe_dir_;
    std::string log_dir_;
    std::string device_;
    std::string control_binary_;
    bool running_ = false;
};

}  // namespace migscope::partition
