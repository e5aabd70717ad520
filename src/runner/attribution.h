// Splitting the board energy of a window among concurrent jobs; the parts sum to the total.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace migscope::runner {

struct AttributionInput {
    double energy_j = 0;                 // board energy over the window (counter delta)
    double duration_s = 0;               // window length
    std::optional<double> idle_power_w;  // board power with nothing running, measured before
    std::vector<double> partition_sms;   // each job's partition size (SMs, or cores on CPU)
    std::vector<double> busy_s;          // seconds each job spent in training steps in the window
    // Each job's share of its partition's static power: 1, or where jobs queue on one partition
    // its busy seconds over theirs (empty: all 1).
    std::vector<double> partition_share;
};

struct Attribution {
    std::vector<double> energy_j;  // per job; sums to AttributionInput::energy_j
    double idle_energy_j = 0;      // the static part that was split by partition size
    std::string method;            // one sentence, printed with every result
};

// Idle energy (idle power × window, at most the total) is split by partition size (× the job's
// partition share); the rest, the dynamic energy, by activity = partition size × busy seconds.
// Without an idle power all energy is split by activity; with no activity at all, by partition
// size.
Attribution attribute_energy(const AttributionInput& input);

}  // namespace migscope::runner
