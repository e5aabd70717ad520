// The files shells and `man` read (bash and zsh completion, the man page), printed from plain
// records of a command tree; the CLI fills them from its own definition (tools/migscope).
#pragma once

#include <string>
#include <vector>

namespace migscope::report {

// One option or positional argument of a command, as CLI11 declares it.
struct OptionInfo {
    std::vector<std::string> names;  // "-o", "--output"; a positional's own name ("spec")
    bool positional = false;
    bool takes_value = false;          // false: a flag
    bool repeats = false;              // may be given more than once (a vector option)
    std::string type;                  // "TEXT", "PATH", "INT", "FLOAT", …; "" for a flag
    std::vector<std::string> choices;  // an IsMember (or values_named) check's values
    std::string description;
    std::string default_value;  // CLI11's captured default, "" when none
};

// One command: the root (path empty) or a subcommand ({"results", "list"}).
struct CommandInfo {
    std::vector<std::string> path;
    std::string description;
    std::vector<OptionInfo> options;       // visible options and positionals, in declaration order
    std::vector<std::string> subcommands;  // visible subcommands' names
    std::vector<std::string> subcommand_descriptions;
};

// A bash completion script: `complete -F _migscope migscope`.
std::string bash_completion(const std::vector<CommandInfo>& commands);
// A zsh completion function file (#compdef migscope), for a folder of $fpath.
std::string zsh_completion(const std::vector<CommandInfo>& commands);
// A man page, section 1, in troff (man macros); `version` goes in its header.
std::string man_page(const std::vector<CommandInfo>& commands, const std::string& version);

}  // namespace migscope::report
