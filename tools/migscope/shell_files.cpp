// The CLI11 command tree walked into the plain records the shell files are printed from
// (shell_files.h).
#include "shell_files.h"

#include <sstream>

namespace migscope::cli {
namespace {

using report::CommandInfo;
using report::OptionInfo;

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
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

}  // namespace

std::vector<CommandInfo> describe_cli(CLI::App& app) {
    std::vector<CommandInfo> out;
    walk(app, {}, out);
    return out;
}

}  // namespace migscope::cli
