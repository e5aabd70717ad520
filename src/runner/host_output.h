// A host run (runner/host_run.h) as JSON and as text: the host's totals, each GPU's energy and
// status, each GPU's job table, and the baseline on the same GPUs.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/printers.h"
#include "runner/host_run.h"

namespace migscope::runner {

// One phase: its totals, then each GPU's run (run_json) with its index, UUID and failure.
nlohmann::json host_phase_json(const HostPhase& phase);
// The run, its baseline and the comparison of their totals: the host's result.json.
nlohmann::json host_json(const HostOutcome& outcome);

// Each GPU's job table, a table of the GPUs (backend, layout, window, energy, status) with the
// host total, the same for the baseline, and the comparison; `title` heads it.
void print_host(const HostOutcome& outcome, const std::string& title, std::ostream& out);

// A host run's outcome as `migscope run --plan` prints it.
struct HostOutput {
    const HostOutcome& outcome;
    std::string title;  // heads the text: "migscope run --plan plan.json"
};
// table (print_host), json (the host's result.json).
const Printers<HostOutput>& host_printers();

}  // namespace migscope::runner
