// `migscope stream simulate`: a trace played through the stream simulator under each policy, with
// each figure's interval from the planner's known error.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "core/error.h"
#include "core/folders.h"
#include "core/text.h"
#include "core/user_text.h"
#include "core/version.h"
#include "mig/catalog.h"
#include "output_file.h"
#include "stream/compare.h"
#include "stream/schedule.h"
#include "stream/simulation_output.h"
#include "stream/stream_input.h"
#include "stream/stream_page.h"
#include "stream_options.h"

namespace migscope::cli {
namespace {

struct SimulateOptions {
    std::string trace;
    size_t gpus = 1;
    StreamOptions stream;
    std::string policies = "never,static,periodic,online";
    std::string format = "table";
    double series_bin_s = 60;     // --format json, --html: the figures over time in bins this long
    std::string schedule_dir;     // --schedule-dir: the chosen policy's schedule, written here
    std::string schedule_policy;  // empty: the policy that scores best on the objective
    std::string html;             // --html: the page with the plots over time, written here
};

// A file opened before the work that fills it, removed again unless the work got to keep it.
struct RemovedUnlessKept {
    std::string path;  // empty: none
    bool kept = false;
    ~RemovedUnlessKept() {
        std::error_code ec;
        if (!path.empty() && !kept)
            std::filesystem::remove(path, ec);
    }
};

int simulate_command(const SimulateOptions& o) {
    const std::vector<std::string> policies = text::split(o.policies, ',');
    if (!o.schedule_policy.empty() &&
        std::find(policies.begin(), policies.end(), o.schedule_policy) == policies.end())
        throw input_error("--schedule-policy: '" + user_text::shown(o.schedule_policy) +
                          "' is not among the policies to compare (--policies " +
                          user_text::shown(o.policies) + ")");
    if (!o.schedule_dir.empty())
        create_folder(o.schedule_dir, "--schedule-dir");  // before any work
    Output page(o.html);                  // opened before any work: an unwritable path is bad input
    RemovedUnlessKept page_file{o.html};  // and no empty page is left when the command fails
    const stream::Trace trace = stream::read_trace_file(o.trace);
    const stream::StreamInput input = stream::stream_input(trace);
    const mig::GpuModel& model = mig::builtin_model(o.stream.gpu_model);
    const StreamModel stream_model = load_stream_model(o.stream, model, o.trace, input);

    stream::SimulationOptions options = simulation_options(o.stream, o.gpus);
    if (o.format == "json" || !o.html.empty())
        options.series_bin_s = o.series_bin_s;
    const stream::PolicySettings settings = policy_settings(o.stream, model);
    if (!o.stream.layout.empty() &&
        std::find(policies.begin(), policies.end(), "fixed") == policies.end())
        throw input_error("--layout is the policy fixed's layout: add fixed to --policies");
    stream::PolicyComparison compared;
    try {
        compared = stream::compare_policies(
            stream_model.problem, input.jobs, policies, options, settings, o.stream.min_gain,
            stream_model.error ? &*stream_model.error : nullptr, [](const std::string& name) {
                std::cerr << "migscope stream simulate: " << name << " ...\n";
            });
    } catch (const Error& e) {
        throw with_flag_names(e);
    }
    if (!o.schedule_dir.empty()) {
        const auto& [name, chosen] =
            stream::chosen_policy(compared, o.schedule_policy, settings.objective);
        const stream::LayoutSchedule schedule = stream::layout_schedule(chosen.point);
        stream::write_layout_schedule(o.schedule_dir, schedule);
        std::cerr << "migscope stream simulate: " << name << "'s schedule ("
                  << schedule.steps.size() << " layouts over time) in "
                  << user_text::escaped(o.schedule_dir) << ": " << stream::kScheduleConfigFile
                  << ", " << stream::kScheduleTimesFile << "\n";
    }
    const stream::SimulationSetup setup =
        simulation_setup(o.stream, o.trace, trace.jobs.size(), o.gpus, model, stream_model);
    if (!o.html.empty()) {
        const stream::StreamPageInput in{
            setup, trace.source, std::string("migscope ") + kVersion + " (" + kGitCommit + ")"};
        std::ostringstream text;
        stream::write_stream_page(in, stream_model.problem, input.jobs, compared, text);
        page.stream() << user_text::as_utf8(text.str());
        page.stream().flush();
        if (!page.stream())
            throw runtime_error("cannot write " + user_text::shown(o.html));
        page_file.kept = true;
        std::cerr << "migscope stream simulate: the page with the plots over time in "
                  << user_text::escaped(o.html) << "\n";
    }

    stream::simulation_printers().print(o.format, {setup, compared}, std::cout);
    return kExitOk;
}

}  // namespace

void add_stream_simulate_command(CLI::App& group, Action& action) {
    auto o = std::make_shared<SimulateOptions>();
    CLI::App* cmd = group.add_subcommand(
        "simulate",
        "Play a trace through the stream simulator under each policy (never partition, the best "
        "static layout, periodic and online repartitioning) on the planner's model, and print "
        "energy, completion times, tardiness and layout changes, each with its interval "
        "(docs/streams.md)");
    path_option(cmd->add_option("trace", o->trace, "The trace (JSON, `migscope stream trace`)"))
        ->required();
    cmd->add_option("--gpus", o->gpus, "GPUs the jobs share")
        ->capture_default_str()
        ->check(CLI::Range(size_t(1), size_t(100000)));
    add_stream_model_options(*cmd, o->stream);
    cmd->add_option("--policies", o->policies,
                    "Policies to compare, comma-separated (never, static, periodic, online; "
                    "fixed: your --layout)")
        ->capture_default_str();
    add_stream_policy_options(*cmd, o->stream, StreamCommand::kSimulate);
    path_option(cmd->add_option(
        "--schedule-dir", o->schedule_dir,
        "Write the chosen policy's layouts over time into this folder (made if missing): "
        "mig-parted-config.yaml (one named config per layout) and layout-schedule.json (when "
        "each GPU takes which config)"));
    cmd->add_option("--schedule-policy", o->schedule_policy,
                    "--schedule-dir: the policy whose schedule is written (one of --policies; "
                    "default: the one that scores best on --objective)");
    path_option(cmd->add_option(
        "--html", o->html,
        "Also write a self-contained HTML page: the comparison with each figure's interval, and "
        "energy and tardiness over time with the layout changes marked"));
    cmd->add_option("--series-bin-s", o->series_bin_s,
                    "--format json and --html: each policy's energy, tardiness and jobs done over "
                    "time, at the end of bins this long (made twice as long as often as needed to "
                    "keep at most 2000)")
        ->capture_default_str()
        ->check(positive_number());
    format_option(cmd, o->format, stream::simulation_printers().names())->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return simulate_command(*o); }; });
}

}  // namespace migscope::cli
