// The planner's job requests from the options of `migscope plan` (--jobs, --jobs-file, --work,
// --weights) and a plan of the user's own (--layout, --assign), with the input errors that name
// them.
#pragma once

#include <string>
#include <vector>

#include "mig/catalog.h"
#include "plan/model.h"
#include "plan/search.h"

namespace migscope::runner {

// Seconds of whole-GPU work a job gets when neither --work nor --weights is given.
inline constexpr double kDefaultWeightS = 60;

// "2000" for every job or "2000,500,..." one per job; input errors name `option`.
std::vector<double> per_job(const std::string& option, const std::string& text, size_t jobs);

// Built-in jobs' work from --work or --weights; an external command's work is one run of it, so
// a per-job --work list gives it 1 and a per-job --weights list cannot name it.
std::vector<plan::JobRequest> plan_job_requests(const std::string& jobs,
                                                const std::string& jobs_file,
                                                const std::string& work_text,
                                                const std::string& weights_text);

// A plan of the user's own (`plan --layout [--assign]`): the layout checked on `model` and, with
// `assign`, each partition's queue as `run --assign` queues jobs (those sharing a partition in job
// order; partition::place_jobs); without it the planner finds the best assignment. Input errors
// start with the field, `layout: ` or `assign[2]: `, as run's do.
plan::SearchOptions::GivenLayout given_layout(const std::string& layout_text,
                                              const std::vector<size_t>& assign,
                                              const mig::GpuModel& model, size_t jobs);

}  // namespace migscope::runner
