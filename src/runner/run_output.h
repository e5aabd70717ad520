// A run result as JSON (the store record's fields) and as a summary table, with its baseline.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "core/printers.h"
#include "runner/cell.h"
#include "runner/comparison.h"
#include "runner/run.h"
#include "runner/run_record.h"

namespace migscope::runner {

// A run as JSON: the results store's fields (report/record_output.h) for this run, plus method
// texts and job log paths; `context` gives its time, provenance and role.
nlohmann::json run_json(const RunResult& run, const RecordContext& context);
// The per-job table and the totals, then warnings; `title` heads it.
void print_run_table(const RunResult& run, const std::string& title, std::ostream& out);

// Each job that did not end ok: "status: message", joined by "; " (empty when all did).
std::string failed_jobs_text(const RunResult& run);
// The same-work comparison as JSON.
nlohmann::json comparison_json(const Comparison& comparison);
// One paragraph: a partitioned run against the sequential baseline of the same jobs.
void print_comparison(const RunResult& run, const RunResult& baseline, std::ostream& out);
// The run's table, then, when there is one, the baseline's and the comparison.
void print_run_and_baseline(const RunResult& run, const std::optional<RunResult>& baseline,
                            const std::string& title, std::ostream& out);

// A run cell's outcome as `migscope run` prints it.
struct CellOutput {
    const CellOutcome& cell;
    std::string title;    // heads the table: "migscope run: green 3g.71gb+4g.71gb"
    std::string run_dir;  // where the run's files are, said under the table
};
// table (print_run_and_baseline, then where the run's files are), json (the cell's result.json).
const Printers<CellOutput>& cell_printers();

}  // namespace migscope::runner
