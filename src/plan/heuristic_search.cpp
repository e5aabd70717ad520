// The heuristic search: jobs longest first on uniform layouts, local search, per-GPU layouts.
#include "plan/heuristic_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace migscope::plan::search_parts {
namespace {

// Several GPUs: how many of the best uniform plans the layout changes start from.
constexpr size_t kStarts = 3;

// Local search swaps jobs between GPUs only for job sets up to this size (pairs grow as n²).
constexpr size_t kSwapAcrossGpusUpTo = 64;

// Jobs on the partitions (slots) of several GPUs, each GPU with its own shape; keeps per-slot
// sums so that a move is scored in time proportional to one GPU's partitions.
class Heuristic {
  public:
    Heuristic(const Problem& p, const Tables& tab, Objective o, size_t gpus)
        : p_(p), tab_(tab), o_(o), gpus_(gpus), where_(p.jobs.size(), {kNone, 0}) {}

    // Gives GPU g a shape, with no jobs (its former jobs are left unplaced).
    void set_shape(size_t g, const Shape* shape) {
        Gpu& gpu = gpus_[g];
        for (const Slot& s : gpu.slots) {
            for (size_t j : s.jobs)
                where_[j] = {kNone, 0};
        }
        gpu.shape = shape;
        gpu.slots.assign(shape->sizes.size(), Slot{});
        for (size_t k = 0; k < gpu.slots.size(); ++k)
            gpu.slots[k].size = shape->sizes[k];
        gpu.busy = 0;
        summarise(g);
    }

    bool usable(size_t j, size_t g, size_t k) const {
        return tab_.usable[tab_.at(j, gpus_[g].slots[k].size)];
    }

    void place(size_t j, size_t g, size_t k) {
        Slot& s = gpus_[g].slots[k];
        const size_t a = tab_.at(j, s.size);
        s.t += tab_.t[a];
        s.dyn += tab_.dyn[a];
        s.t_startup += tab_.t_startup[a];
        s.dyn_startup += tab_.dyn_startup[a];
        s.work += tab_.whole_s[j];
        gpus_[g].busy += s.jobs.empty();
        s.jobs.push_back(j);
        where_[j] = {g, k};
        summarise(g);
    }

    void unplace(size_t j) {
        const auto [g, k] = where_[j];
        Slot& s = gpus_[g].slots[k];
        const size_t a = tab_.at(j, s.size);
        s.t -= tab_.t[a];
        s.dyn -= tab_.dyn[a];
        s.t_startup -= tab_.t_startup[a];
        s.dyn_startup -= tab_.dyn_startup[a];
        s.work -= tab_.whole_s[j];
        s.jobs.erase(std::find(s.jobs.begin(), s.jobs.end(), j));
        if (s.jobs.empty()) {
            s.t = s.dyn = s.t_startup = s.dyn_startup = s.work = 0;  // no drift left behind
            --gpus_[g].busy;
        }
        where_[j] = {kNone, 0};
        summarise(g);
    }

    double score() const {
        ++scored;
        return score_of(o_, makespan_, dynamic_, throughput_, tab_.work_s,
                        p_.idle_power_w * gpus_.size());
    }

    // Places `jobs` longest first, each where the score is best, on `candidates(j)` GPUs;
    // false when a job has no usable partition there.
    template <typename GpuChoice>
    bool greedy(const std::vector<size_t>& jobs, GpuChoice candidates) {
        for (size_t j : jobs) {
            double best = kInf;
            const std::pair<size_t, size_t> at = best_slot(j, candidates(j), best);
            if (at.first == kNone)
                return false;
            place(j, at.first, at.second);
        }
        return true;
    }

    // The slot on `gpus` where the unplaced job `j` scores better than `best` (lowered to its
    // score), never `skip`; {kNone, 0} when none does.
    std::pair<size_t, size_t> best_slot(size_t j, const std::vector<size_t>& gpus, double& best,
                                        std::pair<size_t, size_t> skip = {kNone, 0}) {
        std::pair<size_t, size_t> at{kNone, 0};
        for (size_t g : gpus) {
            for (size_t k = 0; k < gpus_[g].slots.size(); ++k) {
                if (std::make_pair(g, k) == skip || !usable(j, g, k) || symmetric_empty(g, k))
                    continue;
                place(j, g, k);
                const double s = score();
                unplace(j);
                if (better(s, best)) {
                    best = s;
                    at = {g, k};
                }
            }
        }
        return at;
    }

