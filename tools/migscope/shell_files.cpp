// The files shells and `man` read (bash and zsh completion, the man page), printed from the CLI's
// own definition (shell_files.h).
#include "shell_files.h"

#include <cstdio>
#include <sstream>

namespace migscope::cli {
namespace {

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

// "TEXT:{table,json}" → {"table", "json"}: CLI11's IsMember check describes itself as the set.
std::vector<std::string> choices_of(const std::string& type_name) {
    const std::size_t open = type_name.find(":{");
    if (open == std::string::npos)
        return {};
    const std::size_t close = type_name.find('}', open);
    if (close == std::string::npos)
        return {};
    std::vector<std::string> out;
    std::stringstream items(type_name.substr(open + 2, close - open - 2));
    for (std::string item; std::getline(items, item, ',');)
        if (!item.empty())
            out.push_back(item);
    return out;
}

OptionInfo describe_option(const CLI::Option& option) {
    OptionInfo info;
    info.positional = !option.nonpositional();
    if (info.positional) {
        info.names.push_back(option.get_name());
    } else {
        for (const std::string& name : option.get_snames())
            info.names.push_back("-" + name);
        for (const std::string& name : option.get_lnames())
            info.names.push_back("--" + name);
    }
    info.takes_value = option.get_items_expected_max() > 0;
    info.repeats = option.get_expected_max() > 1;
    const std::string type_name = info.takes_value ? option.get_type_name() : "";
    info.type = type_name.substr(0, type_name.find(':'));
    info.choices = choices_of(type_name);
    info.description = option.get_description();
    info.default_value = option.get_default_str();
    return info;
}

void walk(CLI::App& app, std::vector<std::string> path, std::vector<CommandInfo>& out) {
    CommandInfo command;
    command.path = path;
    command.description = app.get_description();
    for (const CLI::Option* option : app.get_options()) {
        if (!option->get_group().empty())
            command.options.push_back(describe_option(*option));
    }
    const auto visible = [](CLI::App* sub) { return !sub->get_group().empty(); };
    std::vector<CLI::App*> subs = app.get_subcommands(visible);
    for (CLI::App* sub : subs) {
        command.subcommands.push_back(sub->get_name());
        command.subcommand_descriptions.push_back(first_line(sub->get_description()));
    }
    out.push_back(command);
    for (CLI::App* sub : subs) {
        std::vector<std::string> sub_path = path;
        sub_path.push_back(sub->get_name());
        walk(*sub, sub_path, out);
    }
}

// `text` in single quotes for a POSIX shell (bash and zsh alike).
std::string single_quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

bool is_path(const OptionInfo& option) {
    return option.type == "PATH";
}

// ---- bash ------------------------------------------------------------------------------------

// What follows an option that takes a value, for the bash script: "choices A B", "path" or
// "text"; a flag gets no entry.
std::string bash_value_kind(const OptionInfo& option) {
    if (!option.choices.empty())
        return "choices " + join(option.choices, " ");
    return is_path(option) ? "path" : "text";
}

}  // namespace

std::vector<CommandInfo> describe_cli(CLI::App& app) {
    std::vector<CommandInfo> out;
    walk(app, {}, out);
    return out;
}

std::string bash_completion(const std::vector<CommandInfo>& commands) {
    std::ostringstream subcommands, options, values, positionals;
    for (const CommandInfo& command : commands) {
        const std::string key = join(command.path, " ");
        if (!command.subcommands.empty())
            subcommands << "    " << single_quoted(key) << ") echo "
                        << single_quoted(join(command.subcommands, " ")) << " ;;\n";
        std::vector<std::string> names;
        for (const OptionInfo& option : command.options) {
            if (option.positional) {
                positionals << "    " << single_quoted(key) << ") echo "
                            << (is_path(option) ? "path" : "text") << " ;;\n";
                continue;
            }
            names.insert(names.end(), option.names.begin(), option.names.end());
            if (!option.takes_value)
                continue;
            for (const std::string& name : option.names)
                values << "    " << single_quoted(key + "|" + name) << ") echo "
                       << single_quoted(bash_value_kind(option)) << " ;;\n";
        }
        options << "    " << single_quoted(key) << ") echo " << single_quoted(join(names, " "))
                << " ;;\n";
    }
    std::ostringstream out;
    out << R"SH(# bash completion for migscope, generated by `migscope generate bash-completion` from the CLI's
# own definition: commands, subcommands, options and the values CLI11 checks them against.

# The subcommands of a command ("" is migscope itself, "results" its subcommand).
_migscope_subcommands() {
  case "$1" in
)SH" << subcommands.str()
        << R"SH(  esac
}
# Every option of a command.
_migscope_options() {
  case "$1" in
)SH" << options.str()
        << R"SH(  esac
}
# What follows "COMMAND|OPTION": "choices A B …", "path" or "text"; nothing after a flag.
_migscope_value() {
  case "$1" in
)SH" << values.str()
        << R"SH(  esac
}
# A command's positional arguments: "path" (files) or "text".
_migscope_positional() {
  case "$1" in
)SH" << positionals.str()
        << R"SH(  esac
}

