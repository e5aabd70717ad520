// Ctrl-C, SIGTERM and SIGHUP as a flag that runs poll, and a command's run hooks with it.
#include "interrupt.h"

#include <signal.h>

#include <initializer_list>
#include <iostream>

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
    // SIGHUP: the terminal went away (a closed SSH session); the run ends as after Ctrl-C.
    for (const int signal : {SIGINT, SIGTERM, SIGHUP})
        sigaction(signal, &action, nullptr);
    return &g_interrupted;
}

runner::RunHooks command_run_hooks(const std::string& command) {
    runner::RunHooks hooks;
    hooks.progress = [prefix = "migscope " + command + ": "](const std::string& line) {
        std::cerr << prefix << line << '\n';
    };
    hooks.interrupt = install_interrupt_handler();
    return hooks;
}

}  // namespace migscope::cli
