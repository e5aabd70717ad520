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

namespace migscope::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-9;  // relative improvement a move must bring

// A layout as the search sees it: partitions ordered so identical ones are adjacent, with their
// size indices. No layout: the whole GPU, one partition.
struct Shape {
    std::optional<mig::Layout> layout;
    std::vector<size_t> sizes;
};

Shape shape_of(const Problem& p, mig::Layout layout) {
    Shape s;
    std::stable_sort(layout.instances.begin(), layout.instances.end(),
                     [&](const mig::Instance& a, const mig::Instance& b) {
                         return p.size_index(a.profile) > p.size_index(b.profile);
                     });
    for (const mig::Instance& i : layout.instances)
        s.sizes.push_back(p.size_index(i.profile));
    s.layout = std::move(layout);
    return s;
}

Shape whole_shape(const Problem& p) {
    return Shape{std::nullopt, {p.whole()}};
}

std::vector<Shape> all_shapes(const Problem& p) {
    std::vector<Shape> shapes = {whole_shape(p)};
    for (mig::Layout& l : p.layouts())
        shapes.push_back(shape_of(p, std::move(l)));
    return shapes;
}

// Per job and size: time and dynamic energy alone, the job as a queue entry for simulate_gpu,
// usability, and the job's whole-GPU time (its work in seconds of whole-GPU time).
struct Tables {
    size_t sizes = 0;
    std::vector<double> t, dyn;                  // [job * sizes + size]
    std::vector<double> t_startup, dyn_startup;  // of t and dyn: a command's start-up
    std::vector<QueuedJob> queued;
    std::vector<char> usable;
    std::vector<double> whole_s;
    double work_s = 0;        // every job's whole-GPU time: the work
    std::vector<size_t> lpt;  // jobs by decreasing whole-GPU time

    explicit Tables(const Problem& p) : sizes(p.sizes.size()) {
        for (const JobModel& j : p.jobs) {
            for (const JobOnSize& on : j.on) {
                const double dyn_w = std::max(0.0, on.power_w - p.idle_power_w);
                t.push_back(on.time_s);
                dyn.push_back(dyn_w * on.time_s);
                queued.push_back({on.startup_s, on.time_s - on.startup_s, dyn_w, on.memory_pct});
                t_startup.push_back(on.startup_s);
                dyn_startup.push_back(dyn_w * on.startup_s);
                usable.push_back(on.usable);
            }
            whole_s.push_back(j.whole_gpu_s);
            work_s += whole_s.back();
        }
        lpt.resize(p.jobs.size());
        std::iota(lpt.begin(), lpt.end(), 0);
        std::stable_sort(lpt.begin(), lpt.end(),
                         [&](size_t a, size_t b) { return whole_s[a] > whole_s[b]; });
    }
    size_t at(size_t job, size_t size) const { return job * sizes + size; }
};

// plan::score of the figures these make: `aggregate` is the aggregate throughput, `work_s` every
// job's whole-GPU time.
double score_of(Objective o, double makespan_s, double dynamic_j, double aggregate, double work_s,
                double idle_w) {
    Prediction figures;
    figures.makespan_s = makespan_s;
    figures.energy_j = idle_w * makespan_s + dynamic_j;
    figures.throughput = makespan_s > 0 ? work_s / makespan_s : 0.0;
    figures.aggregate_throughput = aggregate;
    figures.edp_js = figures.energy_j * makespan_s;
    return score(o, figures);
}

bool better(double a, double b) {
    return b == kInf ? a < b : a < b - kEps * std::max(1.0, std::abs(b));
}

using Queues = std::vector<std::vector<size_t>>;