_migscope() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev="" path="" word value prefix="" i=1
  COMPREPLY=()
  # The command the words so far name: subcommand names, skipping options and their values.
  while [ "$i" -lt "$COMP_CWORD" ]; do
    word=${COMP_WORDS[i]}
    if [ "$word" = "--" ]; then  # a command's own arguments follow (monitor -- CMD ARGS)
      if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
      else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      fi
      return 0
    fi
    case "$word" in
      -*=*) ;;
      -*)
        value=$(_migscope_value "$path|$word")
        if [ -n "$value" ]; then
          # "--format json", or "--format = json" where COMP_WORDBREAKS splits at '='.
          if [ "${COMP_WORDS[i + 1]:-}" = "=" ]; then i=$((i + 2)); else i=$((i + 1)); fi
        fi ;;
      *)
        case " $(_migscope_subcommands "$path") " in
          *" $word "*) path=${path:+$path }$word ;;
        esac ;;
    esac
    i=$((i + 1))
  done

  [ "$COMP_CWORD" -gt 1 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
  if [ "$cur" = "=" ]; then
    cur=""
  elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 2 ]; then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  else
    case "$cur" in --*=*) prev=${cur%%=*}; prefix=$prev=; cur=${cur#*=} ;; esac
  fi
  case "$prev" in
    -*)
      value=$(_migscope_value "$path|$prev")
      case "$value" in
        choices\ *)
          mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "${value#choices }" -- "$cur")
          return 0 ;;
        path)
          compopt -o filenames 2>/dev/null
          mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$cur")
          return 0 ;;
        ?*) return 0 ;;  # free text or a number: nothing to offer
      esac ;;
  esac
  case "$cur" in
    -*)
      mapfile -t COMPREPLY < <(compgen -W "$(_migscope_options "$path")" -- "$cur")
      return 0 ;;
  esac
  value=$(_migscope_subcommands "$path")
  if [ -n "$value" ]; then
    mapfile -t COMPREPLY < <(compgen -W "$value" -- "$cur")
  elif [ "$(_migscope_positional "$path")" = "path" ]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
  return 0
}
complete -F _migscope migscope
)SH";
    return out.str();
}

// ---- zsh -------------------------------------------------------------------------------------
namespace {

// Text for an _arguments explanation or a _describe entry, inside single quotes: one line,
// brackets and colons that _arguments would read as syntax replaced or escaped.
std::string zsh_text(const std::string& text, bool escape_colon) {
    std::string out;
    for (char c : first_line(text)) {
        if (c == '[')
            out += '(';
        else if (c == ']')
            out += ')';
        else if (c == '\\')
            out += "\\\\";
        else if (c == ':' && escape_colon)
            out += "\\:";
        else
            out += c;
    }
    return out;
}

std::string zsh_function_name(const std::vector<std::string>& path) {
    std::string name = "_migscope";
    for (const std::string& part : path) {
        name += "_";
        for (char c : part)
            name += (c == '-') ? '_' : c;
    }
    return name;
}

// One _arguments spec for `option`, single-quoted for the shell.
std::string zsh_spec(const OptionInfo& option) {
    std::string action;
    if (option.takes_value) {
        std::string values;
        for (const std::string& choice : option.choices)
            values += (values.empty() ? "" : " ") + choice;
        const std::string message = option.type.empty() ? "value" : option.type;
        if (!option.choices.empty())
            action = ":" + message + ":(" + values + ")";
        else if (is_path(option))
            action = ":" + message + ":_files";
        else
            action = ":" + message + ": ";
    }
    if (option.positional) {
        const std::string name = option.names.front();
        const std::string what =
            is_path(option) ? "_files"
                            : (option.choices.empty() ? " " : action.substr(action.rfind(':') + 1));
        return single_quoted((option.repeats ? "*:" : ":") + zsh_text(name, true) + ":" + what);
    }
    const std::string explanation = "[" + zsh_text(option.description, false) + "]" + action;
    std::vector<std::string> forms;
    for (const std::string& name : option.names) {
        const bool is_long = name.rfind("--", 0) == 0;
        forms.push_back(name + (option.takes_value ? (is_long ? "=" : "+") : ""));
    }
    if (forms.size() == 1)
        return single_quoted((option.repeats ? "*" : "") + forms.front() + explanation);
    const std::string exclusive = option.repeats ? "*" : "(" + join(option.names, " ") + ")";
    return single_quoted(exclusive) + "{" + join(forms, ",") + "}" + single_quoted(explanation);
}

}  // namespace

