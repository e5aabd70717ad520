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
#include "report/json_value.h"
#include "report/trace_writer.h"
#include "telemetry/command_monitor.h"
#include "telemetry/nvml_power_source.h"

namespace migscope::cli {
namespace {

using report::maybe;

struct MonitorOptions {
    unsigned gpu = 0;
    double hz = 10.0;
    std::string format = "csv";
    std::string output;        // trace file; empty = stdout without a command, none with one
    std::string summary_path;  // JSON summary file
    double duration_s = 0;     // without a command: stop after this long (0 = until Ctrl-C)
    std::vector<std::string> command;
};

std::string opt(const std::optional<double>& v, const char* unit, int decimals) {
    return v ? fmt::format("{:.{}f} {}", *v, decimals, unit) : std::string("-");
}

nlohmann::json summary_json(const MonitorOptions& o, const std::string& gpu_name,
                            const telemetry::EnergySummary& e, const telemetry::SamplerStats& st,
                            std::optional<int> exit_status) {
    nlohmann::json j;
    j["gpu_index"] = o.gpu;
    j["gpu_name"] = gpu_name;
    j["sample_rate_hz"] = o.hz;
    j["command"] = o.command;
    j["exit_status"] = maybe(exit_status);
    j["duration_s"] = e.duration_s;
    j["energy_counter_j"] = maybe(e.counter_energy_j);
    j["energy_trace_j"] = maybe(e.trace_energy_j);
    j["disagreement_pct"] = maybe(e.disagreement_pct);
    j["average_power_w"] = maybe(e.average_power_w);
    j["peak_power_w"] = maybe(e.peak_power_w);
    j["power_samples"] = e.power_samples;
    j["max_sample_gap_s"] = maybe(e.max_gap_s);
    j["method"] =
        "energy_counter_j: board energy counter (nvmlDeviceGetTotalEnergyConsumption) read just "
        "before the command starts and just after it exits; energy_trace_j: trapezoid over " +
        std::string(e.trace_is_one_second_average ? "the 1 s average power field"
                                                  : "the instant power field (NVML field 186)") +
        "; average_power_w = energy_counter_j / duration_s";
    j["sampler"] = {{"samples", st.samples},
                    {"missed_periods", st.missed_periods},
                    {"thread_cpu_s", st.thread_cpu_s},
                    {"wall_s", st.wall_s},
                    {"mean_read_s", st.mean_read_s}};
    j["warnings"] = e.warnings;
    return j;
}

void print_summary(std::ostream& out, const MonitorOptions& o, const std::string& gpu_name,
                   const telemetry::EnergySummary& e, const telemetry::SamplerStats& st,
                   std::optional<int> exit_status) {
    auto row = [&](const char* key, const std::string& value) {
        out << fmt::format("  {:<16} {}\n", key, value);
    };
    out << fmt::format("\nmigscope monitor: GPU {} ({}), sampled at {:g} Hz\n", o.gpu, gpu_name,
                       o.hz);
    if (!o.command.empty()) {
        std::string cmd;
        for (const std::string& a : o.command)
            cmd += (cmd.empty() ? "" : " ") + a;
        row("command", cmd + fmt::format("  (exit {})", exit_status.value_or(-1)));
    }
    row("duration", fmt::format("{:.3f} s", e.duration_s));
    row("energy", opt(e.counter_energy_j, "J", 1) + "  (board energy counter delta)");
    row("trace energy",
        opt(e.trace_energy_j, "J", 1) +
            fmt::format("  (trapezoid over {} {} readings, longest gap {})", e.power_samples,
                        e.trace_is_one_second_average ? "1 s average power" : "instant power",
                        opt(e.max_gap_s, "s", 3)));
    row("disagreement", opt(e.disagreement_pct, "%", 2) + "  (trace vs counter)");
    row("average power", opt(e.average_power_w, "W", 1));
    row("peak power", opt(e.peak_power_w, "W", 1) + "  (highest reading)");
    const double cpu_pct = st.wall_s > 0 ? 100.0 * st.thread_cpu_s / st.wall_s : 0.0;
    row("sampler", fmt::format("{} samples, {} missed periods, {:.1f} ms CPU ({:.3f}% of one "
                               "core), {:.0f} us per read",
                               st.samples, st.missed_periods, st.thread_cpu_s * 1e3, cpu_pct,
                               st.mean_read_s * 1e6));
    for (const std::string& w : e.warnings)
        out << "  warning: " << w << '\n';
}

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
    const telemetry::MonitorResult r = telemetry::monitor(
        source, {o.hz, o.duration_s, o.command, install_interrupt_handler()}, on_start, on_samples);
    if (r.start_failure) {
        std::cerr << "migscope: cannot run '" << o.command[0] << "': " << *r.start_failure << '\n';
        return kExitCommandNotFound;
    }
    print_summary(std::cerr, o, gpu_name, r.energy, r.sampler, r.exit_status);
    if (!o.summary_path.empty()) {
        std::ofstream summary(o.summary_path);
        if (!summary)
            throw input_error("--summary: cannot write '" + o.summary_path + "'");
        summary << summary_json(o, gpu_name, r.energy, r.sampler, r.exit_status).dump(2) << '\n';
    }
    return r.exit_status.value_or(kExitOk);
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
    cmd->add_option("--format", o->format, "Trace format: csv or jsonl (JSON lines)")
        ->check(CLI::IsMember({"csv", "jsonl"}))
        ->capture_default_str();
    cmd->add_option("-o,--output", o->output,
                    "Trace file (default: stdout without a command, no trace with one)");
    cmd->add_option("--summary", o->summary_path, "Also write the summary as JSON to this file");
    cmd->add_option("--duration", o->duration_s,
                    "Without a command: stop after this many seconds (default: at Ctrl-C)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("command", o->command, "Command to run and measure, after `--`");
    cmd->callback([o, &action] { action = [o] { return run_monitor(*o); }; });
}

}  // namespace migscope::cli
