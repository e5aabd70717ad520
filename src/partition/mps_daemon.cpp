// Starting and stopping a private MPS control daemon through nvidia-cuda-mps-control, its pipes
// and logs in a short private directory (UNIX socket paths are short), its logs kept in the run.
#include "partition/mps_daemon.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/child_process.h"
#include "core/error.h"

namespace migscope::partition {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrivateName = "/migscope-mps-XXXXXX";

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

// The end of a file, quoted with its name; "" when it is missing or empty.
std::string quote_tail(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    if (text.empty())
        return "";
    if (text.size() > 400)
        text = "…" + text.substr(text.size() - 400);
    return "; " + fs::path(path).filename().string() + ": '" + text + "'";
}

// A new directory, mode 0700, under $XDG_RUNTIME_DIR (the user's own tmpfs) when the pipe
// directory in it stays within kMpsPipeDirMaxBytes, else under /tmp.
std::string make_private_dir() {
    std::vector<std::string> bases;
    if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && runtime[0] == '/')
        bases.emplace_back(runtime);
    bases.emplace_back("/tmp");
    std::string tried;
    for (const std::string& base : bases) {
        std::string path = base + kPrivateName;
        if (path.size() + std::strlen("/pipe") > kMpsPipeDirMaxBytes) {
            tried += (tried.empty() ? "" : ", ") + base + " (too long a path for its sockets)";
            continue;
        }
        if (mkdtemp(path.data()) != nullptr)  // mode 0700
            return path;
        tried += (tried.empty() ? "" : ", ") + base + " (" + std::strerror(errno) + ")";
    }
    throw runtime_error("mps backend: no private directory for the MPS daemon's pipes: " + tried);
}

void make_private_subdir(const std::string& path) {
    if (mkdir(path.c_str(), 0700) != 0)
        throw runtime_error("mps backend: cannot create " + path + ": " + std::strerror(errno));
}

}  // namespace

MpsDaemon::MpsDaemon(const std::string& dir, const std::string& device,
                     const std::string& control_binary)
    : dir_(dir), device_(device), control_binary_(control_binary) {
    fs::create_directories(dir_);
    private_dir_ = make_private_dir();
    pipe_dir_ = private_dir_ + "/pipe";
    log_dir_ = private_dir_ + "/log";
    try {
        make_private_subdir(pipe_dir_);
        make_private_subdir(log_dir_);
        // Where to send "quit" should migscope die without stopping the daemon (kill -9).
        std::ofstream(dir_ + "/pipe-directory") << pipe_dir_ << '\n';
        auto env = client_env();
        if (!device_.empty())
            env.emplace_back("CUDA_VISIBLE_DEVICES", device_);
        ExitStatus started;
        try {
            started = run_control(control_binary_, env, {"-d"}, "", dir_ + "/start.stderr");
        } catch (const Error& e) {
            throw unavailable_error("mps backend: " + std::string(e.what()) +
                                    " (is the NVIDIA driver's MPS control binary installed?)");
        }
        if (started.code != 0) {
            std::string said =
                quote_tail(dir_ + "/start.stderr") + quote_tail(log_dir_ + "/control.log");
            throw runtime_error("mps backend: " + control_binary_ + " -d failed (" +
                                started.describe() + ") with its pipes in " + pipe_dir_ +
                                (said.empty() ? "; it said nothing and left no log" : said));
        }
    } catch (...) {
        keep_logs_and_remove_private_dir();
        throw;
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
                           dir_ + "/query.stderr")
                   .code == 0;
    } catch (const Error&) {
        return false;
    }
}

void MpsDaemon::keep_logs_and_remove_private_dir() {
    if (private_dir_.empty())
        return;
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(log_dir_, ignored)) {
        if (entry.is_regular_file(ignored))
            fs::copy_file(entry.path(), fs::path(dir_) / entry.path().filename(),
                          fs::copy_options::overwrite_existing, ignored);
    }
    fs::remove_all(private_dir_, ignored);
    fs::remove(fs::path(dir_) / "pipe-directory", ignored);
    private_dir_.clear();
}

std::vector<std::string> MpsDaemon::stop() {
    if (!running_)
        return {};
    running_ = false;
    std::vector<std::string> problems;
    try {
        const ExitStatus quit =
            run_control(control_binary_, client_env(), {}, "quit", dir_ + "/quit.stderr");
        if (quit.code != 0)
            problems.push_back("MPS quit: " + quit.describe());
    } catch (const Error& e) {
        problems.push_back(std::string("MPS quit: ") + e.what());
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (answers()) {
        if (std::chrono::steady_clock::now() > deadline) {
            // Its pipes stay: without them nothing could tell it to quit.
            problems.push_back("the MPS control daemon (pipes in " + pipe_dir_ +
                               ") still answers 10 s after quit; stop it with: echo quit | "
                               "CUDA_MPS_PIPE_DIRECTORY=" +
                               pipe_dir_ + " " + control_binary_ + ", then remove " + private_dir_);
            return problems;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    keep_logs_and_remove_private_dir();
    return problems;
}

}  // namespace migscope::partition
