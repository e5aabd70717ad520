// Monitoring a power source for a duration or while a command runs.
#include "telemetry/command_monitor.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace migscope::telemetry {
namespace {

// Runs argv (no shell) and waits: its exit status (128 + signal when killed), or -errno when it
// could not be started.
int run_and_wait(const std::vector<std::string>& command) {
    std::vector<char*> argv;
    for (const std::string& a : command)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
    if (rc != 0)
        return -rc;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            throw runtime_error(std::string("waitpid failed: ") + strerror(errno));
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return kExitFailure;
}

}  // namespace

MonitorResult monitor(PowerSource& source, const MonitorRequest& r,
                      const std::function<void(const Sample&)>& on_start,
                      const std::function<void(const std::vector<Sample>&)>& on_samples) {
    Sampler sampler(source, r.hz);
    const Sample start = source.read(SampleScope::kAll);
    on_start(start);
    sampler.start();
    std::atomic<bool> done{false};
    std::thread drainer([&] {
        while (!done.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            on_samples(sampler.take_new());
        }
    });

    MonitorResult result;
    if (!r.command.empty()) {
        const int status = run_and_wait(r.command);
        if (status < 0)
            result.start_failure = strerror(-status);
        else
            result.exit_status = status;
    } else {
        const SteadyTime stop_at = start.time + std::chrono::duration_cast<SteadyClock::duration>(
                                                    std::chrono::duration<double>(r.duration_s));
        while (!(r.interrupt && *r.interrupt) &&
               (r.duration_s <= 0 || SteadyClock::now() < stop_at))
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const Sample end = source.read(SampleScope::kAll);
    sampler.stop();
    done = true;
    drainer.join();
    on_samples(sampler.take_new());
    result.energy = summarize_window(sampler.all(), start, end);
    result.sampler = sampler.stats();
    return result;
}

}  // namespace migscope::telemetry
