// A stream replay's JSON and tables (runner/stream_replay_output.h).
#include "runner/stream_replay_output.h"

#include <fmt/format.h>

#include "core/user_text.h"
#include "report/json_value.h"

namespace migscope::runner {
namespace {

using Json = nlohmann::ordered_json;

Json number_or_null(const std::optional<double>& v) {
    return v ? Json(*v) : Json(nullptr);
}

Json bounds_json(const plan::Bounds& b, bool known) {
    if (!known)
        return nullptr;
    return {{"lo", b.lo}, {"hi", b.hi}};
}

std::string seconds(const std::optional<double>& s) {
    return s ? fmt::format("{:.2f}", *s) : std::string("-");
}

std::string yes_no(const std::optional<bool>& b) {
    return b ? (*b ? "yes" : "no") : "-";
}

// Per job: where and when the simulator ran it, and what was measured.
Json jobs_json(const ReplayReport& r) {
    const stream::Trace& trace = *r.trace;
    const stream::StreamInput& input = *r.input;
    const std::vector<int64_t>& steps = *r.steps;
    const stream::StreamEstimate& estimate = *r.estimate;
    const stream::StreamResult& schedule = estimate.point;
    const ReplayResult& result = *r.result;
    Json jobs = Json::array();
    for (size_t j = 0; j < trace.jobs.size(); ++j) {
        const stream::JobOutcome& p = schedule.jobs[j];
        const stream::StreamJob& s = input.jobs[j];
        Json job;
        job["job"] = j;
        job["name"] = user_text::as_utf8(trace.jobs[j].job.name);
        job["workload"] = trace.jobs[j].job.workload;
        job["arrival_s"] = s.arrival_s;
        job["deadline_s"] = number_or_null(s.deadline_s);
        job["work_steps"] = steps[j];
        job["partition"] = p.partition;
        job["restarts"] = p.restarts;
        const double completion = p.end_s - s.arrival_s;
        job["predicted"] = {
            {"start_s", p.start_s},
            {"end_s", p.end_s},
            {"completion_s", completion},
            {"completion_s_interval", bounds_json(estimate.job_completion_s[j], estimate.known)}};
        Json measured = nullptr;
        Json inside = nullptr;  // no measure, or no interval
        if (!r.dry_run) {
            const ReplayedJob& m = result.jobs[j];
            measured = {{"start_s", number_or_null(m.start_s)},
                        {"end_s", number_or_null(m.end_s)},
                        {"completion_s", nullptr},
                        {"energy_j", number_or_null(m.energy_j)},
                        {"steps", m.steps},
                        {"status", to_string(m.status)},
                        {"message", user_text::as_utf8(m.message)}};
            if (m.end_s) {
                const double completion_s = *m.end_s - s.arrival_s;
                measured["completion_s"] = completion_s;
                if (estimate.known)
                    inside = estimate.job_completion_s[j].contains(completion_s);
            }
        }
        job["measured"] = std::move(measured);
        job["inside"] = std::move(inside);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

// Per epoch: the layout, the stretches run on it and what its run measured.
Json epochs_json(const ReplayReport& report) {
    const stream::Trace& trace = *report.trace;
    const stream::StreamResult& schedule = report.estimate->point;
    const stream::ReplayPlan& plan = *report.plan;
    const ReplayResult& result = *report.result;
    Json epochs = Json::array();
    for (size_t e = 0; e < plan.epochs.size(); ++e) {
        const stream::ReplayEpoch& ep = plan.epochs[e];
        Json epoch;
        epoch["epoch"] = e;
        epoch["layout"] = schedule.layouts[ep.layout_event].layout;
        epoch["planned_change_s"] = ep.change_s;
        epoch["planned_start_s"] = ep.ready_s;
        Json stretches = Json::array();
        for (const stream::ReplayJob& r : ep.jobs) {
            stretches.push_back(
                {{"job", r.job},
                 {"name", user_text::as_utf8(trace.jobs[r.job].job.name)},
                 {"partition", ep.partitions.at(r.partition)},
                 {"steps", r.steps},
                 {"after_job", r.after ? Json(ep.jobs[*r.after].job) : Json(nullptr)},
                 {"planned_start_s", r.planned_start_s},
                 {"planned_end_s", r.planned_end_s},
                 {"stopped", r.stopped}});
        }
        epoch["jobs"] = std::move(stretches);
        epoch["measured"] = nullptr;
        for (const ReplayedEpoch& m : result.epochs) {
            if (m.epoch != e)
                continue;
            epoch["measured"] = {{"layout_run", m.layout},
                                 {"change_s", m.change_s},
                                 {"start_s", m.start_s},
                                 {"window_s", m.window_s},
                                 {"energy_j", number_or_null(m.energy_j)},
                                 {"idle_power_w", number_or_null(m.idle_power_w)},
                                 {"run_id", m.run_id ? Json(*m.run_id) : Json(nullptr)},
                                 {"run_dir", user_text::as_utf8(m.run_dir)},
                                 {"warnings", m.warnings}};
        }
        epochs.push_back(std::move(epoch));
    }
    return epochs;
}

// The totals, each predicted with its interval against what was measured.
Json totals_json(const ReplayReport& r) {
    const std::vector<ReplayCheck> checks = replay_checks(*r.estimate, *r.result);
    Json totals = Json::array();
    for (const ReplayCheck& c : checks) {
        totals.push_back({{"figure", c.figure},
                          {"predicted", c.predicted},
                          {"interval", bounds_json(c.interval, c.interval_known)},
                          {"measured", number_or_null(c.measured)},
                          {"inside", c.inside ? Json(*c.inside) : Json(nullptr)}});
    }

    return totals;
}

}  // namespace

nlohmann::ordered_json replay_json(const ReplayReport& r) {
    const stream::StreamEstimate& estimate = *r.estimate;
    const stream::StreamResult& schedule = estimate.point;
    const ReplayResult& result = *r.result;
    Json doc;
    {
        doc["trace"] = user_text::as_utf8(r.setup.trace_path);
        doc["policy"] = r.policy;
        doc["dry_run"] = r.dry_run;
        doc["backend"] = r.backend;
        doc["gpu_model"] = r.setup.gpu_model;
        doc["profiles"] = user_text::as_utf8(r.setup.profiles_origin);
        doc["model_error"] = user_text::as_utf8(r.setup.error_origin);
        doc["start_delay"] = r.setup.start_delay_origin.empty()
                                 ? Json(nullptr)
                                 : Json({{"per_partner_s", r.setup.start_delay_per_partner_s},
                                         {"file", user_text::as_utf8(r.setup.start_delay_origin)}});
        doc["interval_unknown_why"] = estimate.known ? "" : estimate.unknown_why;
        doc["objective"] = r.setup.objective_name;
        doc["tardiness_weight_w"] = r.setup.objective.tardiness_weight_w;
        doc["reconfiguration"] = {{"orchestrator_s", r.setup.reconfiguration.orchestrator_s},
                                  {"per_instance_s", r.setup.reconfiguration.per_instance_s}};
        doc["layout_changes"] = schedule.reconfigurations;
        doc["run_dir"] = r.dry_run ? Json(nullptr) : Json(user_text::as_utf8(r.run_dir));
        doc["jobs"] = jobs_json(r);
        doc["epochs"] = epochs_json(r);
        doc["totals"] = totals_json(r);
        doc["energy"] = {{"window_energy_j", number_or_null(result.window_energy_j)},
                         {"gap_s", result.gap_s},
                         {"idle_power_w", number_or_null(result.idle_power_w)},
                         {"energy_j", number_or_null(result.energy_j)},
                         {"method",
                          "the board's energy counter over each layout's run window, plus the "
                          "seconds between windows (layout changes, idle) at the runs' measured "
                          "idle power"}};
        doc["all_ok"] = !r.dry_run && result.all_ok();
        doc["interrupted"] = result.interrupted;
    }
    return doc;
}

namespace {

// Each layout epoch: when it changed and started, its jobs, and its run's window and energy.
void print_epochs(const ReplayReport& r, std::ostream& out) {
    const stream::StreamResult& schedule = r.estimate->point;
    const stream::ReplayPlan& plan = *r.plan;
    out << fmt::format("{:>5} {:>9} {:>9} {:<32} {:>6} {:>9} {:>10}\n", "epoch", "change s",
                       "start s", "layout", "jobs", "window s", "energy kJ");
    for (size_t e = 0; e < plan.epochs.size(); ++e) {
        const stream::ReplayEpoch& ep = plan.epochs[e];
        const ReplayedEpoch* m = nullptr;
        for (const ReplayedEpoch& x : r.result->epochs)
            m = x.epoch == e ? &x : m;
        out << fmt::format("{:>5} {:>9.1f} {:>9.1f} {:<32} {:>6} {:>9} {:>10}\n", e,
                           m ? m->change_s : ep.change_s, m ? m->start_s : ep.ready_s,
                           schedule.layouts[ep.layout_event].layout, ep.jobs.size(),
                           m ? fmt::format("{:.1f}", m->window_s) : "-",
                           m && m->energy_j ? fmt::format("{:.3g}", *m->energy_j / 1000) : "-");
    }
}

// Each job: measured start, end and completion beside the simulator's, and whether the completion
// fell inside its interval.
void print_jobs(const ReplayReport& r, std::ostream& out) {
    const stream::StreamEstimate& estimate = *r.estimate;
    const stream::StreamResult& schedule = estimate.point;
    out << fmt::format(
        "{:>3} {:<20} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>15} {:>8} {:>6} "
        "{:>9} {}\n",
        "job", "name", "arrive", "start", "(pred)", "end", "(pred)", "JCT", "pred interval",
        "(pred)", "inside", "energy kJ", "status");
    for (size_t j = 0; j < r.trace->jobs.size(); ++j) {
        const stream::JobOutcome& p = schedule.jobs[j];
        const double arrival = r.input->jobs[j].arrival_s;
        const ReplayedJob* m = r.dry_run ? nullptr : &r.result->jobs[j];
        const std::optional<double> jct =
            m && m->end_s ? std::optional<double>(*m->end_s - arrival) : std::nullopt;
        const plan::Bounds& b = estimate.job_completion_s[j];
        std::optional<bool> inside;
        if (jct && estimate.known)
            inside = b.contains(*jct);
        out << fmt::format(
            "{:>3} {:<20} {:>8.2f} {:>8} {:>8.2f} {:>8} {:>8.2f} {:>8} {:>15} {:>8.2f} {:>6} "
            "{:>9} {}\n",
            j, user_text::escaped(r.trace->jobs[j].job.name), arrival,
            seconds(m ? m->start_s : std::nullopt), p.start_s, seconds(m ? m->end_s : std::nullopt),
            p.end_s, seconds(jct),
            estimate.known ? fmt::format("{:.2f}-{:.2f}", b.lo, b.hi) : std::string("-"),
            p.end_s - arrival, yes_no(inside),
            m && m->energy_j ? fmt::format("{:.3g}", *m->energy_j / 1000) : "-",
            m ? to_string(m->status) : "");
    }
}

// The totals (energy, mean and p95 completion, tardiness) against their intervals.
void print_totals(const ReplayReport& r, std::ostream& out) {
    out << fmt::format("{:<18} {:>11} {:>23} {:>11} {:>6}\n", "total", "predicted", "interval",
                       "measured", "inside");
    for (const ReplayCheck& c : replay_checks(*r.estimate, *r.result)) {
        const bool energy = c.figure == "energy_j";
        const double scale = energy ? 1000 : 1;
        const std::string name = energy                            ? "energy kJ"
                                 : c.figure == "mean_completion_s" ? "mean JCT s"
                                 : c.figure == "p95_completion_s"  ? "p95 JCT s"
                                                                   : "tardiness s";
        out << fmt::format(
            "{:<18} {:>11.4g} {:>23} {:>11} {:>6}\n", name, c.predicted / scale,
            c.interval_known
                ? fmt::format("{:.4g}-{:.4g}", c.interval.lo / scale, c.interval.hi / scale)
                : std::string("-"),
            c.measured ? fmt::format("{:.4g}", *c.measured / scale) : std::string("-"),
            yes_no(c.inside));
    }
}

// What the predictions rest on, and how the energy was measured.
void print_method(const ReplayReport& r, std::ostream& out) {
    const stream::StreamEstimate& estimate = *r.estimate;
    const ReplayResult& result = *r.result;
    out << "Predicted on the planner's model with " << user_text::escaped(r.setup.profiles_origin)
        << (r.setup.start_delay_origin.empty()
                ? std::string()
                : fmt::format(" (jobs starting together wait {:.2f} s per other one: ",
                              r.setup.start_delay_per_partner_s) +
                      user_text::escaped(r.setup.start_delay_origin) + ")")
        << (estimate.known ? "; intervals from " + user_text::escaped(r.setup.error_origin)
                           : "; no intervals: " + estimate.unknown_why)
        << ". Times on the trace's clock; JCT = end - arrival.\n";
    if (!r.dry_run)
        out << "Energy: the board's counter over each layout's run ("
            << (result.window_energy_j ? fmt::format("{:.4g} kJ", *result.window_energy_j / 1000)
                                       : std::string("not measured"))
            << ") + " << fmt::format("{:.1f}", result.gap_s)
            << " s between runs at the measured idle power ("
            << (result.idle_power_w ? fmt::format("{:.1f} W", *result.idle_power_w)
                                    : std::string("none"))
            << "). Runs, traces and job logs: " << user_text::escaped(r.run_dir)
            << " (replay.json: everything above)\n";
}

}  // namespace

void print_replay(const ReplayReport& r, std::ostream& out) {
    out << user_text::escaped(r.setup.trace_path) << ": " << r.trace->jobs.size()
        << " jobs, policy " << r.policy << " on " << r.setup.gpu_model << " ("
        << r.estimate->point.reconfigurations << " layout changes, " << r.plan->epochs.size()
        << " layouts), " << (r.dry_run ? "not run (--dry-run)" : "replayed on " + r.backend)
        << '\n';
    print_epochs(r, out);
    out << '\n';
    print_jobs(r, out);
    out << '\n';
    print_totals(r, out);
    print_method(r, out);
}

const Printers<ReplayReport>& replay_printers() {
    static const Printers<ReplayReport> printers(
        "stream replay",
        {{"table", print_replay},
         {"json", [](const ReplayReport& r, std::ostream& out) {
              out << report::utf8_dump(replay_json(r), 2) << '\n';
          }}});
    return printers;
}

}  // namespace migscope::runner
