// The stdin reader behind StopSignal.
#include "stop_signal.h"

#include <unistd.h>

#include <cerrno>

#include <iostream>
#include <string>
#include <thread>

#include "protocol/commands.h"

namespace migscope::worker {

void StopSignal::start_reading_stdin() {
    std::thread([reason = reason_, started = started_] {
        std::string line;
        char c = 0;
        // Plain read(2): the thread stays blocked here when the process ends without input.
        while (true) {
            const ssize_t n = ::read(STDIN_FILENO, &c, 1);
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                reason->store(static_cast<int>(StopReason::kEndOfInput));
                return;
            }
            if (c != '\n') {
                line += c;
                continue;
            }
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            const auto command = protocol::parse_command_line(line);
            if (command == protocol::Command::kStop) {
                reason->store(static_cast<int>(StopReason::kStopLine));
                return;
            }
            if (command == protocol::Command::kStart)
                started->store(true);
            else if (!line.empty())
                std::cerr << "migscope-worker: ignoring stdin line '" << line
                          << "' (only 'start' and 'stop' are understood)\n";
            line.clear();
        }
    }).detach();
}

}  // namespace migscope::worker
