// Splitting the board energy of a window among concurrent jobs or live consumers; the parts sum to
// the total. One function for `migscope run`, `plan`'s predictions and the live exporter.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace migscope::telemetry {

// Who pays the static energy (idle power × window, at most the total).
enum class StaticShare {
    // `run` and `plan`: the jobs, by partition size × partition share; they pay all of it.
    kByPartitionSize,
    // Live on MIG: each consumer its partition size over `capacity` (compute slices of 7); the
    // part of the capacity no consumer holds (unused slices) is unowned (the exporter's `idle`).
    kOfCapacity,
    // Live on a time-sliced or MPS GPU: no process holds a partition, all of it is unowned.
    kUnowned,
};

// Where the dynamic energy goes when no job or consumer was measured busy.
enum class WithoutActivity {
    kByPartitionSize,  // `run`, `plan`: a window in which no job stepped, by partition size
    kUnattributed,     // live: energy without a measured user is charged to no one
};

struct AttributionInput {
    double energy_j = 0;                 // board energy over the window (counter delta)
    double duration_s = 0;               // window length
    std::optional<double> idle_power_w;  // the board's static power (IdleBaseline::static_power)
    std::vector<double> partition_sms;   // each job's partition size (SMs, or cores on CPU)
    // Seconds each job spent in training steps in the window; live: its measured activity ratio
    // × the interval (0 when it had no sample).
    std::vector<double> busy_s;
    // Each job's share of its partition's static power: 1, or where jobs queue on one partition
    // its busy seconds over theirs (empty: all 1).
    std::vector<double> partition_share;
    // Per job: the dynamic power (board power above idle) of the mix without that job, from a
    // probe of the mix without it (for two jobs: the other alone) or estimated
    // (without_from_alone); empty: unknown, the dynamic part is split by activity. The live
    // exporter cannot probe (a probe pauses jobs) and leaves it empty.
    std::vector<double> without_dynamic_w;
    std::string idle_source = "measured before the run";  // named in the method
    std::string without_source = "probe";                 // named in the method
    StaticShare static_share = StaticShare::kByPartitionSize;
    double capacity = 0;  // the board's partition capacity (kOfCapacity only), > 0
    WithoutActivity without_activity = WithoutActivity::kByPartitionSize;
};

struct Attribution {
    std::vector<double> energy_j;  // per job; with the two below sums to AttributionInput::energy_j
    double unowned_j = 0;          // static energy of capacity no job holds (kOfCapacity, kUnowned)
    double unattributed_j = 0;     // dynamic energy with no measured activity (kUnattributed)
    double idle_energy_j = 0;      // the static part: idle power × window, at most the total
    std::optional<double> rest_j;  // dynamic energy minus the jobs' marginal energies
    std::string method;            // one sentence, printed with every result
};

// Idle energy (idle power × window, at most the total) is split by `static_share`: by partition
// size (× the job's partition share), of a capacity, or to no one. The rest, the dynamic energy,
// follows what each job adds: its marginal power (the mix's dynamic power minus the mix's without
// it, at least 0) × its busy seconds, plus a share of what is left (the dynamic energy minus the
// sum of those: positive where the jobs together draw more than their margins, as under a power
// cap) in proportion to its busy seconds; a share that would go below zero is zero and the others
// are scaled to keep the sum. For two jobs this is the Shapley value of the mix. Without marginal
// powers the dynamic energy is split by activity = partition size × busy seconds. Without an idle
// power all energy is dynamic; with no activity at all, `without_activity` decides. Throws an
// input error naming the field for a negative or non-finite energy, duration, idle power,
// partition size or capacity, and for vectors of different lengths.
Attribution attribute_energy(const AttributionInput& input);

}  // namespace migscope::telemetry
