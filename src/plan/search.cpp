// The planner's search: exhaustive branch and bound per layout on one GPU, and a heuristic
// (longest job first, local search, per-GPU layout changes) for many jobs or GPUs.
#include "plan/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "core/error.h"
#include "plan/exhaustive_search.h"
#include "plan/heuristic_search.h"
#include "plan/search_parts.h"

namespace migscope::plan {
namespace {

using namespace search_parts;

// Sub-layouts of a shape: every distinct sub-multiset of its partitions (idle ones left out).
std::vector<Shape> sub_shapes(const Problem& p, const Shape& shape) {
    std::vector<Shape> out;
    std::vector<std::string> seen;
    const size_t n = shape.sizes.size();
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
        mig::Layout sub;
        for (size_t k = 0; k < n; ++k) {
            if (mask & (1u << k))
                sub.instances.push_back(shape.layout->instances[k]);
        }
        Shape s = shape_of(p, sub);
        std::string key;
        for (size_t size : s.sizes)
            key += std::to_string(size) + ",";
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            continue;
        seen.push_back(key);
        out.push_back(std::move(s));
    }
    return out;
}

// A plan on a sub-layout shown on the full layout: the left-out partitions stay idle.
Plan on_full_layout(const Plan& sub, const Shape& full) {
    GpuPlan gp{full.layout, Queues(full.sizes.size())};
    std::vector<char> taken(full.sizes.size(), 0);
    const mig::Layout& sl = *sub.front().layout;
    for (size_t i = 0; i < sl.instances.size(); ++i) {
        for (size_t k = 0; k < full.sizes.size(); ++k) {
            if (!taken[k] && full.layout->instances[k].profile == sl.instances[i].profile) {
                taken[k] = 1;
                gp.queues[k] = sub.front().queues[i];
                break;
            }
        }
    }
    return {gp};
}

bool use_exhaustive(const Problem& p, const SearchOptions& o) {
    if (o.method == Method::kHeuristic)
        return false;
    if (o.method == Method::kExhaustive && o.gpus != 1)
        throw input_error("the exhaustive search plans one GPU; use the heuristic for " +
                          std::to_string(o.gpus));
    return o.gpus == 1 &&
           (o.method == Method::kExhaustive || p.jobs.size() <= o.exhaustive_job_limit);
}

std::vector<Candidate> pareto_front(std::vector<Candidate> all) {
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
        return a.prediction.energy_j < b.prediction.energy_j ||
               (a.prediction.energy_j == b.prediction.energy_j &&
                a.prediction.throughput > b.prediction.throughput);
    });
    std::vector<Candidate> front;
    for (Candidate& c : all) {
        if (front.empty() || c.prediction.throughput > front.back().prediction.throughput + kEps)
            front.push_back(std::move(c));
    }
    return front;
}

// What a plan runs: per GPU, each busy partition's SMs with its queue of jobs (by what they are,
// so that identical jobs are interchangeable), in a canonical order.
std::string sm_signature(const Problem& p, const Plan& plan) {
    std::vector<std::string> gpus;
    for (const GpuPlan& g : plan) {
        std::vector<std::string> parts;
        for (size_t k = 0; k < g.queues.size(); ++k) {
            if (g.queues[k].empty())
                continue;
            std::string part =
                g.layout ? std::to_string(p.sizes[p.size_index(g.layout->instances[k].profile)].sms)
                         : "whole";
            for (size_t j : g.queues[k]) {  // identical jobs are interchangeable
                const JobModel& job = p.jobs[j];
                part += "," + job.request.workload + ":" + job.request.mode + ":" +
                        std::to_string(job.profile->batch) + ":" + std::to_string(job.items);
            }
            parts.push_back(part);
        }
        std::sort(parts.begin(), parts.end());
        std::string gpu;
        for (const std::string& part : parts)
            gpu += part + ";";
        gpus.push_back(gpu);
    }
    std::sort(gpus.begin(), gpus.end());
    std::string out;
    for (const std::string& g : gpus)
        out += g + "|";
    return out;
}

// Candidates that run the same jobs on the same SM counts are one (green contexts give 3g.71gb
// and 4g.71gb both 64 SMs on an H200): the first, best scored, is kept.
std::vector<Candidate> distinct_by_sms(const Problem& p, std::vector<Candidate> sorted) {
    std::vector<Candidate> out;
    std::set<std::string> seen;
    for (Candidate& c : sorted) {
        if (seen.insert(sm_signature(p, c.plan)).second)
            out.push_back(std::move(c));
    }
    return out;
}

}  // namespace

