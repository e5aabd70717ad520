// Short texts about a stored run: job statuses and role.
#include "report/run_text.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace migscope::report {

std::string status_summary(const store::RunRecord& run) {
    std::vector<std::pair<std::string, int>> counts;
    for (const store::JobRecord& j : run.jobs) {
        auto it = std::find_if(counts.begin(), counts.end(),
                               [&](const auto& c) { return c.first == j.status; });
        if (it == counts.end())
            counts.emplace_back(j.status, 1);
        else
            ++it->second;
    }
    std::string text;
    for (const auto& [status, n] : counts)
        text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + status;
    if (run.interrupted)
        text += text.empty() ? "interrupted" : ", interrupted";
    return text;
}

std::string status_summary(const std::vector<store::RunRecord>& rows) {
    store::RunRecord all;
    for (const store::RunRecord& r : rows) {
        all.jobs.insert(all.jobs.end(), r.jobs.begin(), r.jobs.end());
        all.interrupted = all.interrupted || r.interrupted;
    }
    return status_summary(all);
}

std::string role_text(const store::RunRecord& run) {
    std::string text =
        to_string(run.role) + (run.parent_id ? " of " + std::to_string(*run.parent_id) : "");
    if (run.gpu_index)  // one GPU's row of a run over several GPUs
        text += ", GPU " + std::to_string(*run.gpu_index) +
                (run.host_run_id ? " of host run " + std::to_string(*run.host_run_id) : "");
    return text;
}

}  // namespace migscope::report
