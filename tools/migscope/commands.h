// The migscope subcommands: each registers its options on the CLI and sets the action to run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace migscope::cli {

// Set by the chosen subcommand's parse callback; returns the process exit code.
using Action = std::function<int()>;

void add_gpus_command(CLI::App& app, Action& action);
void add_monitor_command(CLI::App& app, Action& action);
void add_layouts_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_train_command(CLI::App& app, Action& action);
void add_results_command(CLI::App& app, Action& action);
void add_report_command(CLI::App& app, Action& action);
void add_profile_command(CLI::App& app, Action& action);
void add_plan_command(CLI::App& app, Action& action);

}  // namespace migscope::cli
