// Branch and bound per layout on one GPU, the planner's exact search.
#include "plan/exhaustive_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace migscope::plan::search_parts {
namespace {

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

}  // namespace

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

}  // namespace migscope::plan::search_parts
