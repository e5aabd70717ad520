// The stream policies, each a small named unit a newcomer can read and add to: when to partition
// the GPUs, how, and when to change it. Jobs are placed by the simulator (simulator.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stream/simulator.h"

namespace migscope::stream {

// Never partition: every GPU whole, always.
class NeverPartition : public Policy {
  public:
    std::string name() const override { return "never-partition"; }
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, std::nullopt}; }
};

// One layout on every GPU, never changed.
class StaticLayout : public Policy {
  public:
    explicit StaticLayout(GpuLayout layout) : layout_(std::move(layout)) {}
    std::string name() const override;
    std::vector<GpuLayout> initial_layouts(size_t gpus) override { return {gpus, layout_}; }

  private:
    GpuLayout layout_;
};

// What a policy's result is judged by.
enum class StreamObjective { kEnergy, kMeanCompletion };
StreamObjective parse_stream_objective(const std::string& text);  // input error listing them
double score(const StreamResult& result, StreamObjective objective);  // lower is better

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
                                const SimulationOptions& options, StreamObjective objective);

}  // namespace migscope::stream
