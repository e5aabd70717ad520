// `migscope run` output: a run result as JSON (one field schema) and as a summary table.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "runner/comparison.h"
#include "runner/run.h"
#include "runner/run_record.h"

namespace migscope::cli {

// A run as JSON: the results store's fields (results_output.h) for this run, plus method texts and
// job log paths; `context` gives its time, provenance and role.
nlohmann::json run_json(const runner::RunResult& run, const runner::RecordContext& context);
// The per-job table and the totals, then warnings; `title` heads it.
void print_run_table(const runner::RunResult& run, const std::string& title, std::ostream& out);
// The same-work comparison as JSON.
nlohmann::json comparison_json(const runner::Comparison& comparison);
// One paragraph: a partitioned run against the sequential baseline of the same jobs.
void print_comparison(const runner::RunResult& run, const runner::RunResult& baseline,
                      std::ostream& out);
// The run's table, then, when there is one, the baseline's and the comparison.
void print_run_and_baseline(const runner::RunResult& run,
                            const std::optional<runner::RunResult>& baseline,
                            const std::string& title, std::ostream& out);

}  // namespace migscope::cli