std::string to_string(Method method) {
    switch (method) {
        case Method::kAuto:
            return "auto";
        case Method::kExhaustive:
            return "exhaustive";
        case Method::kHeuristic:
            return "heuristic";
    }
    return "?";
}

bool Candidate::partitioned() const {
    return std::any_of(plan.begin(), plan.end(), [](const GpuPlan& g) { return g.layout; });
}

std::optional<Candidate> best_on_layout(const Problem& p, const mig::Layout& layout,
                                        const SearchOptions& o) {
    const Tables tab(p);
    const Shape full = shape_of(p, layout);
    uint64_t evaluated = 0;
    if (use_exhaustive(p, o)) {
        auto best = exhaustive(p, tab, sub_shapes(p, full), o.objective, 1, evaluated);
        if (best.empty())
            return std::nullopt;
        return candidate_of(p, on_full_layout(best.front().second.plan, full));
    }
    std::optional<Plan> plan = plan_on_shape(p, tab, full, o.objective, o.gpus);
    if (!plan)
        return std::nullopt;
    return candidate_of(p, std::move(*plan));
}

std::string to_string(Verdict verdict) {
    switch (verdict) {
        case Verdict::kNotPartitioned:
            return "not-partitioned";
        case Verdict::kClearGain:
            return "clear-gain";
        case Verdict::kInsideError:
            return "inside-error";
        case Verdict::kErrorUnknown:
            return "error-unknown";
        case Verdict::kPointsOnly:
            return "points-only";
    }
    return "?";
}

