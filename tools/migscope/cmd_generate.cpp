// `migscope generate WHAT`: bash or zsh completion or the man page, printed from this CLI's own
// definition. Hidden from --help: the build runs it and `cmake --install` installs what it wrote.
#include <memory>
#include <string>

#include "commands.h"
#include "core/error.h"
#include "core/version.h"
#include "output_file.h"
#include "shell_files.h"

namespace migscope::cli {
namespace {

struct GenerateOptions {
    std::string what;
    std::string output;
};

int run_generate(CLI::App& app, const GenerateOptions& options) {
    const std::vector<report::CommandInfo> commands = describe_cli(app);
    Output output(options.output);
    if (options.what == "bash-completion")
        output.stream() << report::bash_completion(commands);
    else if (options.what == "zsh-completion")
        output.stream() << report::zsh_completion(commands);
    else
        output.stream() << report::man_page(commands, kVersion);
    output.stream().flush();
    if (!output.stream())
        throw runtime_error("cannot write the " + options.what);
    return kExitOk;
}

}  // namespace

void add_generate_command(CLI::App& app, Action& action) {
    auto options = std::make_shared<GenerateOptions>();
    CLI::App* cmd = app.add_subcommand(
        "generate",
        "Print bash or zsh completion or the man page, made from this CLI's definition");
    cmd->group("");  // hidden: not in `migscope --help`, nor in the files it generates
    cmd->add_option("what", options->what, "bash-completion, zsh-completion or man")
        ->required()
        ->check(CLI::IsMember({"bash-completion", "zsh-completion", "man"}));
    path_option(
        cmd->add_option("-o,--output", options->output, "Write the output here instead of stdout"));
    cmd->callback([options, &action, &app] {
        action = [options, &app] { return run_generate(app, *options); };
    });
}

}  // namespace migscope::cli
