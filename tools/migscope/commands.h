// The migscope subcommands: each registers its options on the CLI and sets the action to run.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/printers.h"
#include "core/user_text.h"

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
                return "must be a finite number, not " + user_text::shown(text);
            if (positive && !(value > 0))
                return "must be positive, not " + user_text::shown(text);
            return std::string();
        },
        "");
}
// A whole number as people write it, for every integer option (main() puts it on each): decimal
// digits, with a '-' first where the option takes negatives, that fit 64 bits; leading zeros are
// dropped. CLI11 itself reads "-1" into an unsigned option as 18446744073709551615, "010" as 8
// (octal), "0x10" as 16 and a number past 64 bits as the largest one.
inline CLI::Validator whole_number(bool may_be_negative) {
    return CLI::Validator(
        [may_be_negative](std::string& text) {
            const bool negative = !text.empty() && text[0] == '-';
            std::string digits = text.substr(negative ? 1 : 0);
            const std::string wanted = may_be_negative ? "a whole number" : "a whole number from 0";
            if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
                (negative && !may_be_negative))
                return "must be " + wanted + ", not " + user_text::shown(text);
            digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
            const std::string value = (negative ? "-" : "") + digits;
            bool fits = false;
            if (may_be_negative) {
                int64_t parsed = 0;
                const auto r = std::from_chars(value.data(), value.data() + value.size(), parsed);
                fits = r.ec == std::errc();
            } else {
                uint64_t parsed = 0;
                const auto r = std::from_chars(value.data(), value.data() + value.size(), parsed);
                fits = r.ec == std::errc();
            }
            if (!fits)
                return "must be " + wanted + " that fits 64 bits, not " + user_text::shown(text);
            text = value;
            return std::string();
        },
        "");
}
// Text the user gives (names, labels, images, job lists, a command's arguments): UTF-8 without
// NUL (core/user_text.h). main() puts it on every text option that path_option() did not mark.
inline CLI::Validator text_check() {
    return CLI::Validator([](std::string& text) { return user_text::text_problem(text); }, "");
}
// Marks an option whose value is a file or folder path: a Linux path may hold any byte but NUL
// (and argv cannot hold NUL), so it is not held to UTF-8. Its type shows as PATH in --help.
inline CLI::Option* path_option(CLI::Option* option) {
    return option->type_name("PATH");
}
// A number of at most user_text::kMaxShownChars characters: CLI11's conversion error would echo
// a longer one whole (an 18 KB number once).
inline CLI::Validator short_number() {
    return CLI::Validator(
        [](std::string& text) {
            if (text.size() <= user_text::kMaxShownChars)
                return std::string();
            return "is not a number of at most " + std::to_string(user_text::kMaxShownChars) +
                   " characters: " + user_text::shown(text);
        },
        "");
}
// Names the values an option takes, for --help ("TEXT:{a,b}") and the shell completion, where the
// library checks the value itself (in any case, with "did you mean"): this check passes all.
inline CLI::Validator values_named(const std::vector<std::string>& names) {
    std::string set;
    for (const std::string& name : names)
        set += (set.empty() ? "" : ",") + name;
    return CLI::Validator([](std::string&) { return std::string(); }, "{" + set + "}");
}
// `--format`: one of `names` (an output's printers, core/printers.h), checked by CLI11; `help`
// says what they are, by default the names ("table or json").
inline CLI::Option* format_option(CLI::App* cmd, std::string& format,
                                  const std::vector<std::string>& names,
                                  const std::string& help = "") {
    return cmd->add_option("--format", format, help.empty() ? choices_text(names) : help)
        ->check(CLI::IsMember(names));
}

inline CLI::Validator finite_number() {
    return number_check(false);
}
inline CLI::Validator positive_number() {
    return number_check(true);
}

// A request's error as the CLI says it: a field it starts with (`assign[2]: `, `layout: `) as
// the flag that gave it (`--assign[2]: `).
inline Error with_flag_names(const Error& e) {
    const std::string what = e.what();
    for (const std::string field : {"assign", "layout"}) {
        if (what.rfind(field, 0) == 0 && what.size() > field.size() &&
            std::string("[:").find(what[field.size()]) != std::string::npos)
            return Error(e.kind(), "--" + what);
    }
    return e;
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
void add_energy_command(CLI::App& app, Action& action);
void add_stream_command(CLI::App& app, Action& action);
// `stream simulate`, a subcommand of `stream` (cmd_stream_simulate.cpp).
void add_stream_simulate_command(CLI::App& group, Action& action);
void add_stream_replay_command(CLI::App& group, Action& action);
// Hidden; registered last: it prints completion and the man page from every command above.
void add_generate_command(CLI::App& app, Action& action);

}  // namespace migscope::cli