std::string zsh_completion(const std::vector<CommandInfo>& commands) {
    std::ostringstream out;
    out << R"SH(#compdef migscope
# zsh completion for migscope, generated by `migscope generate zsh-completion` from the CLI's own
# definition: commands, subcommands, options and the values CLI11 checks them against.
)SH";
    // Deepest first is not needed: zsh looks functions up when they are called.
    for (const CommandInfo& command : commands) {
        const std::string function = zsh_function_name(command.path);
        out << "\n" << function << "() {\n";
        const bool has_subcommands = !command.subcommands.empty();
        if (has_subcommands)
            out << "  local curcontext=\"$curcontext\" state state_descr line\n"
                << "  typeset -A opt_args\n";
        out << "  _arguments -s -S" << (has_subcommands ? " -C" : "");
        for (const OptionInfo& option : command.options)
            out << " \\\n    " << zsh_spec(option);
        if (has_subcommands)
            out << " \\\n    '1: :->command' \\\n    '*:: :->argument' && return\n";
        else
            out << "\n";
        if (has_subcommands) {
            const std::string full = join(command.path, " ");
            out << "  case $state in\n    command)\n      local -a commands\n      commands=(";
            for (std::size_t i = 0; i < command.subcommands.size(); ++i)
                out << "\n        "
                    << single_quoted(zsh_text(command.subcommands[i], true) + ":" +
                                     zsh_text(command.subcommand_descriptions[i], false));
            out << "\n      )\n      _describe -t commands "
                << single_quoted("migscope" + (full.empty() ? "" : " " + full) + " command")
                << " commands ;;\n    argument)\n"
                << "      curcontext=${curcontext%:*:*}:migscope-$words[1]:\n"
                << "      case $words[1] in\n";
            for (const std::string& sub : command.subcommands) {
                std::vector<std::string> sub_path = command.path;
                sub_path.push_back(sub);
                out << "        " << single_quoted(sub) << ") " << zsh_function_name(sub_path)
                    << " ;;\n";
            }
            out << "      esac ;;\n  esac\n";
        }
        out << "}\n";
    }
    out << R"SH(
# Autoloaded from $fpath, this file is the body of _migscope; sourced, it registers itself.
if [ "$funcstack[1]" = "_migscope" ]; then
  _migscope "$@"
else
  compdef _migscope migscope
fi
)SH";
    return out.str();
}

// ---- man -------------------------------------------------------------------------------------
namespace {

// Text for troff: backslashes and minus signs escaped, a line's leading '.' or '\'' guarded,
// characters outside ASCII as \[uXXXX] (groff reads its input as Latin-1 otherwise).
std::string roff(const std::string& text) {
    std::string out;
    bool line_start = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (line_start && (c == '.' || c == '\''))
            out += "\\&";
        line_start = c == '\n';
        if (c == '\\') {
            out += "\\e";
        } else if (c == '-') {
            out += "\\-";
        } else if (c < 0x80) {
            out += static_cast<char>(c);
        } else {
            // A UTF-8 sequence (the CLI's own text is UTF-8); a stray byte is shown as U+FFFD.
            int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
            unsigned code = extra == 3 ? c & 0x07u : extra == 2 ? c & 0x0Fu : c & 0x1Fu;
            if (extra < 0 || i + extra >= text.size()) {
                code = 0xFFFD;
                extra = 0;
            }
            for (int k = 1; k <= extra; ++k)
                code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
            i += extra;
            char buffer[16];
            std::snprintf(buffer, sizeof buffer, "\\[u%04X]", code);
            out += buffer;
        }
    }
    return out;
}

