// Same-work comparison of a partitioned run with the sequential baseline.
#include "report/comparison.h"

namespace migscope::report {

Comparison compare_with_baseline(const store::RunRecord& run, const store::RunRecord& baseline) {
    Comparison c;
    c.run_energy_j = run.counter_energy_j;
    c.run_time_s = run.window_s;
    // Time needs only throughputs, energy also each job's energy per item alone: one missing
    // figure leaves the other.
    double energy_j = 0, time_s = 0;
    bool have_time = !run.jobs.empty(), have_energy = have_time;
    for (const store::JobRecord& j : run.jobs) {
        const store::JobRecord* alone = nullptr;
        for (const store::JobRecord& b : baseline.jobs) {
            if (b.name == j.name)
                alone = &b;
        }
        if (!alone || !j.items_per_s || !alone->items_per_s) {
            have_time = have_energy = false;
            break;
        }
        // The items this job processed: its fixed work, or its rate over the whole window.
        const double items = run.mode == "work" ? j.items : *j.items_per_s * run.window_s;
        time_s += items / *alone->items_per_s;
        if (alone->energy_per_item_j)
            energy_j += items * *alone->energy_per_item_j;
        else
            have_energy = false;
    }
    if (have_time) {
        c.baseline_time_s = time_s;
        if (run.window_s > 0)
            c.speedup = time_s / run.window_s;
    }
    if (have_energy) {
        c.baseline_energy_j = energy_j;
        if (c.run_energy_j && energy_j > 0)
            c.energy_change_pct = 100.0 * (*c.run_energy_j - energy_j) / energy_j;
    }
    return c;
}

}  // namespace migscope::report