    // Moves single jobs (to `candidates(j)` GPUs) and swaps pairs of jobs (within a GPU, or
    // anywhere for small job sets) while that improves the score, at most `passes` times.
    template <typename GpuChoice>
    void local_search(const std::vector<size_t>& jobs, GpuChoice candidates, int passes) {
        for (int pass = 0; pass < passes; ++pass) {
            bool improved = false;
            for (size_t j : jobs) {
                const auto from = where_[j];
                double best = score();
                const std::vector<size_t> gpus = candidates(j);
                unplace(j);
                std::pair<size_t, size_t> to = best_slot(j, gpus, best, from);
                if (to.first == kNone)
                    to = from;
                place(j, to.first, to.second);
                improved = improved || to != from;
            }
            const bool across = jobs.size() <= kSwapAcrossGpusUpTo;
            for (size_t a = 0; a < jobs.size(); ++a) {
                for (size_t b = a + 1; b < jobs.size(); ++b)
                    improved = try_swap(jobs[a], jobs[b], across) || improved;
            }
            if (!improved)
                break;
        }
    }

    std::vector<size_t> jobs_on(size_t g) const {
        std::vector<size_t> out;
        for (const Slot& s : gpus_[g].slots)
            out.insert(out.end(), s.jobs.begin(), s.jobs.end());
        std::stable_sort(out.begin(), out.end(),
                         [&](size_t a, size_t b) { return tab_.whole_s[a] > tab_.whole_s[b]; });
        return out;
    }

    // The `count` GPUs that free soonest, and GPU `also` (kNone: none).
    std::vector<size_t> soonest_free(size_t count, size_t also) const {
        std::vector<size_t> all(gpus_.size());
        std::iota(all.begin(), all.end(), 0);
        if (all.size() > count) {
            std::nth_element(all.begin(), all.begin() + count, all.end(), [&](size_t a, size_t b) {
                return gpus_[a].makespan < gpus_[b].makespan;
            });
            all.resize(count);
        }
        if (also != kNone && std::find(all.begin(), all.end(), also) == all.end())
            all.push_back(also);
        return all;
    }

    size_t gpu_of(size_t j) const { return where_[j].first; }
    std::pair<size_t, size_t> place_of(size_t j) const { return where_[j]; }  // (gpu, slot)
    const Shape* shape(size_t g) const { return gpus_[g].shape; }
    size_t gpus() const { return gpus_.size(); }

    Plan plan() const {
        Plan out;
        for (const Gpu& g : gpus_) {
            GpuPlan gp{g.shape->layout, {}};
            for (const Slot& s : g.slots)
                gp.queues.push_back(s.jobs);
            out.push_back(std::move(gp));
        }
        return out;
    }

    static constexpr size_t kNone = std::numeric_limits<size_t>::max();
    mutable uint64_t scored = 0;  // plans scored

  private:
    struct Slot {
        size_t size = 0;
        double t = 0, dyn = 0, work = 0;        // sums alone (uncorrected) over its jobs
        double t_startup = 0, dyn_startup = 0;  // of t and dyn: its commands' start-ups
        std::vector<size_t> jobs;
    };
    struct Gpu {
        const Shape* shape = nullptr;
        std::vector<Slot> slots;
        size_t busy = 0;
        double makespan = 0, dynamic = 0, throughput = 0;
    };

    // An empty partition identical to an earlier empty one on the same GPU: same as that one.
    bool symmetric_empty(size_t g, size_t k) const {
        const auto& slots = gpus_[g].slots;
        return k > 0 && slots[k].jobs.empty() && slots[k - 1].jobs.empty() &&
               slots[k].size == slots[k - 1].size;
    }

    void swap_jobs(size_t a, size_t b) {
        const auto wa = where_[a], wb = where_[b];
        unplace(a);
        unplace(b);
        place(a, wb.first, wb.second);
        place(b, wa.first, wa.second);
    }

    bool try_swap(size_t a, size_t b, bool across_gpus) {
        const auto wa = where_[a], wb = where_[b];
        if ((wa.first != wb.first && !across_gpus) || wa == wb || !usable(a, wb.first, wb.second) ||
            !usable(b, wa.first, wa.second))
            return false;
        const double before = score();
        swap_jobs(a, b);
        if (better(score(), before))
            return true;
        swap_jobs(a, b);
        return false;
    }

