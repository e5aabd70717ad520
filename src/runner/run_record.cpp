// Converts runner results into the plain records of the results store.
#include "runner/run_record.h"

#include <ctime>

namespace migscope::runner {
namespace {

template <typename T>
std::optional<int64_t> maybe_int64(const std::optional<T>& v) {
    return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt;
}

template <typename T>
std::optional<double> maybe_double(const std::optional<T>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

store::JobRecord to_job_record(const JobResult& r) {
    store::JobRecord j;
    static_cast<store::JobMeasures&>(j) = r;
    j.name = r.spec.name;
    if (!r.spec.external())
        j.workload = r.spec.workload;
    j.command = r.spec.command;
    j.mode = r.spec.mode;
    j.batch = r.spec.batch;
    j.partition = r.partition.label;
    j.sms_requested = maybe_int64(r.partition.sms);
    j.sms = maybe_int64(r.sms);
    j.memory_limit_gib = r.partition.memory_gib;
    j.status = to_string(r.status);
    j.message = r.message;
    return j;
}

}  // namespace

std::optional<std::string> idle_state_of(const RunResult& run) {
    const auto state = run.idle.static_power();
    if (!state || !run.idle_power_w)
        return std::nullopt;
    return telemetry::state_key(state->first);
}

store::RunRecord to_run_record(const RunResult& run, const RecordContext& context) {
    store::RunRecord r;
    r.started_at = context.started_at;
    r.role = context.role;
    r.parent_id = context.parent_id;
    r.label = context.label;
    r.experiment = context.experiment;
    r.cell_key = context.cell_key;
    r.provenance = context.provenance;
    if (run.torch_version)
        r.provenance.torch_version = run.torch_version;  // only the workers know it
    r.backend = partition::to_string(run.backend);
    r.mode = run.mode == RunMode::kDuration ? "duration" : "work";
    if (!run.layout.empty())
        r.layout = run.layout;
    r.window_s = run.window_s;
    const telemetry::EnergySummary& e = run.energy;
    r.counter_energy_j = e.counter_energy_j;
    r.trace_energy_j = e.trace_energy_j;
    r.disagreement_pct = e.disagreement_pct;
    r.average_power_w = e.average_power_w;
    r.peak_power_w = e.peak_power_w;
    r.power_samples = static_cast<int64_t>(e.power_samples);
    r.max_gap_s = e.max_gap_s;
    r.idle_power_w = run.idle_power_w;
    r.idle_state = idle_state_of(run);
    if (run.idle.deep)
        r.deep_idle_power_w = run.idle.deep->mean_w;
    r.sm_clock_mhz = run.sm_clock_mhz;
    r.attribution_method = run.attribution_method;
    r.aggregate_normalised_throughput = run.aggregate_normalised_throughput;
    r.interrupted = run.interrupted;
    r.warnings = run.warnings;
    r.warnings.insert(r.warnings.end(), e.warnings.begin(), e.warnings.end());
    for (const JobResult& job : run.jobs)
        r.jobs.push_back(to_job_record(job));
    for (const telemetry::Sample& s : run.trace) {
        r.trace.push_back({seconds_between(run.trace_origin, s.time), s.power_instant_w,
                           s.power_average_w, s.energy_j, maybe_double(s.sm_clock_mhz),
                           s.memory_used_mib, maybe_double(s.gpu_utilization_pct),
                           maybe_double(s.memory_utilization_pct)});
    }
    return r;
}

std::string utc_now_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace migscope::runner
