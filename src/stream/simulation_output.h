// `migscope stream simulate`'s output: the policies compared on a stream, as its JSON document
// (--format json) and as its table (--format table), each figure with its interval.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/printers.h"
#include "stream/compare.h"

namespace migscope::stream {

// What the comparison was run on, as the user gave it, which every output of `stream simulate`
// shows (the page too, stream_page.h): the texts are kept raw, and each output escapes them its
// own way.
struct SimulationSetup {
    std::string trace_path;  // the trace file, as given
    size_t jobs = 0;         // the trace's
    size_t gpus = 1;
    std::string gpu_model;        // the catalog's key: "h200"
    std::string profiles_origin;  // where the profiles came from
    std::string error_origin;     // where the model's residuals came from ("" for none)
    // Jobs starting together on green partitions wait this per other one (plan/start_delay.h),
    // from this file; 0 and "": none (MIG instances, whose simulations these are by default).
    double start_delay_per_partner_s = 0;
    std::string start_delay_origin;
    std::string objective_name;   // as given: "energy-tardiness"
    // Its tardiness_weight_w prices the E+w*T figures whatever the objective's kind.
    StreamObjective objective;
    ReconfigurationCost reconfiguration;
};

// The setup, the online policy's least gain, and per policy its figures with their intervals
// (null when unknown), its layouts and its figures over time (SimulationOptions::series_bin_s).
nlohmann::ordered_json simulation_json(const SimulationSetup& setup,
                                       const PolicyComparison& compared);

// A line of the setup, a row per policy (energy, completion times, tardiness, late jobs, busy
// fraction, layout changes and energy + w x tardiness, with their intervals) and what the
// intervals and columns mean.
void write_simulation_table(const SimulationSetup& setup, const PolicyComparison& compared,
                            std::ostream& out);

// The comparison with what it was run on.
struct SimulationOutput {
    const SimulationSetup& setup;
    const PolicyComparison& compared;
};
// table (write_simulation_table), json (simulation_json).
const Printers<SimulationOutput>& simulation_printers();

}  // namespace migscope::stream