// Branch and bound over the assignments of every job to the partitions of one shape on one GPU,
// every partition busy (a plan with an idle partition is the same plan on a smaller layout).
// Each queue runs its jobs longest first; a complete assignment is scored by simulate_gpu, as
// predict() does; partial ones are cut by bounds on each job's least time and dynamic energy.
class Exhaustive {
  public:
    Exhaustive(const Problem& p, const Tables& tab, const Shape& shape, Objective o)
        : o_(o),
          idle_w_(p.idle_power_w),
          limit_w_(p.power_limit_w),
          correction_(p.correction),
          partitioned_(shape.layout.has_value()),
          work_s_(tab.work_s),
          n_(p.jobs.size()),
          k_(shape.sizes.size()),
          order_(tab.lpt) {
        const bool mix = shape.layout && k_ >= 2;
        const Correction& c = p.correction;
        t_.assign(n_ * k_, 0);
        d_.assign(n_ * k_, 0);
        ok_.assign(n_ * k_, 0);
        q_.assign(n_ * k_, {});
        w_ = tab.whole_s;
        // The lowest clock the power limit can set here: every partition running its most
        // power-hungry job.
        double most_w = 0;
        for (size_t k = 0; k < k_; ++k) {
            double partition_w = 0;
            for (size_t j = 0; j < n_; ++j) {
                const size_t a = tab.at(j, shape.sizes[k]);
                partition_w = std::max(partition_w, tab.usable[a] ? tab.queued[a].dynamic_w : 0);
            }
            most_w += partition_w;
        }
        const double clock = cap_clock_ratio(
            idle_w_, most_w * (mix ? std::max(1.0, c.dynamic_power) : 1.0), limit_w_);
        // A job's rest runs beside others (× the corrections) or alone, at a clock ≥ `clock`.
        const double fastest = mix ? std::max(1.0, c.throughput) : 1.0;
        const double least_startup_power =
            (mix ? std::min(1.0, c.dynamic_power) : 1.0) * std::pow(clock, kCapClockExponent);
        const double least_rest_energy =
            (mix ? std::min(1.0, c.dynamic_power / c.throughput) : 1.0) *
            std::pow(clock, kCapClockExponent - 1);
        for (size_t j = 0; j < n_; ++j) {
            for (size_t k = 0; k < k_; ++k) {
                const size_t a = tab.at(j, shape.sizes[k]);
                const QueuedJob& q = tab.queued[a];
                q_[j * k_ + k] = q;
                ok_[j * k_ + k] = tab.usable[a];
                t_[j * k_ + k] = q.startup_s + q.rest_s / fastest;
                d_[j * k_ + k] = q.dynamic_w *
                                 (q.startup_s * least_startup_power + q.rest_s * least_rest_energy);
            }
        }
        same_prev_.assign(k_, 0);
        for (size_t k = 1; k < k_; ++k)
            same_prev_[k] = shape.sizes[k] == shape.sizes[k - 1];
        // Suffix bounds over the job order: least time and dynamic energy of the jobs still to
        // place, the longest of their least times, and their best rate on each partition.
        rem_t_.assign(n_ + 1, 0);
        rem_d_.assign(n_ + 1, 0);
        rem_max_t_.assign(n_ + 1, 0);
        rem_rate_.assign((n_ + 1) * k_, 0);
        feasible_ = true;
        for (size_t i = n_; i-- > 0;) {
            const size_t j = order_[i];
            double min_t = kInf, min_d = kInf;
            for (size_t k = 0; k < k_; ++k) {
                rem_rate_[i * k_ + k] = rem_rate_[(i + 1) * k_ + k];
                if (!ok_[j * k_ + k])
                    continue;
                min_t = std::min(min_t, t_[j * k_ + k]);
                min_d = std::min(min_d, d_[j * k_ + k]);
                rem_rate_[i * k_ + k] = std::max(rem_rate_[i * k_ + k], w_[j] / t_[j * k_ + k]);
            }
            feasible_ = feasible_ && min_t < kInf;
            rem_t_[i] = rem_t_[i + 1] + min_t;
            rem_d_[i] = rem_d_[i + 1] + min_d;
            rem_max_t_[i] = std::max(rem_max_t_[i + 1], min_t);
        }
    }

    // The best assignment scoring below `threshold`, if any.
    std::optional<std::pair<double, Queues>> run(double threshold) {
        if (!feasible_ || k_ > n_)
            return std::nullopt;
        best_ = threshold;
        busy_.assign(k_, 0);
        work_.assign(k_, 0);
        count_.assign(k_, 0);
        assign_.assign(n_, 0);
        dyn_ = 0;
        empty_ = k_;
        found_ = false;
        dfs(0);
        if (!found_)
            return std::nullopt;
        Queues q(k_);
        for (size_t j : order_)
            q[best_assign_[j]].push_back(j);
        return std::make_pair(best_, q);
    }

    uint64_t evaluated = 0;

  private:
    void dfs(size_t idx) {
        if (empty_ > n_ - idx)
            return;
        if (idx == n_) {
            leaf();
            return;
        }
        if (bound(idx) >= best_)
            return;
        const size_t j = order_[idx];
        for (size_t k = 0; k < k_; ++k) {
            const size_t a = j * k_ + k;
            if (!ok_[a] || (count_[k] == 0 && same_prev_[k] && count_[k - 1] == 0))
                continue;
            busy_[k] += t_[a];
            work_[k] += w_[j];
            dyn_ += d_[a];
            empty_ -= count_[k]++ == 0;
            assign_[j] = k;
            dfs(idx + 1);
            empty_ += --count_[k] == 0;
            dyn_ -= d_[a];
            work_[k] -= w_[j];
            busy_[k] -= t_[a];
        }
    }

