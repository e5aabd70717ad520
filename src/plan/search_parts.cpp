// The search's shared parts: shapes, the per-job tables, scores and the candidate list.
#include "plan/search_parts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace migscope::plan::search_parts {
namespace {

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

}  // namespace

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

Tables::Tables(const Problem& p) : sizes(p.sizes.size()) {
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

}  // namespace migscope::plan::search_parts
