// The planner's answer and its verification as tables, JSON and mig-parted configs.
#include "report/plan_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "report/json_value.h"
#include "report/table.h"
#include "telemetry/idle_baseline.h"

namespace migscope::report {
namespace {

using nlohmann::json;

std::string kj(double j) {
    const double kilojoules = j / 1e3;
    // A rounding residue below the last digit prints as 0.00, never "-0.00".
    return fmt::format("{:.2f}", std::abs(kilojoules) < 0.005 ? 0.0 : kilojoules);
}

std::string signed_pct(double value, double base) {
    return base > 0 ? signed_change(100 * (value - base) / base, "%") : "-";
}

json bounds_json(const plan::Bounds& b) {
    return json::array({b.lo, b.hi});
}

json band_json(const plan::ErrorBand& b) {
    if (!b.known())
        return nullptr;
    return {{"lo", b.lo},
            {"hi", b.hi},
            {"coverage", b.coverage},
            {"residuals", b.n},
            {"group", b.group}};
}

// A prediction's interval: each figure's bounds, and whether every band came from residuals.
json interval_json(const plan::PredictionInterval& iv) {
    return {{"known", iv.known},
            {"unknown_why", iv.known ? json(nullptr) : json(iv.unknown_why)},
            {"makespan_s", bounds_json(iv.makespan_s)},
            {"energy_j", bounds_json(iv.energy_j)},
            {"throughput", bounds_json(iv.throughput)},
            {"aggregate_throughput", bounds_json(iv.aggregate_throughput)},
            {"edp_js", bounds_json(iv.edp_js)},
            {"dynamic_energy_band", band_json(iv.dynamic_energy)}};
}

json change_json(const plan::ChangeVsSequential& change) {
    return {{"predicted", change.predicted},
            {"range", change.range ? bounds_json(*change.range) : json(nullptr)},
            {"range_coverage", change.range ? json(change.range_coverage) : json(nullptr)},
            {"gain_group", change.range ? json(change.gain_group) : json(nullptr)}};
}

json prediction_json(const plan::Problem& p, const plan::Candidate& c) {
    const plan::Prediction& r = c.prediction;
    json jobs = json::array();
    for (size_t j = 0; j < p.jobs.size(); ++j) {
        const plan::JobPrediction& jp = r.jobs[j];
        jobs.push_back({{"job", p.jobs[j].request.name},
                        {"gpu", jp.gpu},
                        {"partition", jp.partition_label},
                        {"partition_index", jp.partition},
                        {"start_s", jp.start_s},
                        {"end_s", jp.end_s},
                        {"items_per_s", jp.items_per_s},
                        {"item_unit", p.jobs[j].profile->item_unit},
                        {"speed_fraction", jp.speed_fraction},
                        {"energy_j", jp.energy_j},
                        {"interpolated", jp.interpolated},
                        {"error_group", plan::speed_group(jp.situation)},
                        {"speed_band", j < c.interval.job_speed.size()
                                           ? band_json(c.interval.job_speed[j])
                                           : json(nullptr)}});
    }
    json gpus = json::array();
    for (const plan::GpuPlan& g : c.plan) {
        json partitions = json::array(), queues = json::array();
        if (g.layout) {
            for (const mig::Instance& i : g.layout->instances)
                partitions.push_back(i.profile + "@" + std::to_string(i.start));
        }
        for (const std::vector<size_t>& queue : g.queues) {
            json names = json::array();
            for (size_t j : queue)
                names.push_back(p.jobs[j].request.name);
            queues.push_back(names);
        }
        gpus.push_back({{"layout", plan::describe(g)},
                        {"partitioned", g.layout.has_value()},
                        {"partitions", partitions},  // none: the whole GPU, one queue
                        {"queues", queues}});        // job names in run order, per partition
    }
    return {{"name", c.name},
            {"partitioned", c.partitioned()},
            {"gpus", gpus},
            {"makespan_s", r.makespan_s},
            {"energy_j", r.energy_j},
            {"idle_energy_j", r.idle_energy_j},
            {"throughput", r.throughput},
            {"aggregate_throughput", r.aggregate_throughput},
            {"edp_js", r.edp_js},
            {"corrected", r.corrected},
            {"interval", interval_json(c.interval)},
            {"energy_vs_sequential", change_json(c.energy_vs_sequential)},
            {"makespan_vs_sequential", change_json(c.makespan_vs_sequential)},
            {"jobs", jobs}};
}

// A figure with its interval: "12.18 (11.90-12.61)", "12.18 (?)" where some band is unknown, the
// figure alone with no residuals at all. `scale` divides all three.
std::string with_interval(double value, const plan::Bounds& b, const plan::PredictionInterval& iv,
                          bool residuals, int digits, double scale = 1) {
    const std::string v = fmt::format("{:.{}f}", value / scale, digits);
    if (!residuals)
        return v;
    if (!iv.known)
        return v + " (?)";
    return fmt::format("{} ({:.{}f}-{:.{}f})", v, b.lo / scale, digits, b.hi / scale, digits);
}

// "(+6.3 to +14.0%)": a change's range, as fractions.
std::string change_range_text(const plan::Bounds& range) {
    return fmt::format("({} to {})", signed_change(100 * range.lo, ""),
                       signed_change(100 * range.hi, "%"));
}

// A candidate's change against the sequential baseline: "+6.8% (+6.3 to +14.0%)", its measured
// gains' range; "(?)" for a partitioned plan whose gains are too few; the point alone with no
// residuals at all, and for a plan that is not partitioned (the baseline's own figure).
std::string change_text(const plan::ChangeVsSequential& change, const plan::Candidate& c,
                        bool residuals) {
    const std::string point = signed_change(100 * change.predicted, "%");
    if (change.range)
        return point + " " + change_range_text(*change.range);
    return residuals && c.partitioned() ? point + " (?)" : point;
}

std::string objective_interval_text(plan::Objective o, const plan::Bounds& score) {
    const plan::Bounds b = plan::figure_bounds(o, score);
    const plan::ObjectiveInfo& info = plan::info(o);
    return fmt::format("{:.{}f}-{:.{}f}{}{}", b.lo / info.unit_scale, info.digits,
                       b.hi / info.unit_scale, info.digits, info.unit.empty() ? "" : " ",
                       info.unit);
}

// Jobs whose profile records the memory utilisation on some size they can run on.
size_t jobs_with_memory_utilization(const plan::Problem& p) {
    return std::count_if(p.jobs.begin(), p.jobs.end(), [](const plan::JobModel& j) {
        return std::any_of(j.on.begin(), j.on.end(), [](const plan::JobOnSize& on) {
            return on.usable && on.memory_pct > 0;
        });
    });
}

// One line per candidate: energy, makespan, throughput and EDP, each with its interval, and the
// energy against a reference.
void candidates_table(const std::vector<std::pair<std::string, const plan::Candidate*>>& rows,
                      bool residuals, std::ostream& out) {
    TextTable t({{"", Align::kLeft},
                 {"layout", Align::kLeft},
                 {"energy kJ", Align::kRight},
                 {"vs sequential", Align::kRight},
                 {"makespan s", Align::kRight},
                 {"throughput", Align::kRight},
                 {"EDP MJ·s", Align::kRight}});
    for (const auto& [label, c] : rows) {
        const plan::Prediction& r = c->prediction;
        const plan::PredictionInterval& iv = c->interval;
        t.add_row({label, c->name, with_interval(r.energy_j, iv.energy_j, iv, residuals, 2, 1e3),
                   change_text(c->energy_vs_sequential, *c, residuals),
                   with_interval(r.makespan_s, iv.makespan_s, iv, residuals, 1),
                   with_interval(r.throughput, iv.throughput, iv, residuals, 2),
                   with_interval(r.edp_js, iv.edp_js, iv, residuals, 2, 1e6)});
    }
    t.print(out);
}

}  // namespace

// The plan as a mig-parted config: one entry per distinct layout, with its GPUs.
mig::MigPartedConfig plan_mig_parted_config(const std::string& name, const plan::Plan& plan) {
    mig::MigPartedConfig config{name, {}};
    std::vector<std::string> keys;
    for (size_t g = 0; g < plan.size(); ++g) {
        const std::string key = plan::describe(plan[g]);
        auto it = std::find(keys.begin(), keys.end(), key);
        if (it == keys.end()) {
            keys.push_back(key);
            mig::MigPartedEntry e;
            e.devices = std::vector<unsigned>{};
            e.mig_enabled = plan[g].layout.has_value();
            if (plan[g].layout) {
                for (const mig::Instance& i : plan[g].layout->instances)
                    ++e.mig_devices[i.profile];
            }
            config.entries.push_back(e);
            it = keys.end() - 1;
        }
        config.entries[it - keys.begin()].devices->push_back(static_cast<unsigned>(g));
    }
    if (config.entries.size() == 1)
        config.entries[0].devices.reset();  // every GPU the same: "all"
    return config;
}

namespace {

// The user's plan (--layout) against the recommendation, and whether the model can tell them
// apart.
void print_given(const PlanReport& report, std::ostream& out) {
    const plan::SearchResult& r = report.result;
    const plan::GivenPlan& g = *r.given;
    const plan::Objective o = plan::parse_objective(report.objective);
    const plan::Candidate &mine = g.candidate, &chosen = r.top.front();
    std::string why;
    if (report.model_error_origin.empty())
        why = "points compared: no residuals of the model";
    else if (!mine.interval.known || !chosen.interval.known)
        why = "the model cannot tell the two apart: an interval is unknown";
    else
        why = fmt::format("{} (yours {}, the recommendation's {})",
                          g.indistinguishable ? "the model cannot tell the two apart"
                                              : "clear of the model's error",
                          objective_interval_text(o, plan::score_bounds(o, mine.interval)),
                          objective_interval_text(o, plan::score_bounds(o, chosen.interval)));
    out << fmt::format("Your layout, {}: {:.1f} % {} the recommendation for {}; {}.\n\n", mine.name,
                       100 * std::abs(g.vs_recommended),
                       g.vs_recommended >= 0 ? "better than" : "worse than", report.objective, why);
}

// The recommendation and why (plan::Decision): a partitioned plan only when its interval for the
// objective is clear of not partitioning's.
void print_recommendation(const PlanReport& report, std::ostream& out) {
    const plan::SearchResult& r = report.result;
    const plan::Decision& d = r.decision;
    const plan::Objective o = plan::parse_objective(report.objective);
    const std::string gain = fmt::format("{:.1f} %", 100 * d.gain);
    const auto intervals = [&] {
        return fmt::format("{} {}, not partitioning {}", d.best_partitioned,
                           objective_interval_text(o, d.partitioned),
                           objective_interval_text(o, d.not_partitioned));
    };
    // The gain as the model's measured gains correct it, and their range.
    const size_t slash = d.gain_group.find('/');
    const std::string which =
        slash == std::string::npos ? "" : " of " + d.gain_group.substr(slash + 1) + " partitions";
    const std::string corrected = fmt::format(
        "{:.1f} % after the model's measured gains on {} verified plans{} (their {:.0f} % range: "
        "{:.1f} to {:.1f} %)",
        100 * d.corrected_gain, d.gain_pairs, which, std::floor(100 * d.gain_range_coverage + 1e-6),
        100 * d.gain_range.lo, 100 * d.gain_range.hi);
    switch (d.verdict) {
        case plan::Verdict::kClearGain:
            out << "Recommendation: " << r.top.front().name << "\n  It beats not partitioning by "
                << gain << " predicted for " << report.objective;
            if (d.gain_pairs > 0)
                out << ", " << corrected << ": clear of 0 (" << intervals() << ").\n";
            else
                out << ", more than the model's error (" << intervals() << ").\n";
            break;
        case plan::Verdict::kInsideError: {
            if (d.gain_pairs > 0) {
                out << "Recommendation: do not partition: the best partitioned plan's gain ("
                    << gain << " predicted, " << corrected
                    << ") is not clear of the model's error (" << intervals() << ").\n";
                break;
            }
            const plan::Bounds b = d.partitioned;
            const double point = (b.lo + b.hi) / 2;
            const double half = point != 0 ? (b.hi - b.lo) / 2 / std::abs(point) : 0.0;
            out << "Recommendation: do not partition: the best partitioned plan's gain (" << gain
                << ") is inside the model's error (± " << fmt::format("{:.1f} %", 100 * half)
                << "): " << intervals() << ".\n";
            break;
        }
        case plan::Verdict::kErrorUnknown:
            out << "Recommendation: do not partition: the best partitioned plan ("
                << d.best_partitioned << ", " << gain << " better predicted) has no known error: "
                << d.unknown_why << ".\n";
            break;
        case plan::Verdict::kNotPartitioned:
        case plan::Verdict::kPointsOnly:
            if (r.sequential_wins())
                out << "Recommendation: do not partition. Run the jobs one after another on the "
                       "whole GPU: no layout beats it for "
                    << report.objective << ".\n";
            else
                out << "Recommendation: " << r.top.front().name << "\n";
            if (d.verdict == plan::Verdict::kPointsOnly)
                out << "  (no residuals of the model: predicted points are compared without "
                       "their error)\n";
            break;
    }
    if (!d.indistinguishable.empty()) {
        out << "  Within the model's error "
            << (d.indistinguishable.size() == 1
                    ? std::string("this plan is")
                    : fmt::format("these {} plans are", d.indistinguishable.size()))
            << " indistinguishable from it: " << text::join(d.indistinguishable, "; ") << ".\n";
    }
}

// What was planned and from what: the jobs, the profiles' provenance, the model error, the search.
void print_plan_header(const PlanReport& report, std::ostream& out) {
    const plan::Problem& p = report.problem;
    const plan::SearchResult& r = report.result;
    const plan::ProfileSet& set = report.profiles;
    out << "migscope plan: " << p.jobs.size() << " jobs on " << report.gpus << " × "
        << p.model.description << ", objective " << report.objective << "\n";
    out << "profiles: " << report.profiles_origin << " (measured " << set.provenance.measured_from
        << " to " << set.provenance.measured_to << " on " << set.provenance.gpu << ", driver "
        << set.provenance.driver << ", steps "
        << (set.provenance.steps.empty() ? "not recorded" : set.provenance.steps) << "); idle "
        << fmt::format("{:.0f}", p.idle_power_w) << " W (" << telemetry::state_text(set.idle_state)
        << "); "
        << (p.power_limit_w ? fmt::format("board power limit {:.0f} W", *p.power_limit_w)
                            : std::string("board power limit unknown (the cap is not modelled)"))
        << "; corrections: throughput " << fmt::format("{:.2f}", p.correction.throughput)
        << ", dynamic power " << fmt::format("{:.2f}", p.correction.dynamic_power) << " (from "
        << p.correction.mixes << " measured mixes); memory utilisation in "
        << jobs_with_memory_utilization(p) << " of " << p.jobs.size()
        << " jobs' profiles (the memory bandwidth's sharing sees only those)\n";
    out << "model error: "
        << (report.model_error_origin.empty() ? std::string("none given (no intervals)")
                                              : report.model_error_origin)
        << "\n";
    out << "search: " << plan::to_string(r.method) << ", " << r.layouts
        << " layouts (the whole GPU included), " << r.evaluated << " plans scored, "
        << fmt::format("{:.1f}", report.elapsed_ms) << " ms\n\n";
}

// The recommended plan's totals, each job's line and, when partitioned, its mig-parted config.
void print_recommended(const PlanReport& report, bool residuals, std::ostream& out) {
    const plan::Problem& p = report.problem;
    const plan::Candidate& best = report.result.top.front();
    const plan::Prediction& b = best.prediction;
    const plan::PredictionInterval& iv = best.interval;
    out << fmt::format(
        "  energy {} kJ ({} vs sequential), makespan {} s ({}), throughput {} (sequential "
        "{:.2f}), aggregate throughput {}\n\n",
        with_interval(b.energy_j, iv.energy_j, iv, residuals, 2, 1e3),
        change_text(best.energy_vs_sequential, best, residuals),
        with_interval(b.makespan_s, iv.makespan_s, iv, residuals, 1),
        change_text(best.makespan_vs_sequential, best, residuals),
        with_interval(b.throughput, iv.throughput, iv, residuals, 2),
        report.result.baselines.front().candidate->prediction.throughput,
        with_interval(b.aggregate_throughput, iv.aggregate_throughput, iv, residuals, 2));
    TextTable jobs({{"job", Align::kLeft},
                    {"GPU", Align::kRight},
                    {"partition", Align::kLeft},
                    {"start s", Align::kRight},
                    {"end s", Align::kRight},
                    {"items/s", Align::kRight},
                    {"speed", Align::kRight},
                    {"energy kJ", Align::kRight}});
    for (size_t j = 0; j < p.jobs.size(); ++j) {
        const plan::JobPrediction& jp = b.jobs[j];
        jobs.add_row({p.jobs[j].request.name, std::to_string(jp.gpu),
                      jp.partition_label + (jp.interpolated ? " (interpolated)" : ""),
                      fmt::format("{:.1f}", jp.start_s), fmt::format("{:.1f}", jp.end_s),
                      p.jobs[j].profile->external()  // a command: runs/s, a small number
                          ? fmt::format("{:.3g} runs", jp.items_per_s)
                          : fmt::format("{:.0f} {}", jp.items_per_s, p.jobs[j].profile->item_unit),
                      fmt::format("{:.2f}", jp.speed_fraction), kj(jp.energy_j)});
    }
    jobs.print(out);
    out << "  charged to no job (GPUs done before the makespan): " << kj(b.idle_energy_j)
        << " kJ; per job as `migscope run` attributes it: idle by partition size, the job's "
           "marginal dynamic energy, a time share of the rest\n\n";
    if (best.partitioned()) {
        out << "mig-parted config:\n"
            << mig::write_mig_parted(std::vector<mig::MigPartedConfig>{
                   plan_mig_parted_config("migscope-plan", best.plan)})
            << "\n";
    }
}

// The recommended plan beside the baselines, then the top plans and the Pareto front.
void print_candidate_tables(const PlanReport& report, bool residuals, std::ostream& out) {
    const plan::SearchResult& r = report.result;
    const plan::Candidate& best = r.top.front();
    out << "Baselines:\n";
    std::vector<std::pair<std::string, const plan::Candidate*>> rows;
    rows.emplace_back("recommended", &best);
    for (const plan::Baseline& base : r.baselines) {
        if (base.candidate)
            rows.emplace_back(base.name, &*base.candidate);
    }
    if (r.given)
        rows.emplace_back("your layout", &r.given->candidate);
    candidates_table(rows, residuals, out);
    for (const plan::Baseline& base : r.baselines) {
        if (!base.candidate)
            out << "  " << base.name << ": not possible: " << base.why_not << "\n";
    }
    out << "\nTop " << r.top.size() << ":\n";
    rows.clear();
    for (size_t i = 0; i < r.top.size(); ++i)
        rows.emplace_back(std::to_string(i + 1), &r.top[i]);
    candidates_table(rows, residuals, out);
    out << "\nPareto front, energy vs throughput (each layout's best plans for energy and for "
           "throughput):\n";
    rows.clear();
    for (const plan::Candidate& c : r.pareto)
        rows.emplace_back("", &c);
    candidates_table(rows, residuals, out);
}

}  // namespace

void print_plan(const PlanReport& report, std::ostream& out) {
    const plan::Problem& p = report.problem;
    const bool residuals = !report.model_error_origin.empty();
    print_plan_header(report, out);
    print_recommendation(report, out);
    print_recommended(report, residuals, out);
    if (report.result.given)
        print_given(report, out);
    print_candidate_tables(report, residuals, out);
    if (!p.notes.empty() || report.result.top.front().prediction.corrected) {
        out << "\nnotes:\n";
        for (const std::string& n : p.notes)
            out << "  " << n << "\n";
    }
    out << "Model: each job's measured speed and board power alone on its partition size; idle "
           "power for the whole GPU until the last partition frees; SM partitions emulate MIG "
           "(no L2/bandwidth isolation). "
        << (residuals
                ? "Figures in brackets are their interval: the model's measured residuals ("
                      + report.model_error_origin +
                      ") by what drives them, and the profiles' run-to-run range; (?) where a "
                      "group has too few residuals. "
                : "No residuals of the model were given (--model-error): the figures are points "
                  "without their error. ")
        << "See docs/planner.md.\n";
}

namespace {

// The answer to "should I partition?" with the intervals it rests on.
json decision_json(const plan::Decision& d, plan::Objective objective) {
    const bool none = d.best_partitioned.empty();
    return {
        {"verdict", plan::to_string(d.verdict)},
        {"best_partitioned", none ? json(nullptr) : json(d.best_partitioned)},
        {"gain", none ? json(nullptr) : json(d.gain)},
        {"partitioned_interval",
         none ? json(nullptr) : bounds_json(plan::figure_bounds(objective, d.partitioned))},
        {"not_partitioned_interval",
         none ? json(nullptr) : bounds_json(plan::figure_bounds(objective, d.not_partitioned))},
        {"gain_pairs", d.gain_pairs},
        {"gain_group", d.gain_pairs == 0 ? json(nullptr) : json(d.gain_group)},
        {"corrected_gain", d.gain_pairs == 0 ? json(nullptr) : json(d.corrected_gain)},
        {"gain_range", d.gain_pairs == 0 ? json(nullptr) : bounds_json(d.gain_range)},
        {"gain_range_coverage", d.gain_pairs == 0 ? json(nullptr) : json(d.gain_range_coverage)},
        {"unknown_why", d.unknown_why.empty() ? json(nullptr) : json(d.unknown_why)},
        {"indistinguishable", d.indistinguishable}};
}

}  // namespace

json plan_json(const PlanReport& report) {
    const plan::Problem& p = report.problem;
    const plan::SearchResult& r = report.result;
    const plan::ProfileSet& set = report.profiles;
    json doc;
    doc["objective"] = report.objective;
    doc["gpu_model"] = p.model.key;
    doc["gpus"] = report.gpus;
    doc["backend"] = report.backend;
    doc["jobs"] = json::array();  // what `migscope run --plan` runs
    for (const plan::JobModel& j : p.jobs) {
        const bool command = j.profile->external();
        doc["jobs"].push_back({{"name", j.request.name},
                               {"workload", command ? json(nullptr) : json(j.request.workload)},
                               {"command", j.request.command},
                               {"mode", j.request.mode},
                               {"batch", command ? json(nullptr) : json(j.profile->batch)},
                               {"work_steps", maybe(j.request.work_steps)},
                               {"work_whole_gpu_s", maybe(j.request.work_whole_gpu_s)}});
    }
    doc["profiles"] = {
        {"source", report.profiles_origin},
        {"measured_from", set.provenance.measured_from},
        {"measured_to", set.provenance.measured_to},
        {"gpu", set.provenance.gpu},
        {"driver", set.provenance.driver},
        {"steps", set.provenance.steps.empty() ? json(nullptr) : json(set.provenance.steps)},
        {"idle_power_w", p.idle_power_w},
        {"power_limit_w", p.power_limit_w ? json(*p.power_limit_w) : json(nullptr)},
        {"idle_state", set.idle_state.empty() ? json(nullptr) : json(set.idle_state)},
        {"correction",
         {{"throughput", p.correction.throughput},
          {"dynamic_power", p.correction.dynamic_power},
          {"mixes", p.correction.mixes}}}};
    doc["search"] = {{"method", plan::to_string(r.method)},
                     {"layouts", r.layouts},
                     {"plans_scored", r.evaluated},
                     {"elapsed_ms", report.elapsed_ms}};
    doc["model_error"] = report.model_error_origin.empty() ? json(nullptr)
                                                          : json(report.model_error_origin);
    doc["decision"] = decision_json(r.decision, plan::parse_objective(report.objective));
    doc["sequential_wins"] = r.sequential_wins();
    doc["recommended"] = prediction_json(p, r.top.front());
    doc["mig_parted"] = mig::write_mig_parted(std::vector<mig::MigPartedConfig>{
        plan_mig_parted_config("migscope-plan", r.top.front().plan)});
    doc["baselines"] = json::array();
    for (const plan::Baseline& b : r.baselines) {
        doc["baselines"].push_back(
            {{"name", b.name},
             {"plan", b.candidate ? prediction_json(p, *b.candidate) : json(nullptr)},
             {"why_not", b.why_not}});
    }
    doc["given"] = r.given ? json{{"plan", prediction_json(p, r.given->candidate)},
                                  {"vs_recommended", r.given->vs_recommended},
                                  {"indistinguishable", r.given->indistinguishable}}
                           : json(nullptr);
    doc["top"] = json::array();
    for (const plan::Candidate& c : r.top)
        doc["top"].push_back(prediction_json(p, c));
    doc["pareto"] = json::array();
    for (const plan::Candidate& c : r.pareto)
        doc["pareto"].push_back(prediction_json(p, c));
    doc["notes"] = p.notes;
    return doc;
}

namespace {

// Several GPUs: each one's predicted and measured makespan and energy.
json gpu_checks_json(const std::vector<plan::GpuCheck>& gpus) {
    json out = json::array();
    for (const plan::GpuCheck& g : gpus) {
        json entry = {
            {"gpu", g.gpu},
            {"predicted",
             {{"makespan_s", g.predicted_makespan_s}, {"energy_j", g.predicted_energy_j}}},
            {"measured", nullptr}};
        if (g.measured)
            entry["measured"] = {{"makespan_s", g.measured->makespan_s},
                                 {"energy_j", maybe(g.measured->energy_j)},
                                 {"failure", g.measured->failure}};
        out.push_back(entry);
    }
    return out;
}

void print_gpu_checks(const std::vector<plan::GpuCheck>& gpus, std::ostream& out) {
    for (const plan::GpuCheck& g : gpus) {
        out << fmt::format("    GPU {}: makespan {:.1f} s predicted", g.gpu,
                           g.predicted_makespan_s);
        if (!g.measured) {
            out << ", not run (no jobs)\n";
            continue;
        }
        const plan::MeasuredGpu& m = *g.measured;
        out << fmt::format(", {:.1f} s measured ({}); energy {} kJ predicted (its jobs'), ",
                           m.makespan_s, signed_pct(m.makespan_s, g.predicted_makespan_s),
                           kj(g.predicted_energy_j));
        out << (m.energy_j ? fmt::format("{} kJ measured ({})", kj(*m.energy_j),
                                         signed_pct(*m.energy_j, g.predicted_energy_j))
                           : std::string("not measured"))
            << (m.failure.empty() ? "" : "; failed: " + m.failure) << "\n";
    }
}

// What the measured board's idle power, against the profiles', adds to the recommendation's
// energy over its predicted makespan, as a share of its predicted energy; none without both.
std::optional<double> idle_energy_share(const plan::Verification& v) {
    if (!v.board_idle || v.candidates.empty() || !(v.candidates.front().predicted.energy_j > 0))
        return std::nullopt;
    const plan::Prediction& r = v.candidates.front().predicted;
    return (v.board_idle->measured_w - v.board_idle->profiles_w) * r.makespan_s / r.energy_j;
}

}  // namespace

json verification_json(const plan::Problem& p, const plan::Verification& v) {
    json entries = json::array();
    for (const plan::VerifiedCandidate& c : v.candidates) {
        json entry = {{"name", c.name},
                      {"baseline", c.baseline},
                      {"given", c.given},
                      {"predicted",
                       {{"makespan_s", c.predicted.makespan_s},
                        {"energy_j", c.predicted.energy_j},
                        {"throughput", c.predicted.throughput},
                        {"aggregate_throughput", c.predicted.aggregate_throughput},
                        {"edp_js", c.predicted.edp_js},
                        {"interval", interval_json(c.interval)},
                        {"energy_vs_sequential", change_json(c.energy_vs_sequential)},
                        {"makespan_vs_sequential", change_json(c.makespan_vs_sequential)}}}};
        if (!c.measured) {
            entry["skipped"] = c.skipped;
            entries.push_back(entry);
            continue;
        }
        const plan::MeasuredRun& m = *c.measured;
        const plan::PredictionInterval& iv = c.interval;
        // Each measured figure, and whether it fell inside its predicted interval; none where a
        // job did not finish its work.
        json figures = {{"complete", c.complete}}, inside = json::object();
        const auto add = [&](const char* key, const plan::Bounds& b, std::optional<double> v) {
            if (!c.complete)
                v.reset();
            figures[key] = v ? json(*v) : json(nullptr);
            inside[key] = v ? json(b.contains(*v)) : json(nullptr);
        };
        add("makespan_s", iv.makespan_s, m.makespan_s);
        add("energy_j", iv.energy_j, m.energy_j);
        add("throughput", iv.throughput, c.throughput);
        add("aggregate_throughput", iv.aggregate_throughput, c.aggregate_throughput);
        add("edp_js", iv.edp_js,
            m.energy_j ? std::optional<double>(*m.energy_j * m.makespan_s) : std::nullopt);
        // Against the sequential baseline measured beside it, inside the measured gains' range.
        const auto add_change = [&](const char* key, const plan::ChangeVsSequential& predicted,
                                    const std::optional<double>& measured) {
            figures[key] = maybe(measured);
            inside[key] = measured && predicted.range ? json(predicted.range->contains(*measured))
                                                      : json(nullptr);
        };
        add_change("energy_vs_sequential", c.energy_vs_sequential, c.measured_energy_vs_sequential);
        add_change("makespan_vs_sequential", c.makespan_vs_sequential,
                   c.measured_makespan_vs_sequential);
        figures["inside"] = inside;
        entry["measured"] = figures;
        if (!c.gpus.empty())
            entry["gpus"] = gpu_checks_json(c.gpus);
        entry["wall_s"] = m.wall_s;
        entry["from_db"] = m.from_earlier_run;
        entry["jobs"] = json::array();
        for (size_t k = 0; k < c.order.size() && k < m.jobs.size(); ++k) {
            const size_t j = c.order[k];
            entry["jobs"].push_back({{"job", p.jobs[j].request.name},
                                     {"predicted_items_per_s", c.predicted.jobs[j].items_per_s},
                                     {"measured_items_per_s", maybe(m.jobs[k].items_per_s)},
                                     {"predicted_end_s", c.predicted.jobs[j].end_s},
                                     {"measured_end_s", k < c.end_s.size() ? maybe(c.end_s[k]) : json()},
                                     {"status", m.jobs[k].status},
                                     {"message", m.jobs[k].message}});
        }
        entries.push_back(entry);
    }
    json summary = {{"objective", plan::to_string(v.objective)},
                    {"candidates", v.candidates.size()},
                    {"runs_wall_s", v.runs_wall_s}};
    if (v.recommended_gap) {
        summary["best_measured"] = v.candidates[*v.best_measured].name;
        summary["recommended_gap"] = *v.recommended_gap;
    }
    json board = nullptr;
    if (v.board_idle)
        board = {{"measured_w", v.board_idle->measured_w},
                 {"runs", v.board_idle->runs},
                 {"profiles_w", v.board_idle->profiles_w},
                 {"state", v.board_idle->state},
                 {"recommended_energy_share", maybe(idle_energy_share(v))}};
    return {{"candidates", entries}, {"summary", summary}, {"board_idle", board}};
}

namespace {

// "energy +8.1% measured, +6.8% (+6.3 to +13.9%) predicted, inside": one figure of a
// partitioned candidate against the sequential baseline measured beside it; "" unmeasured.
std::string change_verified(const char* figure, const plan::ChangeVsSequential& predicted,
                            const std::optional<double>& measured) {
    if (!measured)
        return "";
    std::string text =
        fmt::format("{} {} measured, {} predicted", figure, signed_change(100 * *measured, "%"),
                    signed_change(100 * predicted.predicted, "%"));
    if (predicted.range) {
        text += " " + change_range_text(*predicted.range) + ", " +
                (predicted.range->contains(*measured) ? "inside" : "outside");
    }
    return text;
}

// A partitioned candidate's energy and makespan against the measured sequential baseline.
void print_changes_verified(const plan::VerifiedCandidate& c, std::ostream& out) {
    const std::string energy =
        change_verified("energy", c.energy_vs_sequential, c.measured_energy_vs_sequential);
    const std::string makespan =
        change_verified("makespan", c.makespan_vs_sequential, c.measured_makespan_vs_sequential);
    if (energy.empty() && makespan.empty())
        return;
    out << "    against the sequential baseline measured beside it: " << energy
        << (energy.empty() || makespan.empty() ? "" : "; ") << makespan << "\n";
}

// A measured candidate's makespan, energy and throughput, predicted (with its interval) against
// measured; a candidate whose window closed without a job's work has none to compare.
void print_figures_verified(const plan::VerifiedCandidate& c, std::ostream& out) {
    if (!c.complete) {
        out << fmt::format(
            "  {}: not compared: a job did not finish its work (makespan {:.1f} s, energy {} kJ "
            "predicted)\n",
            c.name, c.predicted.makespan_s, kj(c.predicted.energy_j));
        return;
    }
    const plan::MeasuredRun& m = *c.measured;
    const plan::PredictionInterval& iv = c.interval;
    // "inside" / "outside" its interval, or nothing where no interval is known.
    const auto where = [&](const plan::Bounds& b, double v) {
        return iv.known ? (b.contains(v) ? ", inside" : ", outside") : "";
    };
    const auto bounds = [&](const plan::Bounds& b, int digits, double scale) {
        return iv.known
                   ? fmt::format(" ({:.{}f}-{:.{}f})", b.lo / scale, digits, b.hi / scale, digits)
                   : std::string();
    };
    out << fmt::format("  {}{}: makespan {:.1f} s predicted{}, {:.1f} s measured ({}{}); ", c.name,
                       c.baseline ? " (the sequential baseline)"
                       : c.given  ? " (your layout)"
                                  : "",
                       c.predicted.makespan_s, bounds(iv.makespan_s, 1, 1), m.makespan_s,
                       signed_pct(m.makespan_s, c.predicted.makespan_s),
                       where(iv.makespan_s, m.makespan_s));
    if (m.energy_j)
        out << fmt::format("energy {} kJ predicted{}, {} kJ measured ({}{}); ",
                           kj(c.predicted.energy_j), bounds(iv.energy_j, 2, 1e3), kj(*m.energy_j),
                           signed_pct(*m.energy_j, c.predicted.energy_j),
                           where(iv.energy_j, *m.energy_j));
    else
        out << "energy not measured; ";
    if (c.throughput)
        out << fmt::format("throughput {:.2f} predicted{}, {:.2f} measured{}\n",
                           c.predicted.throughput, bounds(iv.throughput, 2, 1), *c.throughput,
                           where(iv.throughput, *c.throughput));
    else
        out << "throughput not measured\n";
}

// Each candidate's predicted against measured, then the recommendation against the best.
void print_candidates_verified(const plan::Problem& p, const plan::Verification& v,
                               std::ostream& out) {
    for (const plan::VerifiedCandidate& c : v.candidates) {
        if (!c.measured) {
            out << "  " << c.name << ": not verified: " << c.skipped << "\n";
            continue;
        }
        const plan::MeasuredRun& m = *c.measured;
        print_figures_verified(c, out);
        print_gpu_checks(c.gpus, out);
        print_changes_verified(c, out);
        for (size_t k = 0; k < c.order.size() && k < m.jobs.size(); ++k) {
            const plan::MeasuredJob& mj = m.jobs[k];
            const plan::JobModel& job = p.jobs[c.order[k]];
            const plan::JobPrediction& predicted = c.predicted.jobs[c.order[k]];
            // A command's speed is its run: its end says it; a built-in job's items/s too.
            const std::string speed =
                job.profile->external()
                    ? std::string()
                    : fmt::format("; {:.0f} {}/s predicted, {} measured", predicted.items_per_s,
                                  job.profile->item_unit,
                                  mj.items_per_s ? fmt::format("{:.0f}", *mj.items_per_s)
                                                 : std::string("-"));
            out << fmt::format(
                "    {}: ends at {:.1f} s predicted, {} measured{}{}\n", job.request.name,
                predicted.end_s,
                k < c.end_s.size() && c.end_s[k] ? fmt::format("{:.1f} s", *c.end_s[k])
                                                 : std::string("-"),
                speed,
                mj.status == "ok" ? "" : " (" + mj.status + ")");
        }
    }
    if (v.recommended_gap) {
        const bool higher_is_better = plan::info(v.objective).higher_is_better;
        out << fmt::format(
            "  Measured {}: the recommendation ({}) is {:.1f} % {} the best measured "
            "candidate ({}); {} candidates, runs took {:.0f} s of wall time here.\n",
            plan::to_string(v.objective), v.candidates.front().name, 100 * *v.recommended_gap,
            higher_is_better ? "below" : "above", v.candidates[*v.best_measured].name,
            v.candidates.size(), v.runs_wall_s);
    } else {
        out << "  The recommendation's measured " << plan::to_string(v.objective)
            << " cannot be compared (not measured, a job failed, or an objective a run "
               "cannot measure).\n";
    }
}

}  // namespace

// Predicted against measured for each candidate, then the recommendation against the best.
void print_verification(const plan::Problem& p, const plan::Verification& v, std::ostream& out) {
    print_candidates_verified(p, v, out);
    if (!v.board_idle)
        return;
    const plan::BoardIdle& b = *v.board_idle;
    const std::optional<double> share = idle_energy_share(v);
    out << fmt::format(
        "  This board idled at {:.1f} W ({}, median of {} {} idle probes), the profiles' "
        "board at {:.1f} W: {:+.1f} W over a plan's whole makespan, whatever the plan{}.\n",
        b.measured_w, telemetry::state_text(b.state), b.runs, b.runs == 1 ? "run's" : "runs'",
        b.profiles_w, b.measured_w - b.profiles_w,
        share ? fmt::format(" ({:+.1f} % of the recommendation's predicted energy)", 100 * *share)
              : std::string());
}

namespace {

void print_plan_table(const PlanOutput& p, std::ostream& out) {
    print_plan(p.report, out);
    if (p.verification)
        print_verification_section(p, out);
}

void print_plan_json(const PlanOutput& p, std::ostream& out) {
    nlohmann::json doc = plan_json(p.report);
    if (p.verification)
        doc["verify"] = verification_json(p.report.problem, *p.verification);
    out << doc.dump(2) << '\n';
}

void print_plan_yaml(const PlanOutput& p, std::ostream& out) {
    std::vector<mig::MigPartedConfig> configs;
    const std::vector<plan::Candidate>& top = p.report.result.top;
    for (size_t i = 0; i < top.size(); ++i)
        configs.push_back(
            plan_mig_parted_config("migscope-plan-" + std::to_string(i + 1), top[i].plan));
    out << mig::write_mig_parted(configs);
}

}  // namespace

void print_verification_section(const PlanOutput& p, std::ostream& out) {
    out << "\nVerification (" << p.verification_title << "):\n";
    print_verification(p.report.problem, *p.verification, out);
}

const Printers<PlanOutput>& plan_printers() {
    static const Printers<PlanOutput> printers(
        "plan",
        {{"table", print_plan_table}, {"json", print_plan_json}, {"yaml", print_plan_yaml}});
    return printers;
}

}  // namespace migscope::report
