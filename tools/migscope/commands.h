// The migscope subcommands: each registers its options on the CLI and sets the action to run.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

namespace migscope::cli {

// Set by the chosen subcommand's parse callback; returns the process exit code.
using Action = std::function<int()>;

// Option checks that say what is wrong: a number that is finite (not "nan", "inf"), or finite
// and above zero. Text that is no number is left to CLI11's conversion, which names it.
inline CLI::Validator number_check(bool positive) {
    return CLI::Validator(
        [positive](std::string& text) {
            double value = 0;
            try {
                value = std::stod(text);
            } catch (const std::exception&) {
                return std::string();
            }
            if (!std::isfinite(value))
                return "must be a finite number, not " + text;
            if (positive && !(value > 0))
                return "must be positive, not " + text;
            return std::string();
        },
        "");
}
// A whole number from 1 that fits 64 bits (a run id): CLI11 itself saturates a larger one.
inline CLI::Validator positive_int64() {
    return CLI::Validator(
        [](std::string& text) {
            int64_t value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (error != std::errc() || end != text.data() + text.size() || value < 1)
                return "must be a whole number from 1 to 9223372036854775807, not " + text;
            return std::string();
        },
        "");
}
inline CLI::Validator finite_number() {
    return number_check(false);
}
inline CLI::Validator positive_number() {
    return number_check(true);
}

void add_gpus_command(CLI::App& app, Action& action);
void add_monitor_command(CLI::App& app, Action& action);
void add_layouts_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_train_command(CLI::App& app, Action& action);
void add_results_command(CLI::App& app, Action& action);
void add_report_command(CLI::App& app, Action& action);
void add_profile_command(CLI::App& app, Action& action);
void add_plan_command(CLI::App& app, Action& action);
void add_exporter_command(CLI::App& app, Action& action);

}  // namespace migscope::cli
