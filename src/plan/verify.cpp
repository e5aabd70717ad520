// Plan verification: the top candidates run through a CandidateRunner, predicted against
// measured.
#include "plan/verify.h"

namespace migscope::plan {

CandidateRun candidate_run(const Problem& p, const GpuPlan& g) {
    CandidateRun a;
    for (size_t k = 0; k < g.queues.size(); ++k) {
        if (g.queues[k].empty())
            continue;  // an idle partition is SMs nobody uses: left out
        if (g.layout) {
            const mig::Instance& i = g.layout->instances[k];
            a.layout.push_back(i.profile + "@" + std::to_string(i.start));
        }
        for (size_t j : g.queues[k]) {
            const JobModel& job = p.jobs[j];
            protocol::JobSpec spec;
            spec.name = job.request.name;
            spec.workload = job.request.workload;
            spec.command = job.request.command;
            if (!job.profile->external()) {
                spec.mode = job.request.mode;
                spec.batch = job.profile->batch;
            }
            a.jobs.push_back(std::move(spec));
            a.order.push_back(j);
            if (g.layout)
                a.assign.push_back(a.layout.size() - 1);
        }
    }
    return a;
}

std::optional<double> measured_score(Objective objective, const MeasuredRun& run) {
    if (objective == Objective::kMakespan)
        return run.makespan_s;
    if (!run.energy_j)
        return std::nullopt;
    switch (objective) {
        case Objective::kEnergy:
            return *run.energy_j;
        case Objective::kEdp:
            return *run.energy_j * run.makespan_s;
        case Objective::kThroughput:  // needs every job's whole-GPU speed measured alongside
        case Objective::kMakespan:
            break;
    }
    return std::nullopt;
}

Verification verify(const Problem& p, const SearchResult& r, Objective objective,
                    CandidateRunner& runner) {
    Verification v;
    v.objective = objective;
    for (size_t i = 0; i < r.top.size(); ++i) {
        const Candidate& c = r.top[i];
        const CandidateRun run = candidate_run(p, c.plan.front());
        VerifiedCandidate vc{c.name, c.prediction, std::nullopt, "", run.order, std::nullopt};
        vc.measured = runner.run(c, i, run, vc.skipped);
        if (vc.measured) {
            v.runs_wall_s += vc.measured->wall_s;
            bool all_ok = true;
            for (const MeasuredJob& j : vc.measured->jobs)
                all_ok = all_ok && j.status == "ok";
            if (all_ok)
                vc.score = measured_score(objective, *vc.measured);
            if (vc.score && (!v.best_measured || *vc.score < *v.candidates[*v.best_measured].score))
                v.best_measured = i;
        }
        v.candidates.push_back(std::move(vc));
    }
    if (v.best_measured && !v.candidates.empty() && v.candidates.front().score)
        v.recommended_gap = *v.candidates.front().score / *v.candidates[*v.best_measured].score - 1;
    return v;
}

}  // namespace migscope::plan
