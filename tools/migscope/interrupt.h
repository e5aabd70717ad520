// Ctrl-C, SIGTERM and SIGHUP as a flag that runs poll (runner::RunHooks::interrupt).
#pragma once

#include <atomic>

namespace migscope::cli {

// After this, SIGINT, SIGTERM and SIGHUP set the returned flag instead of ending migscope: the
// run in progress stops its jobs early, what was measured is stored as interrupted, and the
// command exits with kExitInterrupted (130).
const std::atomic<bool>* install_interrupt_handler();

}  // namespace migscope::cli
