// `migscope gpus`: every GPU's identity, MIG mode, power, energy counter, clocks and load, via
// NVML.
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/error.h"
#include "nvml/session.h"
#include "report/gpu_output.h"

namespace migscope::cli {
namespace {

struct GpusOptions {
    std::string format = "table";
};

int run_gpus(const GpusOptions& options) {
    nvml::Session session = nvml::Session::open();
    if (session.device_count() == 0)
        throw unavailable_error("NVML answers but reports no GPUs");
    report::gpus_printers().print(options.format, report::gpus_json(session), std::cout);
    return kExitOk;
}

}  // namespace

void add_gpus_command(CLI::App& app, Action& action) {
    auto options = std::make_shared<GpusOptions>();
    CLI::App* cmd = app.add_subcommand(
        "gpus", "List GPUs: identity, SMs, memory, MIG mode, power, energy counter, clocks, load");
    format_option(cmd, options->format, report::gpus_printers().names(), "Output format")
        ->capture_default_str();
    cmd->callback([options, &action] { action = [options] { return run_gpus(*options); }; });
}

}  // namespace migscope::cli