namespace {

bool overlap(const Bounds& a, const Bounds& b) {
    return a.lo <= b.hi && b.lo <= a.hi;
}

size_t busiest_gpu_partitions(const Plan& plan) {
    size_t busy = 0;
    for (const GpuPlan& gpu : plan)
        busy = std::max(busy, partitions_busy(gpu));
    return busy;
}

// `figure` (energy or makespan) of c against the sequential baseline's, with its gains' range.
ChangeVsSequential change_vs_sequential(Objective figure, const Candidate& c,
                                        const Candidate& sequential, const ModelError* error) {
    const double mine = score(figure, c.prediction), theirs = score(figure, sequential.prediction);
    ChangeVsSequential change;
    if (theirs <= 0)
        return change;
    const double ratio = mine / theirs;
    change.predicted = ratio - 1;
    const ErrorBand band = error && c.partitioned()
                               ? gain_band(*error, figure, busiest_gpu_partitions(c.plan))
                               : ErrorBand{};
    if (band.known()) {
        change.range = Bounds{ratio * band.lo - 1, ratio * band.hi - 1};
        change.range_coverage = band.coverage;
        change.gain_group = band.group;
    }
    return change;
}

// Every candidate's interval, then the recommendation (Decision) moved to the front of the top.
void decide(const Problem& p, const SearchOptions& o, SearchResult& r) {
    const Candidate& sequential = *r.baselines.front().candidate;
    const auto with_interval = [&](Candidate& c) {
        c.interval = predict_interval(p, c.plan, c.prediction, o.error);
        c.energy_vs_sequential = change_vs_sequential(Objective::kEnergy, c, sequential, o.error);
        c.makespan_vs_sequential =
            change_vs_sequential(Objective::kMakespan, c, sequential, o.error);
    };
    for (Candidate& c : r.top)
        with_interval(c);
    for (Candidate& c : r.pareto)
        with_interval(c);
    for (Baseline& b : r.baselines) {
        if (b.candidate)
            with_interval(*b.candidate);
    }
    Decision& d = r.decision;
    const auto part = std::find_if(r.top.begin(), r.top.end(),
                                   [](const Candidate& c) { return c.partitioned(); });
    if (part != r.top.end()) {
        d.best_partitioned = part->name;
        const double mine = score(o.objective, part->prediction);
        const double theirs = score(o.objective, sequential.prediction);
        d.gain = theirs != 0 ? (theirs - mine) / std::abs(theirs) : 0.0;
        d.partitioned = score_bounds(o.objective, part->interval);
        d.not_partitioned = score_bounds(o.objective, sequential.interval);
        const ErrorBand band =
            o.error ? gain_band(*o.error, o.objective, busiest_gpu_partitions(part->plan))
                    : ErrorBand{};
        if (band.known() && theirs != 0) {
            // The score ratio is the figure ratio (throughputs: both negated); a gain of k × it.
            const double ratio = mine / theirs, sign = theirs > 0 ? 1.0 : -1.0;
            const auto gain_at = [&](double k) { return sign * (1 - ratio * k); };
            d.gain_pairs = band.n;
            d.gain_group = band.group;
            d.corrected_gain = gain_at(band.median);
            d.gain_range = {std::min(gain_at(band.lo), gain_at(band.hi)),
                            std::max(gain_at(band.lo), gain_at(band.hi))};
            d.gain_range_coverage = band.coverage;
        }
    }
    bool recommend_sequential = false;
    if (!o.error) {
        d.verdict = Verdict::kPointsOnly;
    } else if (!r.top.front().partitioned()) {
        d.verdict = Verdict::kNotPartitioned;
    } else if (!r.top.front().interval.known || !sequential.interval.known) {
        d.verdict = Verdict::kErrorUnknown;
        d.unknown_why = !r.top.front().interval.known ? r.top.front().interval.unknown_why
                                                      : sequential.interval.unknown_why;
        recommend_sequential = true;
    } else if (d.gain_pairs > 0 ? d.gain_range.lo > 0 : d.partitioned.hi < d.not_partitioned.lo) {
        d.verdict = Verdict::kClearGain;
    } else {
        d.verdict = Verdict::kInsideError;
        recommend_sequential = true;
    }
    if (recommend_sequential) {
        const auto at = std::find_if(r.top.begin(), r.top.end(),
                                     [](const Candidate& c) { return !c.partitioned(); });
        if (at != r.top.end())
            std::rotate(r.top.begin(), at, at + 1);
        else
            r.top.insert(r.top.begin(), sequential);
    }
    const Candidate& chosen = r.top.front();
    const auto indistinguishable = [&](const Candidate& c) {
        return !o.error || !c.interval.known || !chosen.interval.known ||
               overlap(score_bounds(o.objective, chosen.interval),
                       score_bounds(o.objective, c.interval));
    };
    if (r.given) {
        with_interval(r.given->candidate);
        const double mine = score(o.objective, r.given->candidate.prediction);
        const double theirs = score(o.objective, chosen.prediction);
        r.given->vs_recommended = theirs != 0 ? (theirs - mine) / std::abs(theirs) : 0.0;
        r.given->indistinguishable = indistinguishable(r.given->candidate);
    }
    if (!o.error)
        return;
    for (size_t i = 1; i < r.top.size(); ++i) {
        if (indistinguishable(r.top[i]))
            d.indistinguishable.push_back(r.top[i].name);
    }
}

// Why the problem cannot plan `layout`: a partition size it lacks; "" when it can.
std::string unknown_size(const Problem& p, const mig::Layout& layout) {
    for (const mig::Instance& i : layout.instances) {
        if (std::none_of(p.sizes.begin(), p.sizes.end(),
                         [&](const Size& s) { return s.label == i.profile; }))
            return i.profile + ": SMs or memory unknown for " + p.model.key;
    }
    return "";
}

// The baseline `name`: the best plan on the layout `spec` (empty: the GPU has no such
// configuration), or why there is none.
Baseline layout_baseline(const Problem& p, const SearchOptions& o, const std::string& name,
                         const std::string& spec) {
    Baseline b{name, std::nullopt, ""};
    if (spec.empty()) {
        b.why_not = "no such configuration for " + p.model.key;
        return b;
    }
    const mig::LayoutCheck check = mig::check_layout(mig::parse_layout(spec, p.model), p.model);
    if (!check.layout) {
        b.why_not = "not a layout of " + p.model.key + ": " + check.reason;
        return b;
    }
    b.why_not = unknown_size(p, *check.layout);
    if (!b.why_not.empty())
        return b;
    b.candidate = best_on_layout(p, *check.layout, o);
    if (!b.candidate)
        b.why_not = "some job can use none of its partitions (memory or min speed)";
    return b;
}

// The best single layout baseline: the best of the layouts' plans (best first) whose GPUs are all
// partitioned alike.
Baseline best_single_layout(const std::vector<Candidate>& per_layout) {
    Baseline single{"best single layout", std::nullopt,
                    "no partitioned layout can run the job set"};
    for (const Candidate& c : per_layout) {
        const bool uniform = std::all_of(c.plan.begin(), c.plan.end(), [&](const GpuPlan& g) {
            return g.layout && g.layout == c.plan.front().layout;
        });
        if (uniform) {
            single.candidate = c;
            single.why_not.clear();
            break;
        }
    }
    return single;
}

// The user's plan: its queues as given, each job where it can run, or the best assignment on
// its layout.
Candidate given_candidate(const Problem& p, const SearchOptions& o) {
    const SearchOptions::GivenLayout& given = *o.given;
    if (o.gpus != 1)
        throw input_error("layout: a plan of your own is one GPU's layout: plan it with 1 GPU");
    if (mig::is_whole_gpu(given.layout, p.model))
        throw input_error("layout: " + given.layout.instances.front().profile +
                          " is the whole GPU, which the plan always has: the sequential "
                          "baseline (not partitioned)");
    if (const std::string why = unknown_size(p, given.layout); !why.empty())
        throw input_error("layout: " + why);
    if (given.queues.empty()) {
        std::optional<Candidate> best = best_on_layout(p, given.layout, o);
        if (!best)
            throw input_error("layout: some job fits none of its partitions (memory, min speed)");
        return std::move(*best);
    }
    // The partitions in the search's order (shape_of: largest first), each with its queue, so
    // that the plan is named and compared as the search's own plan of that layout is.
    const std::vector<mig::Instance>& instances = given.layout.instances;
    std::vector<size_t> order(instances.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return p.size_index(instances[a].profile) > p.size_index(instances[b].profile);
    });
    GpuPlan gpu{mig::Layout{}, {}};
    for (size_t k : order) {
        gpu.layout->instances.push_back(instances.at(k));
        gpu.queues.push_back(given.queues.at(k));
        const std::string& label = instances[k].profile;
        for (size_t j : given.queues[k]) {
            const JobOnSize& on = p.jobs.at(j).on[p.size_index(label)];
            if (!on.usable)
                throw input_error("assign[" + std::to_string(j) + "]: job '" +
                                  p.jobs[j].request.name + "' cannot run on " + label + ": " +
                                  on.refusal);
        }
    }
    return candidate_of(p, Plan{std::move(gpu)});
}

}  // namespace

