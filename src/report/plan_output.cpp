// The planner's answer and its verification as tables, JSON and mig-parted configs.
#include "report/plan_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/json_value.h"
#include "report/table.h"
#include "telemetry/idle_baseline.h"

namespace migscope::report {
namespace {

using nlohmann::json;

std::string kj(double j) {
    return fmt::format("{:.2f}", j / 1e3);
}

std::string signed_pct(double value, double base) {
    return base > 0 ? signed_change(100 * (value - base) / base, "%") : "-";
}

json prediction_json(const plan::Problem& p, const plan::Candidate& c) {
    const plan::MakespanRange range = plan::predict_makespan_range(p, c.plan);
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
                        {"interpolated", jp.interpolated}});
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
            {"makespan_range_s", {range.fastest_s, range.slowest_s}},
            {"energy_j", r.energy_j},
            {"idle_energy_j", r.idle_energy_j},
            {"throughput", r.throughput},
            {"aggregate_throughput", r.aggregate_throughput},
            {"edp_js", r.edp_js},
            {"corrected", r.corrected},
            {"jobs", jobs}};
}

// One line per candidate: energy, makespan, throughput, and each against a reference.
// The makespan, with the range the profiles' fastest and slowest repetitions give where they
// differ.
std::string makespan_text(const plan::Problem& p, const plan::Candidate& c) {
    const plan::MakespanRange range = plan::predict_makespan_range(p, c.plan);
    if (!range.spread())
        return fmt::format("{:.1f}", c.prediction.makespan_s);
    return fmt::format("{:.1f} ({:.1f}-{:.1f})", c.prediction.makespan_s, range.fastest_s,
                       range.slowest_s);
}

// Jobs whose profile records the memory utilisation on some size they can run on.
size_t jobs_with_memory_utilization(const plan::Problem& p) {
    return std::count_if(p.jobs.begin(), p.jobs.end(), [](const plan::JobModel& j) {
        return std::any_of(j.on.begin(), j.on.end(), [](const plan::JobOnSize& on) {
            return on.usable && on.memory_pct > 0;
        });
    });
}

// One line per candidate: energy, makespan, throughput, and each against a reference.
void candidates_table(const plan::Problem& p,
                      const std::vector<std::pair<std::string, const plan::Candidate*>>& rows,
                      const plan::Candidate& reference, std::ostream& out) {
    TextTable t({{"", Align::kLeft},
                 {"layout", Align::kLeft},
                 {"energy kJ", Align::kRight},
                 {"vs sequential", Align::kRight},
                 {"makespan s", Align::kRight},
                 {"throughput", Align::kRight},
                 {"EDP MJ·s", Align::kRight}});
    for (const auto& [label, c] : rows) {
        const plan::Prediction& r = c->prediction;
        t.add_row({label, c->name, kj(r.energy_j),
                   signed_pct(r.energy_j, reference.prediction.energy_j), makespan_text(p, *c),
                   fmt::format("{:.2f}", r.throughput), fmt::format("{:.2f}", r.edp_js / 1e6)});
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

void print_plan(const PlanReport& report, std::ostream& out) {
    const plan::Problem& p = report.problem;
    const plan::SearchResult& r = report.result;
    const plan::ProfileSet& set = report.profiles;
    const plan::Candidate& best = r.top.front();
    const plan::Candidate& seq = *r.baselines.front().candidate;
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
    out << "search: " << plan::to_string(r.method) << ", " << r.layouts
        << " layouts (the whole GPU included), " << r.evaluated << " plans scored, "
        << fmt::format("{:.1f}", report.elapsed_ms) << " ms\n\n";
    if (r.sequential_wins()) {
        out << "Recommendation: do not partition. Run the jobs one after another on the whole "
               "GPU: no layout beats it for "
            << report.objective << ".\n";
    } else {
        out << "Recommendation: " << best.name << "\n";
    }
    const plan::Prediction& b = best.prediction;
    out << fmt::format(
        "  energy {} kJ ({} vs sequential), makespan {:.1f} s ({}), throughput {:.2f} "
        "(sequential {:.2f}), aggregate throughput {:.2f}\n\n",
        kj(b.energy_j), signed_pct(b.energy_j, seq.prediction.energy_j), b.makespan_s,
        signed_pct(b.makespan_s, seq.prediction.makespan_s), b.throughput,
        seq.prediction.throughput, b.aggregate_throughput);
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
    out << "Baselines:\n";
    std::vector<std::pair<std::string, const plan::Candidate*>> rows;
    rows.emplace_back("recommended", &best);
    for (const plan::Baseline& base : r.baselines) {
        if (base.candidate)
            rows.emplace_back(base.name, &*base.candidate);
    }
    candidates_table(p, rows, seq, out);
    for (const plan::Baseline& base : r.baselines) {
        if (!base.candidate)
            out << "  " << base.name << ": not possible: " << base.why_not << "\n";
    }
    out << "\nTop " << r.top.size() << ":\n";
    rows.clear();
    for (size_t i = 0; i < r.top.size(); ++i)
        rows.emplace_back(std::to_string(i + 1), &r.top[i]);
    candidates_table(p, rows, seq, out);
    out << "\nPareto front, energy vs throughput (each layout's best plans for energy and for "
           "throughput):\n";
    rows.clear();
    for (const plan::Candidate& c : r.pareto)
        rows.emplace_back("", &c);
    candidates_table(p, rows, seq, out);
    if (!p.notes.empty() || b.corrected) {
        out << "\nnotes:\n";
        for (const std::string& n : p.notes)
            out << "  " << n << "\n";
    }
    out << "Model: each job's measured speed and board power alone on its partition size; idle "
           "power for the whole GPU until the last partition frees; SM partitions emulate MIG "
           "(no L2/bandwidth isolation); a makespan in brackets is its range with every job at "
           "its fastest and slowest profiled repetition. See docs/planner.md.\n";
}

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
                     {"report.elapsed_ms", report.elapsed_ms}};
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

}  // namespace

