// The runner's lines on the worker's stdin: `start` begins the fixed work of held jobs, `stop`
// ends a steady-state window (the end of stdin means both).
#pragma once

#include <optional>
#include <string_view>

namespace migscope::protocol {

enum class Command { kStart, kStop };

// The line without its newline.
constexpr const char* to_line(Command command) {
    return command == Command::kStart ? "start" : "stop";
}

// The command a line (without its newline) says; none for any other line.
constexpr std::optional<Command> parse_command_line(std::string_view line) {
    if (line == to_line(Command::kStart))
        return Command::kStart;
    if (line == to_line(Command::kStop))
        return Command::kStop;
    return std::nullopt;
}

}  // namespace migscope::protocol
