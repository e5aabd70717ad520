// One worker job in the foreground, its events handed over as they come.
#include "runner/foreground_job.h"

#include <poll.h>

#include "core/child_process.h"
#include "core/error.h"

namespace migscope::runner {

int run_in_foreground(const ForegroundJob& j, const ForegroundHooks& hooks) {
    ChildOptions child;
    child.argv = protocol::train_argv(j.worker_path, j.job, j.device);
    if (!j.visible_gpu.empty())
        child.env.emplace_back("CUDA_VISIBLE_DEVICES", j.visible_gpu);
    ChildProcess worker = ChildProcess::start(child);
    for (bool open = true; open;) {
        pollfd fd{worker.stdout_fd(), POLLIN, 0};
        ::poll(&fd, 1, 200);
        if (hooks.interrupt && *hooks.interrupt) {
            hooks.note("interrupted: " + worker.terminate(5).describe());
            return kExitInterrupted;
        }
        std::vector<std::string> lines;
        open = worker.read_stdout_lines(lines);
        for (const std::string& line : lines) {
            const protocol::ParsedEvent parsed = protocol::parse_event_line(line);
            if (parsed.event)
                hooks.event(parsed.event->body);
            else
                hooks.note("ignoring a worker line (" + parsed.error + "): " + line.substr(0, 200));
        }
    }
    const ExitStatus status = worker.wait();
    if (status.code)
        return *status.code;
    hooks.note("the worker " + status.describe());
    return kExitFailure;
}

}  // namespace migscope::runner