json verification_json(const plan::Problem& p, const plan::Verification& v) {
    json entries = json::array();
    for (const plan::VerifiedCandidate& c : v.candidates) {
        json entry = {
            {"name", c.name},
            {"predicted",
             {{"makespan_s", c.predicted.makespan_s},
              {"makespan_range_s", {c.predicted_range.fastest_s, c.predicted_range.slowest_s}},
              {"energy_j", c.predicted.energy_j},
              {"throughput", c.predicted.throughput},
              {"aggregate_throughput", c.predicted.aggregate_throughput}}}};
        if (!c.measured) {
            entry["skipped"] = c.skipped;
            entries.push_back(entry);
            continue;
        }
        const plan::MeasuredRun& m = *c.measured;
        entry["measured"] = {{"makespan_s", m.makespan_s},
                             {"makespan_within_range", c.predicted_range.holds(m.makespan_s)},
                             {"energy_j", maybe(m.energy_j)},
                             {"throughput", maybe(c.throughput)},
                             {"aggregate_throughput", maybe(c.aggregate_throughput)}};
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
                                     {"measured_finish_s", maybe(m.jobs[k].finish_s)},
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
    return {{"candidates", entries}, {"summary", summary}};
}

// Predicted against measured for each candidate, then the recommendation against the best.
void print_verification(const plan::Problem& p, const plan::Verification& v, std::ostream& out) {
    for (const plan::VerifiedCandidate& c : v.candidates) {
        if (!c.measured) {
            out << "  " << c.name << ": not verified: " << c.skipped << "\n";
            continue;
        }
        const plan::MeasuredRun& m = *c.measured;
        const plan::MakespanRange& range = c.predicted_range;
        out << fmt::format("  {}: makespan {:.1f} s predicted", c.name, c.predicted.makespan_s);
        if (range.spread())
            out << fmt::format(" ({:.1f}-{:.1f} s over the profiles' fastest and slowest runs)",
                               range.fastest_s, range.slowest_s);
        out << fmt::format(", {:.1f} s measured ({}{}); ", m.makespan_s,
                           signed_pct(m.makespan_s, c.predicted.makespan_s),
                           range.spread() ? (range.holds(m.makespan_s) ? ", inside that range"
                                                                       : ", outside that range")
                                          : "");
        if (m.energy_j)
            out << fmt::format("energy {} kJ predicted, {} kJ measured ({}); ",
                               kj(c.predicted.energy_j), kj(*m.energy_j),
                               signed_pct(*m.energy_j, c.predicted.energy_j));
        else
            out << "energy not measured; ";
        if (c.throughput)
            out << fmt::format("throughput {:.2f} predicted, {:.2f} measured\n",
                               c.predicted.throughput, *c.throughput);
        else
            out << "throughput not measured (a job failed)\n";
        print_gpu_checks(c.gpus, out);
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
                mj.finish_s ? fmt::format("{:.1f} s", *mj.finish_s) : std::string("-"), speed,
                mj.status == "ok" ? "" : " (" + mj.status + ")");
        }
    }
    if (v.recommended_gap) {
        const bool higher_is_better = v.objective == plan::Objective::kThroughput ||
                                      v.objective == plan::Objective::kAggregateThroughput;
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

}  // namespace migscope::report