// Text whose lines stay lines (CLI11 descriptions break lines on purpose): a .br between them.
std::string roff_lines(const std::string& text) {
    std::string out;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find('\n', start);
        out += roff(text.substr(start, end - start));
        if (end == std::string::npos)
            return out;
        out += "\n.br\n";
        start = end + 1;
    }
}

std::string option_heading(const OptionInfo& option) {
    std::string out;
    for (const std::string& name : option.names)
        out += (out.empty() ? "" : ", ") + ("\\fB" + roff(name) + "\\fR");
    if (option.takes_value)
        out += " \\fI" + roff(option.type.empty() ? "VALUE" : option.type) + "\\fR";
    return out;
}

std::string synopsis(const CommandInfo& command) {
    std::string out = "\\fBmigscope";
    for (const std::string& part : command.path)
        out += " " + roff(part);
    out += "\\fR";
    if (!command.subcommands.empty())
        out += " \\fICOMMAND\\fR";
    out += " [\\fIOPTIONS\\fR]";
    for (const OptionInfo& option : command.options) {
        if (option.positional)
            out += " [\\fI" + roff(option.names.front()) + "\\fR" + (option.repeats ? "...]" : "]");
    }
    return out;
}

}  // namespace

std::string man_page(const std::vector<CommandInfo>& commands, const std::string& version) {
    std::ostringstream out;
    const CommandInfo& root = commands.front();
    std::string summary = first_line(root.description);
    if (summary.rfind("migscope: ", 0) == 0)
        summary = summary.substr(10);
    out << ".\\\" The migscope man page, generated by `migscope generate man` from the CLI's own\n"
        << ".\\\" definition (the text of every command's --help).\n"
        << ".TH MIGSCOPE 1 \"\" \"migscope " << roff(version) << "\" \"User Commands\"\n"
        << ".nh\n"  // no hyphenation: option values and names are typed as shown
        << ".SH NAME\nmigscope \\- " << roff(summary) << "\n"
        << ".SH SYNOPSIS\n"
        << synopsis(root) << "\n"
        << ".SH DESCRIPTION\n"
        << roff_lines(root.description) << "\n"
        << ".PP\nEach command's options follow under COMMANDS; `migscope COMMAND \\-\\-help` "
           "prints the same text.\n";
    const auto print_options = [&out](const CommandInfo& command) {
        for (const OptionInfo& option : command.options) {
            out << ".TP\n"
                << (option.positional ? "\\fI" + roff(option.names.front()) + "\\fR"
                                      : option_heading(option))
                << "\n"
                << roff_lines(option.description);
            if (!option.choices.empty())
                out << "\n(one of: " << roff(join(option.choices, ", ")) << ")";
            if (!option.default_value.empty())
                out << "\n(default: " << roff(option.default_value) << ")";
            out << "\n";
        }
    };
    out << ".SH OPTIONS\n";
    print_options(root);
    out << ".SH COMMANDS\n";
    for (std::size_t i = 1; i < commands.size(); ++i) {
        const CommandInfo& command = commands[i];
        out << ".SS \"" << roff(join(command.path, " ")) << "\"\n"
            << synopsis(command) << "\n.br\n"
            << roff_lines(command.description) << "\n";
        if (!command.subcommands.empty())
            out << ".PP\nSubcommands: " << roff(join(command.subcommands, ", ")) << ".\n";
        print_options(command);
    }
    out << ".SH FILES\n.TP\n\\fI../share/migscope/\\fR (beside the binary)\n"
        << "The shipped data: GPU profiles, the model's residuals, the study's store.\n"
        << ".SH SEE ALSO\nThe full documentation: \\fI../share/doc/migscope/docs/cli.md\\fR "
        << "beside the binary, and \\fIREADME.md\\fR there.\n";
    return out.str();
}

}  // namespace migscope::cli
