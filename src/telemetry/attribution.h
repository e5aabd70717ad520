// Splitting the board energy of a window among concurrent jobs; the parts sum to the total.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace migscope::telemetry {

struct AttributionInput {
    double energy_j = 0;                 // board energy over the window (counter delta)
    double duration_s = 0;               // window length
    std::optional<double> idle_power_w;  // the board's static power (IdleBaseline::static_power)
    std::vector<double> partition_sms;   // each job's partition size (SMs, or cores on CPU)
    std::vector<double> busy_s;          // seconds each job spent in training steps in the window
    // Each job's share of its partition's static power: 1, or where jobs queue on one partition
    // its busy seconds over theirs (empty: all 1).
    std::vector<double> partition_share;
    // Per job: the dynamic power (board power above idle) of the mix without that job, from a
    // probe of the mix without it (for two jobs: the other alone) or estimated
    // (without_from_alone); empty: unknown, the dynamic part is split by activity.
    std::vector<double> without_dynamic_w;
    std::string idle_source = "measured before the run";  // named in the method
    std::string without_source = "probe";                 // named in the method
};

struct Attribution {
    std::vector<double> energy_j;     // per job; sums to AttributionInput::energy_j
    double idle_energy_j = 0;         // the static part that was split by partition size
    std::optional<double> rest_j;  // dynamic energy minus the jobs' marginal energies
    std::string method;               // one sentence, printed with every result
};

// Idle energy (idle power × window, at most the total) is split by partition size (× the job's
// partition share). The rest, the dynamic energy, follows what each job adds: its marginal power
// (the mix's dynamic power minus the mix's without it, at least 0) × its busy seconds, plus a
// share of what is left (the dynamic energy minus the sum of those: positive where the jobs
// together draw more than their margins, as under a power cap) in proportion to its busy seconds;
// a share that would go below zero is zero and the others are scaled to keep the sum. For two
// jobs this is the Shapley value of the mix. Without marginal powers the dynamic energy is split
// by activity = partition size × busy seconds. Without an idle power all energy is dynamic; with
// no activity at all, everything goes by partition size.
Attribution attribute_energy(const AttributionInput& input);


}  // namespace migscope::telemetry
