// Short texts about a stored run, shared by the results printers and the HTML report.
#pragma once

#include <string>
#include <vector>

#include "store/record.h"

namespace migscope::report {

// "2 ok", "1 ok, 1 crashed", plus "interrupted".
std::string status_summary(const store::RunRecord& run);
// The same over several rows' jobs (a host run's GPU rows).
std::string status_summary(const std::vector<store::RunRecord>& rows);
// "run", "baseline of 3"; a GPU row of a run over several GPUs adds ", GPU 1 of host run 7".
std::string role_text(const store::RunRecord& run);

}  // namespace migscope::report
