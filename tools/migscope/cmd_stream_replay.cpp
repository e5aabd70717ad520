// `migscope stream replay`: a trace simulated under one policy as `stream simulate` does, then
// that policy's schedule executed for real, one fixed-work run per layout (runner/stream_replay.h),
// and every job's measured times and energy set against the simulator's with its intervals.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/error.h"
#include "core/folders.h"
#include "core/user_text.h"
#include "interrupt.h"
#include "mig/catalog.h"
#include "output_file.h"
#include "report/json_value.h"
#include "runner/stream_replay.h"
#include "runner/stream_replay_output.h"
#include "store/store.h"
#include "stream/compare.h"
#include "stream/replay_estimate.h"
#include "stream/replay_plan.h"
#include "stream/stream_input.h"
#include "stream_options.h"

namespace migscope::cli {
namespace {

struct ReplayOptions {
    std::string trace;
    std::string policy = "online";
    StreamOptions stream;
    std::string backend;  // empty: green with a GPU, cpu without
    unsigned gpu = 0;
    runner::Measurement measurement;
    std::string run_dir;
    std::string db;
    std::string label;
    std::string format = "table";
    std::string output;
    bool dry_run = false;
};

using Json = nlohmann::ordered_json;

constexpr size_t kReplayGpus = 1;  // a replay runs its schedule on one GPU

// The machine and the backend (o.backend filled in when not given), checked before anything is
// simulated or run: a backend that needs a GPU has one, of the model the schedule is simulated for.
partition::BackendKind open_replay_backend(ReplayOptions& o, const mig::GpuModel& model,
                                           runner::Machine& machine) {
    if (!o.dry_run) {
        machine = runner::open_machine(o.gpu);
        if (o.backend.empty())
            o.backend = machine.gpu ? "green" : "cpu";
    } else if (o.backend.empty()) {
        o.backend = "green";
    }
    const partition::BackendKind backend = partition::parse_backend(o.backend);
    runner::check_replay_backend(backend, o.backend);
    const partition::BackendTraits& bt = partition::traits(backend);
    if (!o.dry_run && bt.needs_gpu && !machine.gpu)
        throw unavailable_error("backend " + o.backend + " needs a GPU: " + machine.gpu_problem);
    if (!o.dry_run && machine.gpu && bt.takes_layout)
        runner::require_planned_model(machine, o.gpu, model, "stream replay");
    return backend;
}

// Writes replay.json into the run directory: everything measured is kept, whatever is printed.
// False (and a line on stderr) when it could not be written.
bool keep_replay_json(const std::string& run_dir, const Json& doc) {
    try {
        write_file(run_dir + "/replay.json", report::utf8_dump(doc, 2) + '\n', "replay.json");
        return true;
    } catch (const Error& e) {
        std::cerr << "migscope stream replay: " << user_text::escaped(e.what()) << '\n';
        return false;
    }
}

int replay_command(ReplayOptions o) {
    const stream::Trace trace = stream::read_trace_file(o.trace);
    const stream::StreamInput input = stream::stream_input(trace);
    const std::vector<int64_t> steps = stream::replay_job_steps(trace, o.trace);
    const mig::GpuModel& model = mig::builtin_model(o.stream.gpu_model);
    runner::Machine machine;
    const partition::BackendKind backend = open_replay_backend(o, model, machine);

    // Green partitions start jobs late when several start together, as `plan` predicts them.
    const StreamModel stream_model =
        load_stream_model(o.stream, model, o.trace, input, plan::partition_kind(o.backend));
    // Before the progress line: a bad --objective is refused before anything is simulated.
    const stream::PolicySettings settings = policy_settings(o.stream, model);
    if (!o.stream.layout.empty() && o.policy != "fixed")
        throw input_error("--layout is the policy fixed's layout: give --policy fixed");
    std::cerr << "migscope stream replay: simulating " << o.policy << " ...\n";
    stream::PolicyComparison compared;
    try {
        compared = stream::compare_policies(
            stream_model.problem, input.jobs, {o.policy}, simulation_options(o.stream, kReplayGpus),
            settings, o.stream.min_gain, stream_model.error ? &*stream_model.error : nullptr);
    } catch (const Error& e) {
        throw with_flag_names(e);
    }
    const stream::StreamResult& schedule = compared.policies.front().second.point;
    const stream::ReplayPlan plan = stream::replay_plan(schedule, input.jobs, steps);
    // The replay runs this one schedule: its interval is the schedule's at the error's ends, not
    // the policy's deciding again under them.
    const stream::StreamEstimate estimate =
        stream::replay_estimate(stream_model.problem, input.jobs, schedule, plan, steps,
                                simulation_options(o.stream, kReplayGpus),
                                stream_model.error ? &*stream_model.error : nullptr,
                                compared.policies.front().second.tardiness_weight_w);

    runner::ReplayRequest request;
    request.backend = backend;
    request.plan = plan;
    for (const stream::TraceJob& t : trace.jobs)
        request.jobs.push_back(t.job);
    request.stream = input.jobs;
    request.run_dir = o.run_dir.empty()
                          ? "migscope-runs/" + runner::local_time_stamp() + "-replay-" + o.backend
                          : o.run_dir;
    request.label = o.label.empty() ? "stream replay " + o.policy : o.label;

    runner::ReplayResult result;
    std::optional<runner::RunHooks> hooks;
    if (!o.dry_run) {
        std::optional<store::Store> db;
        if (!o.db.empty())
            db.emplace(store::Store::open(o.db));
        hooks = command_run_hooks("stream replay");
        result =
            runner::replay_schedule(machine, o.measurement, request, db ? &*db : nullptr, *hooks);
    }

    runner::ReplayReport report;
    report.trace = &trace;
    report.input = &input;
    report.steps = &steps;
    report.estimate = &estimate;
    report.plan = &plan;
    report.result = &result;
    report.setup =
        simulation_setup(o.stream, o.trace, trace.jobs.size(), kReplayGpus, model, stream_model);
    report.policy = o.policy;
    report.backend = o.backend;
    report.run_dir = request.run_dir;
    report.dry_run = o.dry_run;
    const bool kept = o.dry_run || keep_replay_json(request.run_dir, runner::replay_json(report));
    Output output(o.output);
    runner::replay_printers().print(o.format, report, output.stream());
    if (o.dry_run)
        return kExitOk;
    if (result.interrupted || *hooks->interrupt)
        return kExitInterrupted;
    return result.all_ok() && kept ? kExitOk : kExitFailure;
}

}  // namespace

void add_stream_replay_command(CLI::App& group, Action& action) {
    auto o = std::make_shared<ReplayOptions>();
    runner::Measurement& m = o->measurement;
    m.marginal_probe_s = 0;  // jobs that queue or start late get no marginal probe anyway
    CLI::App* cmd = group.add_subcommand(
        "replay",
        "Simulate a trace under one policy as `stream simulate` does, then run that policy's "
        "schedule for real: a fixed-work run per layout, each job on the simulator's "
        "partition, in its order, never before its arrival; print each job's measured start, "
        "end, completion and energy against the simulator's, and the totals with 'inside the "
        "interval' (the schedule's interval, at the ends of the model's error; "
        "docs/streams.md)");
    path_option(cmd->add_option("trace", o->trace, "The trace (JSON, `migscope stream trace`)"))
        ->required();
    cmd->add_option("--policy", o->policy,
                    "The policy whose schedule is replayed (never, static, periodic, online; "
                    "fixed: your --layout)")
        ->capture_default_str();
    cmd->add_option("--backend", o->backend,
                    "green | mps | cpu (default: green with a GPU, cpu without; on cpu each "
                    "layout's partitions are equal shares of the CPU cores)");
    cmd->add_option("--gpu", o->gpu, "GPU index (NVML)")->capture_default_str();
    add_stream_model_options(*cmd, o->stream);
    cmd->add_option("--start-delay", o->stream.start_delay,
                    "--backend green: the start delay of jobs starting together (a file, or none; "
                    "default: the shipped data/start-delay-MODEL.json), as `plan --backend "
                    "green` predicts them");
    add_stream_policy_options(*cmd, o->stream, StreamCommand::kReplay);
    cmd->add_option("--warmup-steps", m.warmup_steps, "Steps each job runs before it counts")
        ->capture_default_str();
    cmd->add_flag_callback(
        "--no-cuda-graph", [o] { o->measurement.cuda_graph = false; },
        "Built-in workloads step eagerly: no CUDA graph");
    cmd->add_option("--job-timeout", m.job_timeout_s,
                    "A layout's run still going after this many seconds is timed out")
        ->check(positive_number())
        ->capture_default_str();
    cmd->add_option("--warmup-timeout", m.warmup_timeout_s,
                    "Start a layout's work anyway after this many seconds of warm-up")
        ->check(positive_number())
        ->capture_default_str();
    cmd->add_option("--hz", m.hz, "Power sampling rate (10 to 100)")
        ->check(CLI::Range(10.0, 100.0))
        ->capture_default_str();
    cmd->add_option("--idle-probe", m.idle_probe_s,
                    "Seconds of idle power sampled before and after each layout's run (0: none; "
                    "then the time between runs has no measured idle power)")
        ->check(CLI::Range(0.0, 60.0))
        ->capture_default_str();
    cmd->add_flag("--force", m.force, "Run jobs whose known peak memory exceeds their partition's");
    path_option(cmd->add_option("--run-dir", o->run_dir,
                                "Where each layout's run goes, as epoch-K (default "
                                "migscope-runs/DATE-replay-BACKEND)"));
    path_option(cmd->add_option("--db", o->db,
                                "Also store each layout's run in this SQLite results store"));
    cmd->add_option("--label", o->label,
                    "Label kept with the stored runs (default: 'stream replay POLICY')");
    path_option(cmd->add_option("--worker", m.worker,
                                "migscope-worker binary (default: found beside migscope)"));
    cmd->add_flag("--dry-run", o->dry_run,
                  "Simulate and print the schedule as it would run (layouts, stretches, steps); "
                  "run nothing");
    format_option(cmd, o->format, runner::replay_printers().names())->capture_default_str();
    path_option(
        cmd->add_option("-o,--output", o->output, "Write the output here instead of stdout"));
    cmd->callback([o, &action] { action = [o] { return replay_command(*o); }; });
}

}  // namespace migscope::cli
