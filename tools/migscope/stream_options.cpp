// The options `stream simulate` and `stream replay` share, on the CLI and as the library's
// settings (stream_options.h).
#include "stream_options.h"

#include "commands.h"
#include "core/error.h"
#include "mig/layout.h"
#include "runner/plan_jobs.h"
#include "runner/profile_source.h"
#include "stream/policies.h"

namespace migscope::cli {
namespace {

const char* help(StreamCommand command, const char* simulate, const char* replay) {
    return command == StreamCommand::kSimulate ? simulate : replay;
}

}  // namespace

void add_stream_model_options(CLI::App& cmd, StreamOptions& o) {
    cmd.add_option("--gpu-model", o.gpu_model, "GPU model (" + mig::known_model_keys() + ")")
        ->capture_default_str();
    path_option(cmd.add_option("--profiles", o.profiles,
                               "Profile file (JSON) or results store (SQLite) (default: the "
                               "shipped data/profiles-MODEL.json)"));
    cmd.add_option("--model-error", o.model_error,
                   "The model's measured residuals, for the intervals (a file, or none; default: "
                   "the shipped data/model-error-MODEL.json)");
}

void add_stream_policy_options(CLI::App& cmd, StreamOptions& o, StreamCommand command) {
    cmd.add_option("--objective", o.objective,
                   help(command,
                        "What static, periodic and online choose by: energy (J), completion (mean "
                        "completion time) or energy-tardiness (energy + W x tardiness, J)",
                        "What static, periodic and online choose by: energy, completion or "
                        "energy-tardiness"))
        ->check(values_named(stream::stream_objective_names()))
        ->capture_default_str();
    cmd.add_option("--tardiness-weight-w", o.tardiness_weight_w,
                   help(command,
                        "energy-tardiness: what each second a job is late costs, as a power in W "
                        "(700: an H200 at its power cap, so an hour late weighs 2520 kJ); the "
                        "E+w*T column uses it for every objective",
                        "energy-tardiness: what each second a job is late costs, in W"))
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e9));
    cmd.add_option("--period-h", o.period_h, "periodic: hours between repartitionings")
        ->capture_default_str()
        ->check(positive_number());
    cmd.add_option(
           "--window-h", o.window_h,
           help(command, "periodic: the hours of past arrivals each repartitioning looks at",
                "periodic: hours of past arrivals it looks at"))
        ->capture_default_str()
        ->check(positive_number());
    cmd.add_option("--min-gain", o.min_gain,
                   help(command,
                        "online: the least predicted gain, as a fraction of the figure, worth a "
                        "layout change beyond its cost, for every size of layout (default: how "
                        "far the model's predicted gain of partitioning was off, measured: the "
                        "gain residuals' band of layouts that size)",
                        "online: the least predicted gain worth a layout change (default: from "
                        "the model's error)"))
        ->check(CLI::Range(0.0, 1.0));
    cmd.add_option("--layout", o.layout,
                   help(command,
                        "fixed: your layout on every GPU, never changed (the one you run today, "
                        "e.g. 3g.71gb+2g.35gb+2x1g.18gb), beside the policies that choose",
                        "fixed: your layout, never changed"));
    cmd.add_option("--orchestrator-s", o.orchestrator_s,
                   help(command,
                        "Seconds a layout change blocks the GPU beyond its instances (the "
                        "orchestrator: mig-manager took tens of s to ~2 min in published logs)",
                        "Seconds a layout change blocks the GPU beyond its instances; the replay "
                        "leaves this time out of its runs and charges it at the measured idle "
                        "power"))
        ->capture_default_str()
        ->check(CLI::Range(0.0, 86400.0));
    cmd.add_option("--instance-s", o.instance_s,
                   help(command, "Seconds to create or destroy one GPU instance (A100: 0.05-0.3 s)",
                        "Seconds to create or destroy one instance"))
        ->capture_default_str()
        ->check(CLI::Range(0.0, 3600.0));
}

stream::SimulationOptions simulation_options(const StreamOptions& o, size_t gpus) {
    stream::SimulationOptions options;
    options.gpus = gpus;
    options.reconfiguration.orchestrator_s = o.orchestrator_s;
    options.reconfiguration.per_instance_s = o.instance_s;
    return options;
}

stream::PolicySettings policy_settings(const StreamOptions& o, const mig::GpuModel& model) {
    stream::PolicySettings settings;
    settings.objective = stream::parse_stream_objective(o.objective, o.tardiness_weight_w);
    settings.period_s = o.period_h * 3600;
    settings.window_s = o.window_h * 3600;
    if (!o.layout.empty()) {
        mig::Layout layout;
        try {
            layout = runner::given_layout(o.layout, {}, model, 0).layout;
        } catch (const Error& e) {
            throw with_flag_names(e);
        }
        if (mig::is_whole_gpu(layout, model))
            throw input_error("--layout: " + layout.instances.front().profile +
                              " is the whole GPU: that is the policy never");
        settings.fixed_layout = layout;
    }
    return settings;
}

StreamModel load_stream_model(const StreamOptions& o, const mig::GpuModel& model,
                              const std::string& trace_path, const stream::StreamInput& input,
                              plan::PartitionKind kind) {
    StreamModel m;
    plan::ProfileSet set =
        runner::load_profiles(o.profiles, model, m.profiles_origin, {"", trace_path, "mig"});
    if (kind == plan::PartitionKind::kGreen)
        set.start_delay = runner::load_start_delay(o.start_delay, model);
    m.problem = plan::make_problem(input.requests, set, model, {}, kind);
    if (m.problem.correction.start_delay_per_partner_s > 0)
        m.start_delay_origin = set.start_delay.origin;
    m.error = runner::load_model_error(o.model_error, model, m.error_origin);
    return m;
}

stream::SimulationSetup simulation_setup(const StreamOptions& o, const std::string& trace_path,
                                         size_t jobs, size_t gpus, const mig::GpuModel& model,
                                         const StreamModel& stream_model) {
    stream::SimulationSetup setup;
    setup.trace_path = trace_path;
    setup.jobs = jobs;
    setup.gpus = gpus;
    setup.gpu_model = model.key;
    setup.profiles_origin = stream_model.profiles_origin;
    setup.error_origin = stream_model.error_origin;
    setup.start_delay_per_partner_s = stream_model.problem.correction.start_delay_per_partner_s;
    setup.start_delay_origin = stream_model.start_delay_origin;
    setup.objective_name = o.objective;
    setup.objective = stream::parse_stream_objective(o.objective, o.tardiness_weight_w);
    setup.reconfiguration = simulation_options(o, gpus).reconfiguration;
    return setup;
}

}  // namespace migscope::cli
