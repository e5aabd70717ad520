// Stored runs as JSON, tables and CSV: the printers of `migscope results` and result.json.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "core/printers.h"
#include "store/record.h"

namespace migscope::report {

// One stored run: run_json's fields plus id, started_at, role, parent_id, label and provenance;
// the trace when the record carries one.
nlohmann::json record_json(const store::RunRecord& run);
// One line per run: id, time, role, backend, layout, jobs, window, energy, job statuses; after a
// host run's last GPU row, the host's total (report/host_total.h: energy summed, the longest
// window, jobs summed), and under the table what each total includes.
void print_runs_table(const std::vector<store::RunRecord>& runs, std::ostream& out);
// The same columns as CSV, one row per run.
void print_runs_csv(const std::vector<store::RunRecord>& runs, std::ostream& out);
// One row per job (name, partition, SMs, status, throughput, step times, MFU, peak memory,
// energy), then each job's message.
void print_job_table(const std::vector<store::JobRecord>& jobs, std::ostream& out);
// One run with its provenance and jobs; a GPU row of a host run, given the host run's rows
// (Store::host_run), then the host's total and what it includes.
void print_run_record(const store::RunRecord& run, const std::vector<store::RunRecord>& host_rows,
                      std::ostream& out);
// One row per job with its run's fields (a run without jobs: one row, job columns empty).
void print_jobs_csv(const std::vector<store::RunRecord>& runs, std::ostream& out);
// Every run as a JSON array of record_json.
void print_runs_json(const std::vector<store::RunRecord>& runs, std::ostream& out);

// One stored run as `results show` prints it: a GPU row of a host run with the host run's rows.
struct StoredRun {
    const store::RunRecord& run;
    const std::vector<store::RunRecord>& host_rows;  // empty: not part of a host run
};

// `results list`: table (print_runs_table), json, csv (print_runs_csv).
const Printers<std::vector<store::RunRecord>>& runs_list_printers();
// `results export`: csv (print_jobs_csv: a row per job), json.
const Printers<std::vector<store::RunRecord>>& runs_export_printers();
// `results show`: table (print_run_record), json (record_json; the trace when loaded).
const Printers<StoredRun>& stored_run_printers();

}  // namespace migscope::report
