// migscope: command-line entry point. Parses the subcommand, runs it, maps errors to exit codes
// (every message one line: control characters and bytes that are not UTF-8 escaped).
#include <algorithm>
#include <iostream>

#include "commands.h"
#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "core/version.h"

namespace {

// Every number option of `app` and its subcommands refuses "nan" and "inf", which CLI11 reads
// as numbers and its range checks let through ("--hz nan" was once accepted).
void require_finite_numbers(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        if (option->get_type_name().rfind("FLOAT", 0) == 0)  // "FLOAT", "FLOAT:checks..."
            option->check(migscope::cli::finite_number());
    }
    for (CLI::App* sub : app.get_subcommands({}))
        require_finite_numbers(*sub);
}

// " (did you mean '--jobs'?)" for the first argument that looks like a long option the command
// lacks, against the options of the deepest command the parse reached; "" when none is near.
std::string option_hint(CLI::App& app, int argc, char** argv) {
    CLI::App* at = &app;
    for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands())
        at = subs.front();
    std::vector<std::string> names;
    for (const CLI::Option* option : at->get_options()) {
        for (const std::string& name : option->get_lnames())
            names.push_back("--" + name);
    }
    for (int i = 1; i < argc; ++i) {
        const std::string arg(argv[i]);
        if (arg == "--")
            break;  // what follows is a command's own (monitor -- CMD)
        if (arg.rfind("--", 0) != 0)
            continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (std::find(names.begin(), names.end(), name) == names.end())
            return migscope::text::did_you_mean(name, names);
    }
    return "";
}

// Every number option of `app` and its subcommands refuses text over 64 characters before CLI11
// converts it (its error would echo the text whole).
void require_short_numbers(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        const std::string type = option->get_type_name();
        if (type.rfind("FLOAT", 0) == 0 || type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0)
            option->check(migscope::cli::short_number());
    }
    for (CLI::App* sub : app.get_subcommands({}))
        require_short_numbers(*sub);
}

// Every integer option of `app` and its subcommands takes a decimal whole number that fits 64
// bits, not negative unless the option is signed (cli::whole_number). A transform, not a check:
// it drops leading zeros, which CLI11 would read as octal.
void require_whole_numbers(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        const std::string type = option->get_type_name();
        if (type.rfind("UINT", 0) == 0)
            option->transform(migscope::cli::whole_number(false));
        else if (type.rfind("INT", 0) == 0)
            option->transform(migscope::cli::whole_number(true));
    }
    for (CLI::App* sub : app.get_subcommands({}))
        require_whole_numbers(*sub);
}

// Every text option of `app` and its subcommands is UTF-8 without NUL (cli::text_check): names,
// labels, images, job lists and a command's arguments end up in YAML, scripts, tables and the
// store. Paths (cli::path_option) may hold any byte.
void require_utf8_text(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        if (option->get_type_name().rfind("TEXT", 0) == 0)  // "TEXT", "TEXT:{a,b}"
            option->check(migscope::cli::text_check());
    }
    for (CLI::App* sub : app.get_subcommands({}))
        require_utf8_text(*sub);
}

}  // namespace

int main(int argc, char** argv) {
    using namespace migscope;
    CLI::App app{
        "migscope: how should I split this GPU, and which job goes where?\n"
        "Runs training jobs side by side on GPU partitions and measures throughput and energy.\n"
        "Exit codes: 0 ok, 1 failure (or a failed job), 2 bad input, 3 NVIDIA driver/GPU\n"
        "unavailable, 130 interrupted; `monitor -- CMD` exits with CMD's status."};
    app.set_version_flag("--version",
                         std::string("migscope ") + kVersion + " (" + kGitCommit + ")");
    app.require_subcommand(1);

    cli::Action action;
    cli::add_gpus_command(app, action);
    cli::add_monitor_command(app, action);
    cli::add_layouts_command(app, action);
    cli::add_run_command(app, action);
    cli::add_train_command(app, action);
    cli::add_results_command(app, action);
    cli::add_report_command(app, action);
    cli::add_profile_command(app, action);
    cli::add_plan_command(app, action);
    cli::add_exporter_command(app, action);
    cli::add_energy_command(app, action);
    cli::add_stream_command(app, action);
    cli::add_generate_command(app, action);
    require_finite_numbers(app);
    require_utf8_text(app);
    require_short_numbers(app);
    require_whole_numbers(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "migscope: " << user_text::foreign_message(e.what())
                  << option_hint(app, argc, argv) << " (see --help)\n";
        return kExitBadInput;
    } catch (const Error& e) {  // raised while validating options
        std::cerr << "migscope: " << user_text::escaped(e.what()) << '\n';
        return exit_code_for(e.kind());
    }
    try {
        return action ? action() : kExitBadInput;
    } catch (const Error& e) {
        std::cerr << "migscope: " << user_text::escaped(e.what()) << '\n';
        return exit_code_for(e.kind());
    } catch (const std::exception& e) {
        std::cerr << "migscope: internal error: " << user_text::escaped(e.what()) << '\n';
        return kExitFailure;
    }
}