    void leaf() {
        ++evaluated;
        queues_.resize(k_);
        for (auto& q : queues_)
            q.clear();
        for (size_t j : order_)
            queues_[assign_[j]].push_back(q_[j * k_ + assign_[j]]);
        simulate_gpu(queues_, partitioned_, correction_, idle_w_, limit_w_, timeline_);
        double thr = 0;
        for (size_t k = 0; k < k_; ++k)
            thr += work_[k] / timeline_.end_s[k].back();
        const double s =
            score_of(o_, timeline_.makespan_s, timeline_.dynamic_j, thr, work_s_, idle_w_);
        if (s < best_) {
            best_ = s;
            best_assign_ = assign_;
            found_ = true;
        }
    }

    // A lower bound on the score of every completion of this partial assignment.
    // Each figure at its best: the aggregate at most every partition's best rate, the makespan at
    // least the longest queue, the mean load and the longest job left, the energy at least its
    // idle power over that plus the dynamic energy so far and left.
    double bound(size_t idx) const {
        double aggregate = 0, m = 0, sum = 0;
        for (size_t k = 0; k < k_; ++k) {
            const double rate = count_[k] ? work_[k] / busy_[k] : 0.0;
            aggregate += std::max(rate, rem_rate_[idx * k_ + k]);
            m = std::max(m, busy_[k]);
            sum += busy_[k];
        }
        m = std::max({m, (sum + rem_t_[idx]) / double(k_), rem_max_t_[idx]});
        return score_of(o_, m, dyn_ + rem_d_[idx], aggregate, work_s_, idle_w_);
    }

    Objective o_;
    double idle_w_;
    std::optional<double> limit_w_;
    Correction correction_;
    bool partitioned_;
    double work_s_;  // every job's whole-GPU time
    size_t n_, k_;
    std::vector<size_t> order_;
    // [job * partitions + partition]: least time, least dynamic energy, the job as simulated
    std::vector<double> t_, d_;
    std::vector<QueuedJob> q_;
    std::vector<double> w_;
    std::vector<char> ok_, same_prev_;
    std::vector<double> rem_t_, rem_d_, rem_max_t_, rem_rate_;
    bool feasible_ = true;
    // search state
    std::vector<double> busy_, work_;
    std::vector<size_t> count_, assign_, best_assign_;
    double dyn_ = 0, best_ = kInf;
    size_t empty_ = 0;
    bool found_ = false;
    std::vector<std::vector<QueuedJob>> queues_;  // the leaf's, reused
    GpuTimeline timeline_;
};

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

std::string name_of(const Plan& plan) {
    if (plan.size() == 1)
        return describe(plan.front());
    std::map<std::string, size_t> count;
    for (const GpuPlan& g : plan)
        ++count[describe(g)];
    std::string out;
    for (const auto& [name, n] : count)
        out += (out.empty() ? "" : " + ") + std::to_string(n) + "× " + name;
    return out;
}

Candidate candidate_of(const Problem& p, Plan plan) {
    Candidate c;
    c.name = name_of(plan);
    c.prediction = predict(p, plan);
    c.plan = std::move(plan);
    return c;
}

// Keeps candidates sorted by score, at most `keep`, earlier ones first among equals.
void insert_sorted(std::vector<std::pair<double, Candidate>>& list, double s, Candidate c,
                   size_t keep) {
    auto it = std::upper_bound(list.begin(), list.end(), s,
                               [](double v, const auto& e) { return v < e.first; });
    list.insert(it, {s, std::move(c)});
    if (list.size() > keep)
        list.pop_back();
}

// Each shape's best plan on one GPU, exhaustively, best `keep` kept.
std::vector<std::pair<double, Candidate>> exhaustive(const Problem& p, const Tables& tab,
                                                     const std::vector<Shape>& shapes, Objective o,
                                                     size_t keep, uint64_t& evaluated) {
    std::vector<std::pair<double, Candidate>> best;
    for (const Shape& s : shapes) {
        Exhaustive ex(p, tab, s, o);
        const double threshold = best.size() >= keep ? best.back().first : kInf;
        auto found = ex.run(threshold);
        evaluated += ex.evaluated;
        if (found)
            insert_sorted(best, found->first, candidate_of(p, {GpuPlan{s.layout, found->second}}),
                          keep);
    }
    return best;
}

