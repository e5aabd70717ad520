// `migscope stream`: job streams. `trace` writes a trace from sacct output, a kubectl Job list or
// the generator; `check` validates a trace and summarises it; `simulate` (cmd_stream_simulate.cpp)
// plays it through the simulator.
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "core/error.h"
#include "core/user_text.h"
#include "output_file.h"
#include "stream/generate.h"
#include "stream/history.h"
#include "stream/trace.h"
#include "stream/trace_summary_output.h"

namespace migscope::cli {
namespace {

struct TraceOptions {
    std::string from_sacct;
    std::string from_kubectl;
    bool generate = false;
    std::vector<std::string> maps;
    std::string arrivals = "poisson";
    std::string mix;
    std::optional<double> work_median;
    std::optional<double> duration_median_s;
    stream::GenerateOptions g;
    std::string output;
};

struct CheckOptions {
    std::string path;
    std::string format = "table";
};

std::string read_text(const std::string& path, const std::string& option) {
    std::ifstream in(path);
    if (!in)
        throw input_error(option + ": cannot read " + user_text::shown(path));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

int trace_command(const TraceOptions& o, const CLI::App& cmd) {
    const int sources = !o.from_sacct.empty() + !o.from_kubectl.empty() + o.generate;
    if (sources != 1)
        throw input_error("give one of --from-sacct FILE, --from-kubectl FILE and --generate");
    static const char* const kGenerateOptions[] = {"--seed",
                                                   "--arrivals",
                                                   "--rate-per-h",
                                                   "--amplitude",
                                                   "--peak-h",
                                                   "--period-h",
                                                   "--count",
                                                   "--span-h",
                                                   "--mix",
                                                   "--work-median",
                                                   "--duration-median-s",
                                                   "--sigma",
                                                   "--deadline-slack"};
    for (const char* name : kGenerateOptions) {
        if (!o.generate && cmd.get_option(name)->count() > 0)
            throw input_error(std::string(name) + ": only with --generate");
    }
    if (o.generate && !o.maps.empty())
        throw input_error("--map: only with --from-sacct or --from-kubectl");
    stream::Trace trace;
    if (o.generate) {
        stream::GenerateOptions g = o.g;
        g.arrivals = o.arrivals == "diurnal" ? stream::ArrivalProcess::kDiurnal
                                             : stream::ArrivalProcess::kPoisson;
        if (!o.mix.empty())
            g.mix = stream::parse_mix(o.mix);
        if (o.work_median && o.duration_median_s)
            throw input_error("--work-median and --duration-median-s: give one or the other");
        if (o.duration_median_s) {
            g.amount = stream::AmountKind::kDuration;
            g.amount_median = *o.duration_median_s;
        } else if (o.work_median) {
            g.amount_median = *o.work_median;
        }
        trace = stream::generate_trace(g);
    } else {
        stream::HistoryOptions h;
        h.rules = stream::parse_name_rules(o.maps);
        const stream::HistoryRead read =
            o.from_sacct.empty()
                ? stream::read_kubectl_jobs(read_text(o.from_kubectl, "--from-kubectl"),
                                            o.from_kubectl, h)
                : stream::read_sacct(read_text(o.from_sacct, "--from-sacct"), o.from_sacct, h);
        for (const std::string& note : read.notes)
            std::cerr << "note: " << user_text::escaped(note) << '\n';
        trace = read.trace;
    }
    // Opened once the trace is made: a bad input leaves an existing -o FILE as it was.
    Output out(o.output);
    out.stream() << stream::write_trace_json(trace);
    return kExitOk;
}

int check_command(const CheckOptions& o) {
    const stream::Trace trace = stream::read_trace_file(o.path);
    stream::trace_summary_printers().print(o.format, {o.path, trace}, std::cout);
    return kExitOk;
}

}  // namespace

void add_stream_command(CLI::App& app, Action& action) {
    CLI::App* group = app.add_subcommand(
        "stream",
        "Job streams: traces of jobs arriving over time, written, checked and played through "
        "the stream simulator under each partitioning policy, and a policy's schedule replayed for "
        "real (docs/streams.md).");
    group->require_subcommand(1);

    auto t = std::make_shared<TraceOptions>();
    CLI::App* trace = group->add_subcommand(
        "trace",
        "Write a trace (JSON, docs/streams.md) from Slurm sacct output, a kubectl Job list or the "
        "seeded generator");
    path_option(trace->add_option("--from-sacct", t->from_sacct,
                                  "`sacct --parsable2` output with its header (JobID, JobName, "
                                  "Submit, Elapsed or Start and End; State, AllocTRES read too)"));
    path_option(
        trace->add_option("--from-kubectl", t->from_kubectl, "`kubectl get jobs -o json` output"));
    trace->add_flag("--generate", t->generate, "Generate a trace from the options below");
    trace->add_option("--map", t->maps,
                      "Readers: jobs named NAME (or starting with PREFIX*) are this built-in "
                      "workload: NAME=WORKLOAD[:MODE][:BATCH]; repeatable, first match wins");
    trace->add_option("--seed", t->g.seed, "Generator: the seed (same seed, same trace)")
        ->capture_default_str();
    trace->add_option("--arrivals", t->arrivals, "Generator: poisson or diurnal")
        ->check(CLI::IsMember({"poisson", "diurnal"}))
        ->capture_default_str();
    trace
        ->add_option("--rate-per-h", t->g.rate_per_h,
                     "Generator: mean arrivals per hour (diurnal: averaged over a period)")
        ->capture_default_str();
    trace
        ->add_option("--amplitude", t->g.amplitude,
                     "Diurnal: rate = mean x (1 + A cos(2 pi (t - peak) / period)), A from 0 to 1")
        ->capture_default_str();
    trace->add_option("--peak-h", t->g.peak_h, "Diurnal: hour of the peak from the trace's start")
        ->capture_default_str();
    trace->add_option("--period-h", t->g.period_h, "Diurnal: the period in hours")
        ->capture_default_str();
    trace->add_option("--count", t->g.count, "Generator: number of jobs");
    trace->add_option("--span-h", t->g.span_h, "Generator: stop at this many hours");
    trace->add_option("--mix", t->mix,
                      "Generator: WORKLOAD[:MODE][:BATCH][=WEIGHT],... (default: the six "
                      "workloads and three fine-tunes, weight 1 each)");
    trace->add_option("--work-median", t->work_median,
                      "Generator: jobs in steps, log-normal with this median (default 1000)");
    trace->add_option("--duration-median-s", t->duration_median_s,
                      "Generator: jobs in seconds, log-normal with this median");
    trace
        ->add_option("--sigma", t->g.amount_sigma,
                     "Generator: the log-normal's sigma (of ln amount)")
        ->capture_default_str();
    trace->add_option(
        "--deadline-slack", t->g.deadline_slack,
        "Generator: deadline = arrival + SLACK x duration (with --duration-median-s)");
    path_option(trace->add_option("-o,--output", t->output, "Write here instead of stdout"));
    trace->callback(
        [t, trace, &action] { action = [t, trace] { return trace_command(*t, *trace); }; });

    auto c = std::make_shared<CheckOptions>();
    CLI::App* check = group->add_subcommand(
        "check", "Validate a trace file and print a summary: jobs, span, arrival rate, workloads");
    path_option(check->add_option("file", c->path, "The trace (JSON)"))->required();
    format_option(check, c->format, stream::trace_summary_printers().names())
        ->capture_default_str();
    check->callback([c, &action] { action = [c] { return check_command(*c); }; });

    add_stream_simulate_command(*group, action);
    add_stream_replay_command(*group, action);
}

}  // namespace migscope::cli
