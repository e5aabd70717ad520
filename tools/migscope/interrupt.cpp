// Ctrl-C and SIGTERM as a flag that runs poll.
#include "interrupt.h"

#include <signal.h>

namespace migscope::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void on_signal(int) {
    g_interrupted = true;
}

}  // namespace

const std::atomic<bool>* install_interrupt_handler() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    return &g_interrupted;
}

}  // namespace migscope::cli