SearchResult search(const Problem& p, const SearchOptions& o) {
    if (o.gpus == 0 || o.gpus > kMaxPlanGpus)
        throw input_error("plan: --gpus must be 1 to " + std::to_string(kMaxPlanGpus) + ", not " +
                          std::to_string(o.gpus));
    if (o.top_k == 0)
        throw input_error("plan: --top must be at least 1");
    SearchResult r;
    if (o.given)  // first: a plan that cannot be is refused before the search
        r.given = GivenPlan{given_candidate(p, o)};
    const Tables tab(p);
    const std::vector<Shape> shapes = all_shapes(p);
    r.layouts = shapes.size();
    std::vector<Candidate> pool;  // for the Pareto front
    auto run = [&](Objective objective, size_t keep) {
        auto found = r.method == Method::kExhaustive
                         ? exhaustive(p, tab, shapes, objective, keep, r.evaluated)
                         : heuristic(p, tab, shapes, objective, o.gpus, keep, r.evaluated);
        std::vector<Candidate> out;
        for (auto& f : found)
            out.push_back(std::move(f.second));
        return out;
    };
    r.method = use_exhaustive(p, o) ? Method::kExhaustive : Method::kHeuristic;
    // Every layout's best plan for the objective: the top K, the best single layout, the front.
    std::vector<Candidate> per_layout = distinct_by_sms(p, run(o.objective, shapes.size()));
    for (const Objective other : {Objective::kEnergy, Objective::kThroughput}) {
        if (other != o.objective) {
            for (Candidate& c : run(other, shapes.size()))
                pool.push_back(std::move(c));
        }
    }
    pool.insert(pool.end(), per_layout.begin(), per_layout.end());
    r.pareto = pareto_front(std::move(pool));
    r.top.assign(per_layout.begin(), per_layout.begin() + std::min(o.top_k, per_layout.size()));

    // Baselines.
    Baseline sequential{"sequential whole GPU", std::nullopt, ""};
    sequential.candidate = candidate_of(p, whole_gpu_plan(p, tab, o.objective, o.gpus));
    r.baselines.push_back(std::move(sequential));
    // Every compute slice its own 1g instance, and mig-parted's all-balanced configuration (on
    // seven-slice GPUs 3g + 2g + 2 × 1g, on the four-slice A30 2g + 2 × 1g).
    const std::string all_1g = std::to_string(p.model.compute_slices) + "x1g";
    r.baselines.push_back(layout_baseline(p, o, all_1g, p.model.find("1g") ? all_1g : ""));
    r.baselines.push_back(layout_baseline(p, o, "all-balanced",
                                          p.model.compute_slices == 7   ? "3g+2g+2x1g"
                                          : p.model.compute_slices == 4 ? "2g+2x1g"
                                                                        : ""));
    r.baselines.push_back(best_single_layout(per_layout));
    decide(p, o, r);
    return r;
}

}  // namespace migscope::plan
