// The options `migscope stream simulate` and `stream replay` share (the planner's model a stream is
// simulated on, the policies' settings): added to either command, and turned into the stream
// library's settings and model.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "mig/catalog.h"
#include "plan/model.h"
#include "plan/model_error.h"
#include "stream/policy_registry.h"
#include "stream/simulation_output.h"
#include "stream/simulator.h"
#include "stream/stream_input.h"

namespace migscope::cli {

struct StreamOptions {
    std::string gpu_model = "h200";
    std::string profiles;     // empty: the shipped data/profiles-MODEL.json
    std::string model_error;  // empty: the shipped data/model-error-MODEL.json; "none": none
    std::string start_delay;  // green partitions: empty, the shipped file; "none": none
    std::string objective = "energy";
    double tardiness_weight_w = stream::kDefaultTardinessWeightW;
    double period_h = 12, window_h = 12;
    std::optional<double> min_gain;  // none: from the model's error
    double orchestrator_s = stream::ReconfigurationCost{}.orchestrator_s;
    double instance_s = stream::ReconfigurationCost{}.per_instance_s;
    std::string layout;  // the policy fixed's
};

// Whose --help words the options get: simulate's explain each one; replay's are shorter, and say
// how a replay charges a layout change.
enum class StreamCommand { kSimulate, kReplay };

// --gpu-model, --profiles and --model-error.
void add_stream_model_options(CLI::App& cmd, StreamOptions& o);
// --objective, --tardiness-weight-w, --period-h, --window-h, --min-gain, --layout,
// --orchestrator-s and --instance-s. Apart from the model options: each command lists options of
// its own between.
void add_stream_policy_options(CLI::App& cmd, StreamOptions& o, StreamCommand command);

// The simulator's options for `gpus` GPUs sharing the stream, without figures over time.
stream::SimulationOptions simulation_options(const StreamOptions& o, size_t gpus);
// The policies' settings; an input error for an unknown objective, a bad weight or a --layout
// that is no layout of `model` (the whole GPU included: that is the policy never). The online
// policy's least gain is compare_policies' own argument (StreamOptions::min_gain).
stream::PolicySettings policy_settings(const StreamOptions& o, const mig::GpuModel& model);

// The planner's model of a trace's jobs on `model` and its known error, with where each came from.
struct StreamModel {
    plan::Problem problem;
    std::optional<plan::ModelError> error;  // none: no intervals
    std::string profiles_origin, error_origin;
    std::string start_delay_origin;  // "" for none
};
// Input errors for profiles or residuals that cannot be read or are another model's, and for a
// job the profiles do not know (`trace_path`, for the profiles of the user's commands). On
// `kind` green the jobs that start together wait (--start-delay), as `plan --backend green`
// predicts them.
StreamModel load_stream_model(const StreamOptions& o, const mig::GpuModel& model,
                              const std::string& trace_path, const stream::StreamInput& input,
                              plan::PartitionKind kind = plan::PartitionKind::kMig);

// What the comparison runs on, as `stream simulate` and `stream replay` print it: the trace of
// `jobs` jobs at `trace_path` on `gpus` GPUs of `model`, with `stream_model`'s origins.
stream::SimulationSetup simulation_setup(const StreamOptions& o, const std::string& trace_path,
                                         size_t jobs, size_t gpus, const mig::GpuModel& model,
                                         const StreamModel& stream_model);

}  // namespace migscope::cli