    // Recomputes GPU g's figures and the totals. A guide, cheaper than simulate_gpu: while two
    // or more partitions are busy every job counts as in a mix for its whole time (time beyond
    // start-ups ÷ the throughput correction, dynamic power × its own), all at the clock the power
    // limit sets for the partitions' average powers together. Candidates are scored by predict().
    void summarise(size_t g) {
        Gpu& gpu = gpus_[g];
        const bool mix = gpu.shape && gpu.shape->layout && gpu.busy >= 2;
        const double fd = mix ? p_.correction.dynamic_power : 1.0;
        double wanted_w = 0;
        for (const Slot& s : gpu.slots) {
            if (s.t > s.t_startup)
                wanted_w += (s.dyn - s.dyn_startup) / (s.t - s.t_startup);
        }
        const double clock = cap_clock_ratio(p_.idle_power_w, wanted_w * fd, p_.power_limit_w);
        const double slower = (mix ? 1.0 / p_.correction.throughput : 1.0) / clock;
        const double power = fd * (clock < 1 ? std::pow(clock, kCapClockExponent) : 1.0);
        const double old_makespan = gpu.makespan;
        dynamic_ -= gpu.dynamic;
        throughput_ -= gpu.throughput;
        gpu.makespan = gpu.dynamic = gpu.throughput = 0;
        for (const Slot& s : gpu.slots) {
            if (s.jobs.empty())
                continue;
            const double t = s.t_startup + (s.t - s.t_startup) * slower;
            gpu.makespan = std::max(gpu.makespan, t);
            gpu.dynamic += (s.dyn_startup + (s.dyn - s.dyn_startup) * slower) * power;
            gpu.throughput += s.work / t;
        }
        dynamic_ += gpu.dynamic;
        throughput_ += gpu.throughput;
        if (gpu.makespan >= makespan_) {
            makespan_ = gpu.makespan;
        } else if (old_makespan >= makespan_) {
            makespan_ = 0;
            for (const Gpu& other : gpus_)
                makespan_ = std::max(makespan_, other.makespan);
        }
    }

    const Problem& p_;
    const Tables& tab_;
    Objective o_;
    std::vector<Gpu> gpus_;
    std::vector<std::pair<size_t, size_t>> where_;  // job -> (gpu, slot)
    double makespan_ = 0, dynamic_ = 0, throughput_ = 0;
};

// How many GPUs a job may go to in the heuristic's moves: all of a few, else the soonest free.
constexpr size_t kCandidateGpus = 4;

auto any_gpu(const Heuristic& h) {
    return [&h](size_t j) {
        if (h.gpus() <= kCandidateGpus + 1) {
            std::vector<size_t> all(h.gpus());
            std::iota(all.begin(), all.end(), 0);
            return all;
        }
        return h.soonest_free(kCandidateGpus, h.gpu_of(j));
    };
}

// Every GPU gets `shape`; the jobs are placed longest first and improved by local search
// (passes 0: greedy only). False when some job cannot use the shape.
bool fill_uniform(Heuristic& h, const Shape& shape, const Tables& tab, int passes) {
    for (size_t g = 0; g < h.gpus(); ++g)
        h.set_shape(g, &shape);
    const auto choice = any_gpu(h);
    if (!h.greedy(tab.lpt, choice))
        return false;
    h.local_search(tab.lpt, choice, passes);
    return true;
}

// Tries every shape on each GPU in turn, keeping what helps. On a few GPUs its jobs are placed
// again on it or on the other GPU that frees soonest: a GPU may only gain from another shape once
// one of its jobs goes elsewhere, which no single move finds when that move alone does not change
// the score (a makespan set by another partition). On many GPUs they stay on it: there it
// scored 2.5× the plans (1,000 jobs on 100 GPUs, bench/bench_plan).
void improve_shapes(Heuristic& h, const std::vector<Shape>& shapes) {
    const bool few_gpus = h.gpus() <= kCandidateGpus + 1;
    for (size_t g = 0; g < h.gpus(); ++g) {
        const std::vector<size_t> jobs = h.jobs_on(g);
        const Shape* current = h.shape(g);
        auto on_g = [g](size_t) { return std::vector<size_t>{g}; };
        std::vector<size_t> g_and_soonest = {g};
        for (size_t other :
             few_gpus ? h.soonest_free(2, Heuristic::kNone) : std::vector<size_t>{}) {
            if (other != g && g_and_soonest.size() < 2)
                g_and_soonest.push_back(other);
        }
        auto on_g_or_others = [&g_and_soonest](size_t) { return g_and_soonest; };
        auto take_back = [&] {
            for (size_t j : jobs) {
                if (h.gpu_of(j) != Heuristic::kNone)
                    h.unplace(j);
            }
        };
        double best = h.score();
        const Shape* best_shape = current;
        std::vector<std::pair<size_t, std::pair<size_t, size_t>>> best_places;  // job, (gpu, slot)
        for (const Shape& s : shapes) {
            if (&s == current)
                continue;
            take_back();
            h.set_shape(g, &s);
            if (!h.greedy(jobs, on_g_or_others))
                continue;
            h.local_search(jobs, on_g_or_others, 2);
            if (better(h.score(), best)) {
                best = h.score();
                best_shape = &s;
                best_places.clear();
                for (size_t j : jobs)
                    best_places.emplace_back(j, h.place_of(j));
            }
        }
        take_back();
        h.set_shape(g, best_shape);
        if (best_shape == current) {
            if (!h.greedy(jobs, on_g))
                throw runtime_error("planner: a GPU's jobs no longer fit its layout");
            h.local_search(jobs, on_g, 2);
        } else {
            for (const auto& [j, at] : best_places)
                h.place(j, at.first, at.second);
        }
    }
}

}  // namespace

