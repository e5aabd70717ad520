// Same-work comparison of a partitioned run with the sequential baseline.
#include "report/comparison.h"

namespace migscope::report {

Comparison compare_with_baseline(const store::RunRecord& run, const store::RunRecord& baseline) {
    Comparison c;
    c.run_energy_j = run.counter_energy_j;
    c.run_time_s = run.window_s;
    double energy_j = 0, time_s = 0;
    bool complete = !run.jobs.empty();
    for (const store::JobRecord& j : run.jobs) {
        const store::JobRecord* alone = nullptr;
        for (const store::JobRecord& b : baseline.jobs) {
            if (b.name == j.name)
                alone = &b;
        }
        if (!alone || !j.items_per_s || !alone->items_per_s || !alone->energy_per_item_j) {
            complete = false;
            break;
        }
        // The items this job processed: its fixed work, or its rate over the whole window.
        const double items = run.mode == "work" ? j.items : *j.items_per_s * run.window_s;
        energy_j += items * *alone->energy_per_item_j;
        time_s += items / *alone->items_per_s;
    }
    if (!complete)
        return c;
    c.baseline_energy_j = energy_j;
    c.baseline_time_s = time_s;
    if (c.run_energy_j && energy_j > 0)
        c.energy_change_pct = 100.0 * (*c.run_energy_j - energy_j) / energy_j;
    if (run.window_s > 0)
        c.speedup = time_s / run.window_s;
    return c;
}

}  // namespace migscope::report