// Each shape on every GPU (the best few improved by local search), then the best one's GPUs
// given other shapes where that helps, then jobs moved between GPUs.
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
    Heuristic h(p, tab, o.objective, o.gpus);
    if (!fill_uniform(h, full, tab, 3))
        return std::nullopt;
    return candidate_of(p, h.plan());
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

// Every candidate's interval, then the recommendation (Decision) moved to the front of the top.
void decide(const Problem& p, const SearchOptions& o, SearchResult& r) {
    const auto with_interval = [&](Candidate& c) {
        c.interval = predict_interval(p, c.plan, c.prediction, o.error);
    };
    for (Candidate& c : r.top)
        with_interval(c);
    for (Candidate& c : r.pareto)
        with_interval(c);
    for (Baseline& b : r.baselines) {
        if (b.candidate)
            with_interval(*b.candidate);
    }
    const Candidate& sequential = *r.baselines.front().candidate;
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
        const ErrorBand band = o.error ? gain_band(*o.error, o.objective) : ErrorBand{};
        if (band.known() && theirs != 0) {
            // The score ratio is the figure ratio (throughputs: both negated); a gain of k × it.
            const double ratio = mine / theirs, sign = theirs > 0 ? 1.0 : -1.0;
            const auto gain_at = [&](double k) { return sign * (1 - ratio * k); };
            d.gain_pairs = band.n;
            d.corrected_gain = gain_at(band.median);
            d.gain_range = {std::min(gain_at(band.lo), gain_at(band.hi)),
                            std::max(gain_at(band.lo), gain_at(band.hi))};
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
    } else if (d.gain_pairs > 0 ? d.gain_range.lo > 0
                                : d.partitioned.hi < d.not_partitioned.lo) {
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
    if (!o.error)
        return;
    const Candidate& chosen = r.top.front();
    const Bounds mine = score_bounds(o.objective, chosen.interval);
    for (size_t i = 1; i < r.top.size(); ++i) {
        const Candidate& c = r.top[i];
        if (!c.interval.known || !chosen.interval.known ||
            overlap(mine, score_bounds(o.objective, c.interval)))
            d.indistinguishable.push_back(c.name);
    }
}

}  // namespace

SearchResult search(const Problem& p, const SearchOptions& o) {
    if (o.gpus == 0)
        throw input_error("plan: --gpus must be at least 1");
    if (o.top_k == 0)
        throw input_error("plan: --top must be at least 1");
    const Tables tab(p);
    const std::vector<Shape> shapes = all_shapes(p);
    SearchResult r;
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
    SearchOptions fixed = o;
    auto baseline_of = [&](const std::string& name, const std::string& spec) {
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
        for (const mig::Instance& i : check.layout->instances) {
            if (std::none_of(p.sizes.begin(), p.sizes.end(),
                             [&](const Size& s) { return s.label == i.profile; })) {
                b.why_not = i.profile + ": SMs or memory unknown for " + p.model.key;
                return b;
            }
        }
        b.candidate = best_on_layout(p, *check.layout, fixed);
        if (!b.candidate)
            b.why_not = "some job can use none of its partitions (memory or min speed)";
        return b;
    };
    Baseline sequential{"sequential whole GPU", std::nullopt, ""};
    {
        Heuristic h(p, tab, o.objective, o.gpus);
        const Shape whole = whole_shape(p);
        fill_uniform(h, whole, tab, 3);
        sequential.candidate = candidate_of(p, h.plan());
    }
    r.baselines.push_back(std::move(sequential));
    // Every compute slice its own 1g instance, and mig-parted's all-balanced configuration (on
    // seven-slice GPUs 3g + 2g + 2 × 1g, on the four-slice A30 2g + 2 × 1g).
    const std::string all_1g = std::to_string(p.model.compute_slices) + "x1g";
    r.baselines.push_back(baseline_of(all_1g, p.model.find("1g") ? all_1g : ""));
    r.baselines.push_back(baseline_of("all-balanced", p.model.compute_slices == 7   ? "3g+2g+2x1g"
                                                      : p.model.compute_slices == 4 ? "2g+2x1g"
                                                                                    : ""));
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
    r.baselines.push_back(std::move(single));
    decide(p, o, r);
    return r;
}

}  // namespace migscope::plan
