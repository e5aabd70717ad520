// The stream policies, each a small named unit a newcomer can read and add to: when to partition
// the GPUs, how, and when to change it. Jobs are placed by the simulator (simulator.h).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "plan/model_error.h"
#include "stream/simulator.h"

namespace migscope::stream {

// Never partition: every GPU whole, always.
class NeverPartition : public Policy {
  public:
    std::string name() const override { return "never-partition"; }
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, std::nullopt}; }
    bool decides_on_arrival() const override { return false; }
};

// One layout on every GPU, never changed: the best in hindsight ("static") or the user's own
// ("fixed"), named by `kind`.
class StaticLayout : public Policy {
  public:
    explicit StaticLayout(GpuLayout layout, std::string kind = "static")
        : layout_(std::move(layout)), kind_(std::move(kind)) {}
    std::string name() const override;
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, layout_}; }
    bool decides_on_arrival() const override { return false; }

  private:
    GpuLayout layout_;
    std::string kind_;
};

// What one second of a job's lateness costs in the combined objective, as a power: 700 W, an
// H200 at its power cap, so a job an hour late weighs as much as 2520 kJ (docs/streams.md).
inline constexpr double kDefaultTardinessWeightW = 700;

// What a policy's result is judged by: energy (J), mean completion time (s), or energy and
// tardiness combined (J): energy_j + tardiness_weight_w x tardiness_s, the late seconds summed
// over jobs priced as a power drawn while they are late.
struct StreamObjective {
    enum class Kind { kEnergy, kMeanCompletion, kEnergyTardiness };
    Kind kind = Kind::kEnergy;
    double tardiness_weight_w = kDefaultTardinessWeightW;  // kEnergyTardiness only
};
// One stream objective, all it means in one place: its name, its score (lower is better) and
// the planner objectives whose widest gain band is the least gain a layout change must predict
// (policy_registry.h). A new objective is one entry of stream_objectives().
struct StreamObjectiveDefinition {
    StreamObjective::Kind kind;
    std::string name;  // as --objective takes it
    double (*score)(const StreamResult& result, double tardiness_weight_w);
    std::vector<plan::Objective> gain_bands;
    bool weighs_tardiness;  // whether --tardiness-weight-w enters the score
};
const std::vector<StreamObjectiveDefinition>& stream_objectives();
const StreamObjectiveDefinition& definition(StreamObjective::Kind kind);
// A name of stream_objectives() (with the weight given); an input error lists the names for
// another, or names `--tardiness-weight-w` for a weight that is negative or not finite.
StreamObjective parse_stream_objective(const std::string& text,
                                       double tardiness_weight_w = kDefaultTardinessWeightW);
const std::vector<std::string>& stream_objective_names();
// energy_j + tardiness_weight_w x tardiness_s, in J.
double energy_tardiness_j(const StreamResult& result, double tardiness_weight_w);
double score(const StreamResult& result, const StreamObjective& objective);  // lower is better

// Whether every job of the stream has a partition of `layout` it can run on.
bool holds_every_job(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                     const GpuLayout& layout);

// The static layout (or none) that simulates best for this stream, in hindsight: every layout of
// the problem that holds every job is simulated on every GPU, and the whole GPU too.
struct StaticChoice {
    GpuLayout layout;
    StreamResult result;
    size_t tried = 0;
};
StaticChoice best_static_layout(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                                const SimulationOptions& options, const StreamObjective& objective);

// Every `period_s`, every GPU takes the static layout that would have served the jobs of the last
// `window_s` best (those that arrived then, replayed from 0), as an operator who repartitions
// twice a day to what the last half-day's jobs wanted. It starts whole; it decides at the first
// arrival after each period ends (it sees no clock between arrivals).
class PeriodicRepartition : public Policy {
  public:
    PeriodicRepartition(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                        SimulationOptions options, StreamObjective objective, double period_s,
                        double window_s);
    std::string name() const override;
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, std::nullopt}; }
    std::vector<LayoutChange> on_arrival(const StreamView& view) override;

  private:
    const plan::Problem& problem_;
    const std::vector<StreamJob>& jobs_;
    SimulationOptions options_;
    StreamObjective objective_;
    double period_s_, window_s_;
    double next_decision_s_;
};

// The online policy's least gain for a change, a fraction of the current layout's figure, by the
// partitions of the layouts it changes between (the more of the two): plan::gain_bucket's sizes.
struct MinGain {
    std::array<double, plan::kGainBuckets> by_bucket{};
    static MinGain all(double fraction);  // the same for every size (--min-gain)
    double for_partitions(size_t partitions) const {
        return by_bucket[plan::gain_bucket(partitions)];
    }
    bool uniform() const;
    // "8.0 %", or per size: "3.8 % (2 partitions), 7.2 % (3-4), 13.2 % (5+)"
    std::string text() const;
};

// migscope's online policy: at each arrival, for each GPU, the jobs waiting there (with the work
// they have left and their deadlines; the arriving job too, on the GPU with the fewest jobs) are
// simulated to their end on its current layout and, after a layout change with its cost (the GPU
// blocked, every job starting again), on every layout that holds them and on the whole GPU; the GPU
// changes only when the best alternative's predicted gain exceeds `min_gain` for the two layouts'
// partitions (a fraction of the current layout's figure) with the change's cost included. It is
// myopic: it sees the jobs that have arrived, not those to come.
class OnlineRepartition : public Policy {
  public:
    OnlineRepartition(const plan::Problem& problem, const std::vector<StreamJob>& jobs,
                      SimulationOptions options, StreamObjective objective, MinGain min_gain);
    std::string name() const override { return "online"; }
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, std::nullopt}; }
    std::vector<LayoutChange> on_arrival(const StreamView& view) override;

  private:
    const plan::Problem& problem_;
    const std::vector<StreamJob>& jobs_;
    SimulationOptions options_;
    StreamObjective objective_;
    MinGain min_gain_;
    std::vector<GpuLayout> candidates_;
};

}  // namespace migscope::stream
