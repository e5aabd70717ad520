// Ctrl-C, SIGTERM and SIGHUP as a flag that runs poll (runner::RunHooks::interrupt), and a
// command's run hooks with it.
#pragma once

#include <atomic>
#include <string>

#include "runner/run.h"

namespace migscope::cli {

// After this, SIGINT, SIGTERM and SIGHUP set the returned flag instead of ending migscope: the
// run in progress stops its jobs early, what was measured is stored as interrupted, and the
// command exits with kExitInterrupted (130).
const std::atomic<bool>* install_interrupt_handler();

// The hooks of a command's runs: each progress line on stderr after "migscope COMMAND: ", and
// the interrupt flag above.
runner::RunHooks command_run_hooks(const std::string& command);

}  // namespace migscope::cli
