// A finished run as a results-store record: the run's fields, jobs and trace plus what the
// caller knows (provenance, when it started, its role and parent).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runner/run.h"
#include "store/record.h"

namespace migscope::runner {

struct RecordContext {
    std::string started_at;  // UTC, ISO 8601
    store::Provenance provenance;
    store::RunRole role = store::RunRole::kRun;
    std::optional<int64_t> parent_id;  // a baseline's run
    std::string label;
    std::optional<std::string> experiment;  // a sweep's runs: the spec's name and the cell's key
    std::optional<std::string> cell_key;
};

// The energy summary's warnings join the run's; trace times count from the run's trace origin.
store::RunRecord to_run_record(const RunResult& run, const RecordContext& context);

// The state its idle_power_w was measured in, as the store names it (telemetry::state_key: the
// static power's state); none without an idle power.
std::optional<std::string> idle_state_of(const RunResult& run);

// Now, as UTC ISO 8601 to the second ("2026-11-30T03:34:15Z").
std::string utc_now_iso8601();

}  // namespace migscope::runner
