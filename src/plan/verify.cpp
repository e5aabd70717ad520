// Plan verification: the top candidates run through a CandidateRunner, predicted against
// measured.
#include "plan/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/statistics.h"

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
                spec.steps = job.request.work_steps;
            }
            a.jobs.push_back(std::move(spec));
            a.order.push_back(j);
            if (g.layout)
                a.assign.push_back(a.layout.size() - 1);
        }
    }
    return a;
}

std::optional<MeasuredRun> CandidateRunner::run_gpus(const Candidate&, size_t,
                                                     const std::vector<CandidateRun>&,
                                                     std::string& why_not) {
    why_not = "this runner runs one GPU";
    return std::nullopt;
}

CandidateRun combined_run(const std::vector<CandidateRun>& runs) {
    CandidateRun all;
    for (size_t g = 0; g < runs.size(); ++g) {
        const CandidateRun& r = runs[g];
        const size_t first = all.layout.size();
        const std::string gpu = "GPU " + std::to_string(g) + " ";
        if (r.layout.empty() && !r.jobs.empty())
            all.layout.push_back(gpu + "whole");
        for (const std::string& term : r.layout)
            all.layout.push_back(gpu + term);
        for (size_t q = 0; q < r.jobs.size(); ++q) {
            all.jobs.push_back(r.jobs[q]);
            all.order.push_back(r.order[q]);
            all.assign.push_back(first + (r.layout.empty() ? 0 : r.assign[q]));
        }
    }
    return all;
}

namespace {

// Each GPU's predicted makespan and energy (its jobs'), and what was measured of it.
std::vector<GpuCheck> gpu_checks(const Candidate& c, const std::optional<MeasuredRun>& m) {
    std::vector<GpuCheck> out(c.plan.size());
    for (size_t g = 0; g < out.size(); ++g)
        out[g].gpu = g;
    for (const JobPrediction& j : c.prediction.jobs) {
        GpuCheck& g = out.at(j.gpu);
        g.predicted_makespan_s = std::max(g.predicted_makespan_s, j.end_s);
        g.predicted_energy_j += j.energy_j;
    }
    if (m) {
        for (const MeasuredGpu& mg : m->gpus) {
            if (mg.gpu < out.size())
                out[mg.gpu].measured = mg;
        }
    }
    return out;
}

}  // namespace

std::vector<std::optional<double>> measured_end_times(const std::vector<CandidateRun>& runs,
                                                      const MeasuredRun& run) {
    std::vector<std::optional<double>> out;
    for (const CandidateRun& r : runs) {
        std::optional<double> whole_s = 0.0;  // a whole GPU's windows so far
        for (size_t q = 0; q < r.jobs.size() && out.size() < run.jobs.size(); ++q) {
            const std::optional<double>& finish_s = run.jobs[out.size()].finish_s;
            if (!r.layout.empty()) {
                out.push_back(finish_s);
                continue;
            }
            whole_s = whole_s && finish_s ? std::optional<double>(*whole_s + *finish_s)
                                          : std::nullopt;
            out.push_back(whole_s);
        }
    }
    return out;
}

std::optional<double> measured_score(Objective objective, const Problem& p,
                                     const CandidateRun& plan, const MeasuredRun& run) {
    if (!(run.makespan_s > 0))
        return std::nullopt;
    constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
    // The work: every job's seconds alone on the whole GPU, from its profile (as predicted).
    double work_s = 0;
    for (size_t q = 0; q < plan.order.size(); ++q)
        work_s += p.jobs[plan.order.at(q)].whole_gpu_s;
    Prediction figures;
    figures.makespan_s = run.makespan_s;
    figures.energy_j = run.energy_j.value_or(kUnknown);
    figures.edp_js = figures.energy_j * run.makespan_s;
    figures.throughput = work_s / run.makespan_s;
    // Each partition's jobs' work over when its last job ended; the whole GPU is one partition,
    // busy for the makespan.
    figures.aggregate_throughput = figures.throughput;
    if (!plan.assign.empty()) {
        std::vector<double> work(plan.layout.size(), 0), busy_s(plan.layout.size(), 0);
        figures.aggregate_throughput = 0;
        for (size_t q = 0; q < plan.order.size() && q < run.jobs.size(); ++q) {
            const size_t k = plan.assign[q];
            work[k] += p.jobs[plan.order.at(q)].whole_gpu_s;
            busy_s[k] = run.jobs[q].finish_s ? std::max(busy_s[k], *run.jobs[q].finish_s)
                                             : kUnknown;
        }
        for (size_t k = 0; k < work.size(); ++k)  // an idle partition or an unknown end: unknown
            figures.aggregate_throughput += busy_s[k] > 0 ? work[k] / busy_s[k] : kUnknown;
    }
    const double s = score(objective, figures);
    return std::isnan(s) ? std::nullopt : std::optional<double>(s);
}