std::vector<std::pair<double, Candidate>> heuristic(const Problem& p, const Tables& tab,
                                                    const std::vector<Shape>& shapes, Objective o,
                                                    size_t gpus, size_t keep, uint64_t& evaluated) {
    Heuristic h(p, tab, o, gpus);
    std::vector<std::pair<double, Candidate>> best;
    std::vector<std::pair<double, size_t>> order;  // score, shape index
    for (size_t i = 0; i < shapes.size(); ++i) {
        if (fill_uniform(h, shapes[i], tab, gpus == 1 ? 3 : 0))
            order.emplace_back(h.score(), i);
    }
    std::stable_sort(order.begin(), order.end());
    for (size_t r = 0; r < order.size(); ++r) {
        // On several GPUs only the best few shapes get local search: it costs the most there.
        if (gpus > 1 && r < 3)
            fill_uniform(h, shapes[order[r].second], tab, 3);
        else
            fill_uniform(h, shapes[order[r].second], tab, gpus == 1 ? 3 : 0);
        Candidate c = candidate_of(p, h.plan());
        const double s = score(o, c.prediction);
        insert_sorted(best, s, std::move(c), order.size());
    }
    // From each of the best few uniform plans, let each GPU take another shape and move jobs.
    std::vector<Plan> starts;
    for (size_t i = 0; gpus > 1 && i < std::min<size_t>(kStarts, best.size()); ++i)
        starts.push_back(best[i].second.plan);
    for (const Plan& start : starts) {
        for (size_t g = 0; g < gpus; ++g) {
            const Shape* s = nullptr;
            for (const Shape& shape : shapes)
                s = shape.layout == start[g].layout ? &shape : s;
            h.set_shape(g, s);
        }
        for (size_t g = 0; g < gpus; ++g) {
            for (size_t k = 0; k < start[g].queues.size(); ++k) {
                for (size_t j : start[g].queues[k])
                    h.place(j, g, k);
            }
        }
        for (int round = 0; round < 3; ++round) {
            const double before = h.score();
            improve_shapes(h, shapes);
            h.local_search(tab.lpt, any_gpu(h), 3);
            if (!better(h.score(), before))
                break;
        }
        Candidate c = candidate_of(p, h.plan());
        const double s = score(o, c.prediction);
        if (std::none_of(best.begin(), best.end(),
                         [&](const auto& e) { return e.second.name == c.name; }))
            insert_sorted(best, s, std::move(c), best.size() + 1);
    }
    evaluated += h.scored;
    if (best.size() > keep)
        best.resize(keep);
    return best;
}

std::optional<Plan> plan_on_shape(const Problem& p, const Tables& tab, const Shape& shape,
                                  Objective o, size_t gpus) {
    Heuristic h(p, tab, o, gpus);
    if (!fill_uniform(h, shape, tab, 3))
        return std::nullopt;
    return h.plan();
}

Plan whole_gpu_plan(const Problem& p, const Tables& tab, Objective o, size_t gpus) {
    Heuristic h(p, tab, o, gpus);
    fill_uniform(h, whole_shape(p), tab, 3);
    return h.plan();
}

}  // namespace migscope::plan::search_parts
