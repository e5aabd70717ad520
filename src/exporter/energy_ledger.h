// The exporter's energy accounting, pure: one interval's consumers handed to the one attribution
// function (telemetry/attribution.h, its live variant), and monotonic counters per consumer whose
// sum is the board energy since the exporter started.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace migscope::exporter {

using Labels = std::vector<std::pair<std::string, std::string>>;  // name, value; in order

enum class ConsumerKind { kMigInstance, kProcess, kIdle, kUnattributed, kRetired };
// "mig_instance", "process", "idle", "unattributed", "retired"
const char* consumer_label(ConsumerKind kind);

// Who energy is charged to. `key` identifies it within one GPU (the same key in two intervals is
// the same counter); `labels` are its own labels (GPU_I_PROFILE and GPU_I_ID, or pid, command,
// pod, container), fixed when the consumer is first seen.
struct Consumer {
    ConsumerKind kind = ConsumerKind::kIdle;
    std::string key;
    Labels labels;
};
Consumer idle_consumer();
Consumer unattributed_consumer();
Consumer retired_consumer();  // the consumers that ended long ago, folded into one

// A consumer seen in one interval.
struct ConsumerActivity {
    Consumer consumer;
    // Compute slices of a MIG instance (its share of the static power and the scale of its
    // activity); 0 for a process, whose activity is already a share of the whole GPU.
    double compute_slices = 0;
    // SM activity over the interval, 0-1: of the instance's SMs (GPM) or of the GPU's (a
    // process's SM utilization); none when it could not be measured.
    std::optional<double> activity_ratio;
    // Its dynamic power at full activity (W), learned live (telemetry/power_regression.h); when
    // every consumer has one, the split charges each its own watts.
    std::optional<double> full_activity_power_w;
    // Its dynamic power (board power above idle) alone on its share of the GPU: measured in the
    // intervals it ran alone (measured_alone.h), else from the profile of the job its activity
    // probe names (profile_power.h); when every active consumer of a shared GPU has one, the
    // split is `run`'s marginal one with these as the mix without it.
    std::optional<double> alone_dynamic_w;
    bool alone_measured = false;  // alone_dynamic_w was measured, not profiled
    // A process with the activity probe: the job its report names (empty: none) and its SM share
    // under MPS (none: every SM).
    std::string job;
    std::optional<double> sm_share;
    std::string probe_records;  // what its probe records (activity::probe_records), "": not said
};

enum class Sharing {
    kMig,     // MIG instances: static power by compute slices, unused slices to `idle`
    kShared,  // time-sliced or MPS: all static power to `idle`
};

struct IntervalInput {
    double energy_j = 0;                 // board energy counter delta over the interval (>= 0)
    double duration_s = 0;               // interval length
    std::optional<double> idle_power_w;  // static power; none: unknown, all energy is dynamic
    Sharing sharing = Sharing::kShared;
    double total_compute_slices = 7;  // the GPU's (kMig only)
    // kShared only: an MPS server runs, so the processes run at once on their own SMs (the mix
    // without one draws the others' powers summed); else they take turns (time-slicing: the mix
    // without one draws the mean of the others').
    bool mps = false;
    std::vector<ConsumerActivity> consumers;
};

// Whether it was measured doing work in the interval (activity above 0).
bool has_activity(const ConsumerActivity& c);

// What the dynamic part of an interval followed.
enum class DynamicSplit {
    kActivity,       // partition size × activity
    kLearnedPower,   // each consumer's learned full-activity power (--learned-power)
    kProfilePower,   // each process's power alone, from its job's profile (--profiles) for
                     // one at least
    kMeasuredPower,  // each process's power alone, every one measured in intervals it ran alone
};
// "activity", "learned_power", "profile_power", "measured_power": the `dynamic_split` label.
const char* dynamic_split_label(DynamicSplit split);

struct IntervalSplit {
    std::vector<std::pair<Consumer, double>> energy_j;  // sums to IntervalInput::energy_j
    double static_j = 0;                                // idle power × duration, at most energy_j
    DynamicSplit dynamic_split = DynamicSplit::kActivity;
};

// The interval as telemetry::attribute_energy's live variant splits it: static energy =
// min(energy, idle power × duration); under kMig each instance gets static × its slices / the
// GPU's slices (StaticShare::kOfCapacity) and `idle` the unused slices' part; under kShared
// `idle` gets it all (StaticShare::kUnowned). The dynamic rest is split by partition size ×
// activity (slices, or 1 for a process: its activity is already a share of the whole GPU), as
// `run` splits it without marginal powers; where every consumer has a full-activity power, by
// those powers as `run` splits by marginal powers (each consumer its power × size × activity ×
// duration, the rest by activity; kLearnedPower). Where every consumer with activity has a power
// alone (kShared only, with an idle power), it is `run`'s marginal split (kMeasuredPower where
// every one was measured, else kProfilePower): each such
// consumer is busy the whole interval, as `run` counts a job stepping, and the mix without it draws
// the others' powers alone (summed under MPS, their mean when time-sliced); consumers without
// activity get nothing. With no measured activity at all it goes to
// `unattributed` (WithoutActivity::kUnattributed). Throws an input error naming the field for a
// negative or non-finite energy, duration, idle power, slice count or activity.
IntervalSplit split_interval(const IntervalInput& input);

// Monotonic energy counters per consumer of one GPU. A consumer that leaves keeps its counter until
// it is retired, then its energy moves into the one `retired` counter, so the sum over consumers
// always equals the energy added and memory stays bounded however many consumers come and go.
class EnergyLedger {
  public:
    struct Entry {
        Consumer consumer;
        double energy_j = 0;
        double last_seen_s = 0;  // the time of the last interval it was in
    };
    void add(const IntervalSplit& split, double now_s);
    // Folds every MIG instance and process not seen since `now_s - retain_s` into `retired`;
    // returns how many.
    size_t retire_unseen(double now_s, double retain_s);
    std::vector<Entry> entries() const;  // in the order consumers were first seen
    double total_j() const { return total_j_; }

  private:
    std::vector<Entry> entries_;
    std::map<std::string, size_t> index_;  // key -> entries_
    double total_j_ = 0;
};

}  // namespace migscope::exporter
