// Starting and stopping a private MPS control daemon through nvidia-cuda-mps-control.
#include "partition/mps_daemon.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/child_process.h"
#include "core/error.h"

namespace migscope::partition {
namespace {

// Runs the control binary with `input` on stdin; returns its exit status.
ExitStatus run_control(const std::string& binary,
                       const std::vector<std::pair<std::string, std::string>>& env,
                       const std::vector<std::string>& args, const std::string& input,
                       const std::string& stderr_path) {
    ChildOptions o;
    o.argv = {binary};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env = env;
    o.stderr_path = stderr_path;
    ChildProcess p = ChildProcess::start(o);
    if (!input.empty())
        p.write_line(input);
    p.close_stdin();
    // Its output is a few lines (fits the pipe) and is not needed. Never read to end of file:
    // with -d, the daemon it forks may keep the pipe open.
    return p.wait();
}

std::string read_tail(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    if (text.size() > 400)
        text = "…" + text.substr(text.size() - 400);
    return text;
}

}  // namespace

MpsDaemon::MpsDaemon(const std::string& dir, const std::string& device,
                     const std::string& control_binary)
    : pipe_dir_(dir + "/pipe"),
      log_dir_(dir + "/log"),
      device_(device),
      control_binary_(control_binary) {
    std::filesystem::create_directories(pipe_dir_);
    std::filesystem::create_directories(log_dir_);
    auto env = client_env();
    if (!device_.empty())
        env.emplace_back("CUDA_VISIBLE_DEVICES", device_);
    ExitStatus started;
    try {
        started = run_control(control_binary_, env, {"-d"}, "", log_dir_ + "/start.stderr");
    } catch (const Error& e) {
        throw unavailable_error("mps backend: " + std::string(e.what()) +
                                " (is the NVIDIA driver's MPS control binary installed?)");
    }
    if (started.code != 0) {
        throw runtime_error("mps backend: " + control_binary_ + " -d failed (" +
                            started.describe() + "): " + read_tail(log_dir_ + "/start.stderr") +
                            read_tail(log_dir_ + "/control.log"));
    }
    running_ = true;
}

MpsDaemon::~MpsDaemon() {
    stop();
}

std::vector<std::pair<std::string, std::string>> MpsDaemon::client_env() const {
    return {{"CUDA_MPS_PIPE_DIRECTORY", pipe_dir_}, {"CUDA_MPS_LOG_DIRECTORY", log_dir_}};
}

bool MpsDaemon::answers() const {
    try {
        return run_control(control_binary_, client_env(), {}, "get_server_list",
                           log_dir_ + "/query.stderr")
                   .code == 0;
    } catch (const Error&) {
        return false;
    }
}

std::vector<std::string> MpsDaemon::stop() {
    if (!running_)
        return {};
    running_ = false;
    std::vector<std::string> problems;
    try {
        const ExitStatus quit =
            run_control(control_binary_, client_env(), {}, "quit", log_dir_ + "/quit.stderr");
        if (quit.code != 0)
            problems.push_back("MPS quit: " + quit.describe());
    } catch (const Error& e) {
        problems.push_back(std::string("MPS quit: ") + e.what());
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (answers()) {
        if (std::chrono::steady_clock::now() > deadline) {
            problems.push_back("the MPS control daemon (pipes in " + pipe_dir_ +
                               ") still answers 10 s after quit; stop it with: echo quit | "
                               "CUDA_MPS_PIPE_DIRECTORY=" +
                               pipe_dir_ + " " + control_binary_);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return problems;
}

}  // namespace migscope::partition
