// `migscope monitor`: samples one GPU at a fixed rate to CSV/JSON lines; with `-- CMD ARGS...` it
// runs the command and then prints its duration and energy, like `perf stat` for GPU energy.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "core/error.h"
#include "interrupt.h"
#include "nvml/session.h"
#include "report/monitor_output.h"
#include "report/trace_writer.h"
#include "telemetry/command_monitor.h"
#include "telemetry/nvml_power_source.h"

namespace migscope::cli {
namespace {

struct MonitorOptions {
    unsigned gpu = 0;
    double hz = 10.0;
    std::string format = "csv";
    std::string output;        // trace file; empty = stdout without a command, none with one
    std::string summary_path;  // JSON summary file
    double duration_s = 0;     // without a command: stop after this long (0 = until Ctrl-C)
    std::vector<std::string> command;
};

int run_monitor(const MonitorOptions& o) {
    nvml::Session session = nvml::Session::open();
    nvml::Device device = session.device(o.gpu);
    const std::string gpu_name = device.name().value.value_or("unknown");
    telemetry::NvmlPowerSource source(device);

    std::ofstream file;
    std::ostream* trace_out = nullptr;
    if (!o.output.empty()) {
        file.open(o.output);
        if (!file)
            throw input_error("--output: cannot write '" + o.output + "'");
        trace_out = &file;
    } else if (o.command.empty()) {
        trace_out = &std::cout;
    }
    std::optional<report::TraceWriter> writer;
    const auto on_start = [&](const telemetry::Sample& start) {
        if (!trace_out)
            return;
        writer.emplace(
            *trace_out,
            o.format == "jsonl" ? report::TraceFormat::kJsonLines : report::TraceFormat::kCsv,
            start.time, start.energy_j);
        writer->write_header();
    };
    const auto on_samples = [&](const std::vector<telemetry::Sample>& samples) {
        if (!writer)
            return;
        for (const telemetry::Sample& s : samples)
            writer->write(s);
        trace_out->flush();
    };
    report::MonitorReport r{o.gpu, gpu_name, {o.hz, o.duration_s, o.command, nullptr}, {}};
    r.request.interrupt = install_interrupt_handler();
    r.result = telemetry::monitor(source, r.request, on_start, on_samples);
    if (r.result.start_failure) {
        std::cerr << "migscope: cannot run '" << o.command[0] << "': " << *r.result.start_failure
                  << '\n';
        return kExitCommandNotFound;
    }
    report::print_monitor_summary(r, std::cerr);
    if (!o.summary_path.empty()) {
        std::ofstream summary(o.summary_path);
        if (!summary)
            throw input_error("--summary: cannot write '" + o.summary_path + "'");
        summary << report::monitor_json(r).dump(2) << '\n';
    }
    return r.result.exit_status.value_or(kExitOk);
}

}  // namespace

void add_monitor_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<MonitorOptions>();
    CLI::App* cmd = app.add_subcommand(
        "monitor",
        "Sample a GPU's power, energy counter, clocks and load; with `-- CMD ARGS...` run CMD "
        "(no shell) and report its duration and energy (counter and integrated trace)");
    cmd->add_option("--gpu", o->gpu, "GPU index")->capture_default_str();
    cmd->add_option("--hz", o->hz, "Samples per second")
        ->check(CLI::Range(0.1, 100.0))
        ->capture_default_str();
    // Not a printers table (core/printers.h): the trace is written sample by sample as it comes
    // (report/trace_writer.h), not printed once from a value.
    cmd->add_option("--format", o->format, "Trace format: csv or jsonl (JSON lines)")
        ->check(CLI::IsMember({"csv", "jsonl"}))
        ->capture_default_str();
    path_option(
        cmd->add_option("-o,--output", o->output,
                        "Trace file (default: stdout without a command, no trace with one)"));
    path_option(cmd->add_option("--summary", o->summary_path,
                                "Also write the summary as JSON to this file"));
    cmd->add_option("--duration", o->duration_s,
                    "Without a command: stop after this many seconds (default: at Ctrl-C)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("command", o->command, "Command to run and measure, after `--`");
    cmd->callback([o, &action] { action = [o] { return run_monitor(*o); }; });
}

}  // namespace migscope::cli
