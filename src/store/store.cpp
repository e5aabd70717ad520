// The results store: one transaction per run; reads rebuild the plain records.
#include "store/store.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "store/schema.h"

namespace migscope::store {
namespace {

// Lists (warnings, a command's argv) are kept as JSON arrays of strings.
std::string list_text(const std::vector<std::string>& items) {
    return nlohmann::json(items).dump();
}

std::vector<std::string> parse_list(const std::string& text) {
    try {
        return nlohmann::json::parse(text).get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        throw runtime_error("results store: a list column is not a JSON list of strings: " + text);
    }
}

constexpr const char* kRunColumns =
    "id, started_at, role, parent_id, label, backend, mode, layout, window_s, counter_energy_j, "
    "trace_energy_j, disagreement_pct, average_power_w, peak_power_w, power_samples, max_gap_s, "
    "idle_power_w, sm_clock_mhz, attribution_method, aggregate_normalised_throughput, "
    "interrupted, warnings, migscope_version, migscope_commit, gpu_name, gpu_uuid, "
    "driver_version, cuda_driver_version, torch_version, mig_mode, experiment, cell_key";

constexpr const char* kJobColumns =
    "name, workload, command, mode, batch, partition, sms_requested, sms, memory_limit_gib, "
    "status, message, item_unit, steps, items, busy_s, items_per_s, step_time_p50_s, "
    "step_time_p95_s, mfu, peak_memory_bytes, finish_s, energy_j, energy_per_item_j, "
    "normalised_throughput, sm_clock_mhz, step_mode";

RunRecord read_run_row(const Statement& s) {
    RunRecord r;
    int c = 0;
    r.id = s.int64_at(c++);
    r.started_at = s.text_at(c++);
    r.role = parse_run_role(s.text_at(c++));
    r.parent_id = s.maybe_int64_at(c++);
    r.label = s.text_at(c++);
    r.backend = s.text_at(c++);
    r.mode = s.text_at(c++);
    r.layout = s.maybe_text_at(c++);
    r.window_s = s.double_at(c++);
    r.counter_energy_j = s.maybe_double_at(c++);
    r.trace_energy_j = s.maybe_double_at(c++);
    r.disagreement_pct = s.maybe_double_at(c++);
    r.average_power_w = s.maybe_double_at(c++);
    r.peak_power_w = s.maybe_double_at(c++);
    r.power_samples = s.int64_at(c++);
    r.max_gap_s = s.maybe_double_at(c++);
    r.idle_power_w = s.maybe_double_at(c++);
    r.sm_clock_mhz = s.maybe_double_at(c++);
    r.attribution_method = s.text_at(c++);
    r.aggregate_normalised_throughput = s.maybe_double_at(c++);
    r.interrupted = s.int64_at(c++) != 0;
    r.warnings = parse_list(s.text_at(c++));
    Provenance& p = r.provenance;
    p.migscope_version = s.text_at(c++);
    p.migscope_commit = s.text_at(c++);
    p.gpu_name = s.maybe_text_at(c++);
    p.gpu_uuid = s.maybe_text_at(c++);
    p.driver_version = s.maybe_text_at(c++);
    p.cuda_driver_version = s.maybe_text_at(c++);
    p.torch_version = s.maybe_text_at(c++);
    p.mig_mode = s.maybe_text_at(c++);
    r.experiment = s.maybe_text_at(c++);
    r.cell_key = s.maybe_text_at(c++);
    return r;
}

JobRecord read_job_row(const Statement& s) {
    JobRecord j;
    int c = 0;
    j.name = s.text_at(c++);
    j.workload = s.maybe_text_at(c++);
    j.command = parse_list(s.text_at(c++));
    j.mode = s.text_at(c++);
    j.batch = s.maybe_int64_at(c++);
    j.partition = s.text_at(c++);
    j.sms_requested = s.maybe_int64_at(c++);
    j.sms = s.maybe_int64_at(c++);
    j.memory_limit_gib = s.maybe_double_at(c++);
    j.status = s.text_at(c++);
    j.message = s.text_at(c++);
    j.item_unit = s.maybe_text_at(c++);
    j.steps = s.int64_at(c++);
    j.items = s.double_at(c++);
    j.busy_s = s.double_at(c++);
    j.items_per_s = s.maybe_double_at(c++);
    j.step_time_p50_s = s.maybe_double_at(c++);
    j.step_time_p95_s = s.maybe_double_at(c++);
    j.mfu = s.maybe_double_at(c++);
    j.peak_memory_bytes = s.maybe_int64_at(c++);
    j.finish_s = s.maybe_double_at(c++);
    j.energy_j = s.maybe_double_at(c++);
    j.energy_per_item_j = s.maybe_double_at(c++);
    j.normalised_throughput = s.maybe_double_at(c++);
    j.sm_clock_mhz = s.maybe_double_at(c++);
    j.step_mode = s.maybe_text_at(c++);
    return j;
}

void read_jobs(const Database& db, RunRecord& run) {
    Statement s(
        db, std::string("SELECT ") + kJobColumns + " FROM jobs WHERE run_id = ? ORDER BY position");
    s.bind(1, run.id);
    while (s.step())
        run.jobs.push_back(read_job_row(s));
}

void read_trace(const Database& db, RunRecord& run) {
    Statement s(db,
                "SELECT t_s, power_instant_w, power_average_w, energy_j, sm_clock_mhz, "
                "memory_used_mib FROM power_samples WHERE run_id = ? ORDER BY position");
    s.bind(1, run.id);
    while (s.step()) {
        run.trace.push_back({s.double_at(0), s.maybe_double_at(1), s.maybe_double_at(2),
                             s.maybe_double_at(3), s.maybe_double_at(4), s.maybe_double_at(5)});
    }
}

}  // namespace

Store Store::open(const std::string& path, OpenMode mode) {
    Database db = Database::open(path, mode);
    db.exec("PRAGMA foreign_keys = ON");
    prepare_schema(db, mode);
    // WAL: readers do not block the writer; a killed writer leaves the last commit intact.
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");  // a commit survives power loss too
    return Store(std::move(db));
}

int64_t Store::add_run(const RunRecord& run) {
    Transaction tx(db_);
    Statement insert_run(
        db_, std::string("INSERT INTO runs (") + kRunColumns +
                 ") VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                 "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    const Provenance& p = run.provenance;
    insert_run.add(run.started_at)
        .add(to_string(run.role))
        .add(run.parent_id)
        .add(run.label)
        .add(run.backend)
        .add(run.mode)
        .add(run.layout)
        .add(run.window_s)
        .add(run.counter_energy_j)
        .add(run.trace_energy_j)
        .add(run.disagreement_pct)
        .add(run.average_power_w)
        .add(run.peak_power_w)
        .add(run.power_samples)
        .add(run.max_gap_s)
        .add(run.idle_power_w)
        .add(run.sm_clock_mhz)
        .add(run.attribution_method)
        .add(run.aggregate_normalised_throughput)
        .add(int64_t{run.interrupted ? 1 : 0})
        .add(list_text(run.warnings))
        .add(p.migscope_version)
        .add(p.migscope_commit)
        .add(p.gpu_name)
        .add(p.gpu_uuid)
        .add(p.driver_version)
        .add(p.cuda_driver_version)
        .add(p.torch_version)
        .add(p.mig_mode)
        .add(run.experiment)
        .add(run.cell_key);
    insert_run.run();
    const int64_t id = db_.last_insert_rowid();

    Statement insert_job(db_, std::string("INSERT INTO jobs (run_id, position, ") + kJobColumns +
                                  ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                  "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < run.jobs.size(); ++i) {
        const JobRecord& j = run.jobs[i];
        insert_job.add(id)
            .add(static_cast<int64_t>(i))
            .add(j.name)
            .add(j.workload)
            .add(list_text(j.command))
            .add(j.mode)
            .add(j.batch)
            .add(j.partition)
            .add(j.sms_requested)
            .add(j.sms)
            .add(j.memory_limit_gib)
            .add(j.status)
            .add(j.message)
            .add(j.item_unit)
            .add(j.steps)
            .add(j.items)
            .add(j.busy_s)
            .add(j.items_per_s)
            .add(j.step_time_p50_s)
            .add(j.step_time_p95_s)
            .add(j.mfu)
            .add(j.peak_memory_bytes)
            .add(j.finish_s)
            .add(j.energy_j)
            .add(j.energy_per_item_j)
            .add(j.normalised_throughput)
            .add(j.sm_clock_mhz)
            .add(j.step_mode);
        insert_job.run();
    }

    Statement insert_sample(db_,
                            "INSERT INTO power_samples (run_id, position, t_s, power_instant_w, "
                            "power_average_w, energy_j, sm_clock_mhz, memory_used_mib) VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < run.trace.size(); ++i) {
        const TraceSample& t = run.trace[i];
        insert_sample.bind(1, id)
            .bind(2, static_cast<int64_t>(i))
            .bind(3, t.t_s)
            .bind(4, t.power_instant_w)
            .bind(5, t.power_average_w)
            .bind(6, t.energy_j)
            .bind(7, t.sm_clock_mhz)
            .bind(8, t.memory_used_mib);
        insert_sample.run();
    }
    tx.commit();
    return id;
}

std::vector<RunRecord> Store::list_runs() {
    std::vector<RunRecord> runs;
    Statement s(db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
    while (s.step())
        runs.push_back(read_run_row(s));
    for (RunRecord& r : runs)
        read_jobs(db_, r);
    return runs;
}

std::vector<StoredCell> Store::stored_cells(const std::string& experiment) {
    std::vector<StoredCell> cells;
    Statement s(
        db_,
        "SELECT r.cell_key, EXISTS (SELECT 1 FROM runs b WHERE b.parent_id = r.id AND "
        "b.role = 'baseline' AND b.interrupted = 0) FROM runs r WHERE r.experiment = ? "
        "AND r.cell_key IS NOT NULL AND r.role = 'run' AND r.interrupted = 0 ORDER BY r.id");
    s.bind(1, experiment);
    while (s.step())
        cells.push_back({s.text_at(0), s.int64_at(1) != 0});
    return cells;
}

std::optional<RunRecord> Store::get_run(int64_t id, TraceLoad trace) {
    Statement s(db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
    s.bind(1, id);
    if (!s.step())
        return std::nullopt;
    RunRecord run = read_run_row(s);
    read_jobs(db_, run);
    if (trace == TraceLoad::kWith)
        read_trace(db_, run);
    return run;
}

}  // namespace migscope::store
