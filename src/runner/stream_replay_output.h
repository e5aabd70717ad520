// A stream replay's output: its JSON (replay.json, --format json) and its tables, from the
// simulated schedule and what the replay measured (an empty result for a dry run).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/printers.h"
#include "runner/stream_replay.h"
#include "stream/estimate.h"
#include "stream/replay_plan.h"
#include "stream/simulation_output.h"
#include "stream/stream_input.h"
#include "stream/trace.h"

namespace migscope::runner {

// What the output shows; the pointers are the caller's and outlive the calls below.
struct ReplayReport {
    const stream::Trace* trace = nullptr;
    const stream::StreamInput* input = nullptr;
    const std::vector<int64_t>* steps = nullptr;       // each trace job's work
    const stream::StreamEstimate* estimate = nullptr;  // the policy's schedule and intervals
    const stream::ReplayPlan* plan = nullptr;
    const ReplayResult* result = nullptr;
    stream::SimulationSetup
        setup;  // what the schedule was simulated on, as `stream simulate` has it
    std::string policy, backend, run_dir;
    bool dry_run = false;
};

nlohmann::ordered_json replay_json(const ReplayReport& report);
// The layouts, each job predicted against measured, and the totals with their intervals.
void print_replay(const ReplayReport& report, std::ostream& out);
// Its formats: table (print_replay) and json (replay_json).
const Printers<ReplayReport>& replay_printers();

}  // namespace migscope::runner
