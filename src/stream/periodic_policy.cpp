// Periodic repartitioning: every period, the best static layout for the last window's jobs.
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "stream/policies.h"

namespace migscope::stream {

PeriodicRepartition::PeriodicRepartition(const plan::Problem& problem,
                                         const std::vector<StreamJob>& jobs,
                                         SimulationOptions options, StreamObjective objective,
                                         double period_s, double window_s)
    : problem_(problem), jobs_(jobs), options_(options), objective_(objective),
      period_s_(period_s), window_s_(window_s), next_decision_s_(period_s) {
    options_.series_bin_s = 0;  // its look-backs need no series
    if (!(period_s > 0) || !std::isfinite(period_s) || !(window_s > 0) || !std::isfinite(window_s))
        throw input_error("periodic policy: the period and the window must be positive seconds");
}

std::string PeriodicRepartition::name() const {
    std::ostringstream text;
    const double hours = period_s_ / 3600;
    text << "periodic every ";
    if (hours == std::floor(hours))
        text << hours << " h";
    else
        text << period_s_ << " s";
    return text.str();
}

std::vector<LayoutChange> PeriodicRepartition::on_arrival(const StreamView& view) {
    if (view.now_s < next_decision_s_)
        return {};
    // The first period's end after now, however many periods passed without an arrival.
    next_decision_s_ = (std::floor(view.now_s / period_s_) + 1) * period_s_;
    // The window's jobs (arrived by now, never later ones), replayed from 0 as fresh jobs.
    std::vector<StreamJob> window;
    for (const StreamJob& j : jobs_) {
        if (j.arrival_s > view.now_s)
            break;
        if (j.arrival_s > view.now_s - window_s_) {
            StreamJob fresh{j.job, 0, {}};
            fresh.arrival_s = j.arrival_s - (view.now_s - window_s_);
            if (j.deadline_s)
                fresh.deadline_s = *j.deadline_s - (view.now_s - window_s_);
            window.push_back(fresh);
        }
    }
    if (window.empty())
        return {};
    SimulationOptions look = options_;
    look.gpus = view.layouts.size();
    const StaticChoice best = best_static_layout(problem_, window, look, objective_);
    std::vector<LayoutChange> changes;
    for (size_t g = 0; g < view.layouts.size(); ++g) {
        if (view.layouts[g] != best.layout)
            changes.push_back({g, best.layout});
    }
    return changes;
}

}  // namespace migscope::stream
