// The planner's job requests from the options of `migscope plan` (--jobs, --jobs-file, --work,
// --weights), with the input errors that name them.
#pragma once

#include <string>
#include <vector>

#include "plan/model.h"

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

}  // namespace migscope::runner
