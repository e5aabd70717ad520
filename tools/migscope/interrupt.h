// Ctrl-C and SIGTERM as a flag that runs poll (runner::RunHooks::interrupt).
#pragma once

#include <atomic>

namespace migscope::cli {

// After this, SIGINT and SIGTERM set the returned flag instead of ending migscope: the run in
// progress stops early and what finished is kept.
const std::atomic<bool>* install_interrupt_handler();

}  // namespace migscope::cli