namespace {

bool same_plan(const Plan& a, const Plan& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const GpuPlan& x, const GpuPlan& y) {
                          return x.layout == y.layout && x.queues == y.queues;
                      });
}

}  // namespace

std::optional<BoardIdle> board_idle(const Problem& p,
                                    const std::vector<VerifiedCandidate>& candidates) {
    if (p.idle_state.empty())
        return std::nullopt;
    std::vector<double> watts;
    for (const VerifiedCandidate& c : candidates) {
        if (c.measured && c.measured->idle_power_w && c.measured->idle_state == p.idle_state)
            watts.push_back(*c.measured->idle_power_w);
    }
    if (watts.empty())
        return std::nullopt;
    return BoardIdle{*percentile(watts, 0.5), watts.size(), p.idle_power_w, p.idle_state};
}

namespace {

// Each measured partitioned candidate's energy and makespan against the measured sequential
// baseline (the candidate that is not partitioned).
void measure_changes_vs_sequential(std::vector<VerifiedCandidate>& candidates) {
    const auto sequential =
        std::find_if(candidates.begin(), candidates.end(),
                     [](const VerifiedCandidate& c) { return !c.partitioned && c.complete; });
    if (sequential == candidates.end())
        return;
    const MeasuredRun& base = *sequential->measured;
    for (VerifiedCandidate& c : candidates) {
        if (!c.partitioned || !c.complete)
            continue;
        if (base.makespan_s > 0)
            c.measured_makespan_vs_sequential = c.measured->makespan_s / base.makespan_s - 1;
        if (c.measured->energy_j && base.energy_j && *base.energy_j > 0)
            c.measured_energy_vs_sequential = *c.measured->energy_j / *base.energy_j - 1;
    }
}

}  // namespace

Verification verify(const Problem& p, const SearchResult& r, Objective objective,
                    CandidateRunner& runner) {
    Verification v;
    v.objective = objective;
    std::vector<const Candidate*> candidates;
    for (const Candidate& c : r.top)
        candidates.push_back(&c);
    const bool has_sequential = std::any_of(r.top.begin(), r.top.end(),
                                            [](const Candidate& c) { return !c.partitioned(); });
    const Candidate* sequential = nullptr;
    if (!has_sequential && !r.baselines.empty() && r.baselines.front().candidate)
        candidates.push_back(sequential = &*r.baselines.front().candidate);
    const Candidate* given = r.given ? &r.given->candidate : nullptr;
    if (given && std::none_of(candidates.begin(), candidates.end(),
                              [&](const Candidate* c) { return same_plan(c->plan, given->plan); }))
        candidates.push_back(given);
    for (size_t i = 0; i < candidates.size(); ++i) {
        const Candidate& c = *candidates[i];
        std::vector<CandidateRun> runs;
        for (const GpuPlan& g : c.plan)
            runs.push_back(candidate_run(p, g));
        const CandidateRun run = runs.size() == 1 ? runs.front() : combined_run(runs);
        VerifiedCandidate vc;
        vc.name = c.name;
        vc.baseline = &c == sequential;
        vc.given = &c == given;
        vc.predicted = c.prediction;
        vc.interval = c.interval;
        vc.partitioned = c.partitioned();
        vc.energy_vs_sequential = c.energy_vs_sequential;
        vc.makespan_vs_sequential = c.makespan_vs_sequential;
        vc.order = run.order;
        vc.measured = runs.size() == 1 ? runner.run(c, i, run, vc.skipped)
                                       : runner.run_gpus(c, i, runs, vc.skipped);
        if (runs.size() > 1)
            vc.gpus = gpu_checks(c, vc.measured);
        if (vc.measured) {
            v.runs_wall_s += vc.measured->wall_s;
            vc.end_s = measured_end_times(runs, *vc.measured);
            bool all_ok = true;
            for (const MeasuredJob& j : vc.measured->jobs)
                all_ok = all_ok && j.status == "ok";
            vc.complete = all_ok;
            if (all_ok) {
                vc.score = measured_score(objective, p, run, *vc.measured);
                if (auto t = measured_score(Objective::kThroughput, p, run, *vc.measured))
                    vc.throughput = -*t;
                if (auto t = measured_score(Objective::kAggregateThroughput, p, run, *vc.measured))
                    vc.aggregate_throughput = -*t;
            }
            if (vc.score && (!v.best_measured || *vc.score < *v.candidates[*v.best_measured].score))
                v.best_measured = i;
        }
        v.candidates.push_back(std::move(vc));
    }
    if (v.best_measured && !v.candidates.empty() && v.candidates.front().score) {
        const double mine = *v.candidates.front().score;
        const double best = *v.candidates[*v.best_measured].score;
        v.recommended_gap = best < 0 ? 1 - mine / best : mine / best - 1;  // throughputs: < 0
    }
    measure_changes_vs_sequential(v.candidates);
    v.board_idle = board_idle(p, v.candidates);
    return v;
}

}  // namespace migscope::plan
