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
    // Each job's dynamic power (board power above idle) alone on its partition, from a solo
    // probe or its profile; empty: unknown, the dynamic part is split by activity.
    std::vector<double> solo_dynamic_w;
    std::string idle_source = "measured before the run";  // named in the method
    std::string solo_source = "solo probe";               // named in the method
};

struct Attribution {
    std::vector<double> energy_j;     // per job; sums to AttributionInput::energy_j
    double idle_energy_j = 0;         // the static part that was split by partition size
    std::optional<double> interaction_j;  // dynamic energy minus what the jobs drew alone
    std::string method;               // one sentence, printed with every result
};

// Idle energy (idle power × window, at most the total) is split by partition size (× the job's
// partition share). The rest, the dynamic energy, follows what each job draws: with solo dynamic
// powers, job i gets solo_i × busy_i plus a share of the interaction (the dynamic energy minus
// the sum of those, negative when the jobs together draw less than alone, as under a power cap)
// in proportion to its busy seconds; a share that would go below zero is zero and the others
// are scaled to keep the sum. For two jobs this is the Shapley value of the mix. Without solo
// powers the dynamic energy is split by activity = partition size × busy seconds. Without an
// idle power all energy is dynamic; with no activity at all, everything goes by partition size.
Attribution attribute_energy(const AttributionInput& input);

}  // namespace migscope::telemetry
