// `migscope stream simulate`'s JSON document and table (stream/simulation_output.h).
#include "stream/simulation_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/user_text.h"

namespace migscope::stream {
namespace {

using Json = nlohmann::ordered_json;

Json bounds_json(const plan::Bounds& b, bool known) {
    if (!known)
        return nullptr;
    return {{"lo", b.lo}, {"hi", b.hi}};
}

// "lo-hi" in units of `scale` (1000: kJ from J); empty when the interval is unknown.
std::string bounds_text(const plan::Bounds& b, double scale, bool known) {
    if (!known)
        return "";
    return fmt::format("{:.4g}-{:.4g}", b.lo / scale, b.hi / scale);
}

// The figures at the end of each bin, a list per figure.
Json series_json(const StreamResult& r, double tardiness_weight_w) {
    Json series;
    series["bin_s"] = r.series_bin_s;
    for (const char* key : {"end_s", "energy_j", "tardiness_s", "energy_tardiness_j", "jobs_done"})
        series[key] = Json::array();
    for (const SeriesPoint& s : r.series) {
        series["end_s"].push_back(s.end_s);
        series["energy_j"].push_back(s.energy_j);
        series["tardiness_s"].push_back(s.tardiness_s);
        series["energy_tardiness_j"].push_back(s.energy_j + tardiness_weight_w * s.tardiness_s);
        series["jobs_done"].push_back(s.jobs_done);
    }
    return series;
}

Json policy_json(const std::string& name, const StreamEstimate& e, double tardiness_weight_w) {
    const StreamResult& r = e.point;
    Json p;
    p["policy"] = name;
    p["name"] = r.policy;
    p["energy_j"] = r.energy_j;
    p["energy_j_interval"] = bounds_json(e.energy_j, e.known);
    p["mean_completion_s"] = r.mean_completion_s;
    p["mean_completion_s_interval"] = bounds_json(e.mean_completion_s, e.known);
    p["p95_completion_s"] = r.p95_completion_s;
    p["p95_completion_s_interval"] = bounds_json(e.p95_completion_s, e.known);
    p["tardiness_s"] = r.tardiness_s;
    p["tardiness_s_interval"] = bounds_json(e.tardiness_s, e.known);
    p["energy_tardiness_j"] = energy_tardiness_j(r, tardiness_weight_w);
    p["energy_tardiness_j_interval"] = bounds_json(e.energy_tardiness_j, e.known);
    p["late_jobs"] = r.late_jobs;
    p["busy_fraction"] = r.busy_fraction;
    p["horizon_s"] = r.horizon_s;
    p["reconfigurations"] = r.reconfigurations;
    p["interval_unknown_why"] = e.known ? "" : e.unknown_why;
    p["layouts"] = Json::array();
    for (const LayoutEvent& l : r.layouts)
        p["layouts"].push_back({{"at_s", l.at_s}, {"gpu", l.gpu}, {"layout", l.layout}});
    p["series"] = series_json(r, tardiness_weight_w);
    return p;
}

}  // namespace

nlohmann::ordered_json simulation_json(const SimulationSetup& setup,
                                       const PolicyComparison& compared) {
    const double weight_w = setup.objective.tardiness_weight_w;
    Json doc;
    doc["trace"] = user_text::as_utf8(setup.trace_path);
    doc["jobs"] = setup.jobs;
    doc["gpus"] = setup.gpus;
    doc["gpu_model"] = setup.gpu_model;
    doc["profiles"] = user_text::as_utf8(setup.profiles_origin);
    doc["model_error"] = user_text::as_utf8(setup.error_origin);
    doc["objective"] = setup.objective_name;
    doc["tardiness_weight_w"] = weight_w;
    doc["reconfiguration"] = {{"orchestrator_s", setup.reconfiguration.orchestrator_s},
                              {"per_instance_s", setup.reconfiguration.per_instance_s}};
    Json by_partitions = Json::object();
    for (size_t b = 0; b < plan::kGainBuckets; ++b)
        by_partitions[plan::gain_bucket_name(b)] = compared.online_min_gain.by_bucket[b];
    doc["online_min_gain"] = {{"fraction_by_partitions", by_partitions},
                              {"from", compared.online_min_gain_from}};
    doc["policies"] = Json::array();
    for (const auto& [name, e] : compared.policies)
        doc["policies"].push_back(policy_json(name, e, weight_w));
    return doc;
}

void write_simulation_table(const SimulationSetup& setup, const PolicyComparison& compared,
                            std::ostream& out) {
    const double weight_w = setup.objective.tardiness_weight_w;
    const auto& results = compared.policies;
    out << user_text::escaped(setup.trace_path) << ": " << setup.jobs << " jobs on " << setup.gpus
        << " x " << setup.gpu_model << ", objective " << setup.objective_name
        << (definition(setup.objective.kind).weighs_tardiness
                ? fmt::format(" (a late second costs {:g} W)", weight_w)
                : std::string())
        << "; a layout change costs " << setup.reconfiguration.orchestrator_s << " s + "
        << setup.reconfiguration.per_instance_s << " s per instance; "
        << "online changes for a predicted gain over " << compared.online_min_gain.text() << " ("
        << compared.online_min_gain_from << ")\n";
    const bool known = !results.empty() && results.front().second.known;
    size_t width = 6;
    for (const auto& [name, e] : results)
        width = std::max(width, e.point.policy.size());
    out << fmt::format(
        "{:<{}} {:>9} {:>15} {:>10} {:>15} {:>8} {:>15} {:>10} {:>15} {:>5} {:>5} {:>8} {:>11} "
        "{:>17}\n",
        "policy", width, "energy kJ", "interval", "mean JCT s", "interval", "p95 s", "interval",
        "tardy s", "interval", "late", "busy", "changes", "E+w*T kJ", "interval");
    for (const auto& [name, e] : results) {
        const StreamResult& r = e.point;
        out << fmt::format(
            "{:<{}} {:>9.4g} {:>15} {:>10.4g} {:>15} {:>8.4g} {:>15} {:>10.4g} {:>15} {:>5} "
            "{:>4.0f}% {:>8} {:>11.4g} {:>17}\n",
            r.policy, width, r.energy_j / 1000, bounds_text(e.energy_j, 1000, e.known),
            r.mean_completion_s, bounds_text(e.mean_completion_s, 1, e.known), r.p95_completion_s,
            bounds_text(e.p95_completion_s, 1, e.known), r.tardiness_s,
            bounds_text(e.tardiness_s, 1, e.known), r.late_jobs, 100 * r.busy_fraction,
            r.reconfigurations, energy_tardiness_j(r, weight_w) / 1000,
            bounds_text(e.energy_tardiness_j, 1000, e.known));
    }
    out << "Simulated on the planner's model with " << user_text::escaped(setup.profiles_origin)
        << "; ";
    if (known)
        out << "intervals: every job at the slow and the fast end of the model's known error ("
            << user_text::escaped(setup.error_origin) << ").\n";
    else
        out << "no intervals: " << results.front().second.unknown_why << ".\n";
    out << "JCT: completion time, end - arrival. E+w*T: energy + " << weight_w
        << " W x tardiness (the combined objective). static: the best fixed layout in "
           "hindsight. docs/streams.md says how each policy decides.\n";
}

const Printers<SimulationOutput>& simulation_printers() {
    static const Printers<SimulationOutput> printers(
        "stream simulate",
        {{"table", [](const SimulationOutput& s,
                      std::ostream& out) { write_simulation_table(s.setup, s.compared, out); }},
         {"json", [](const SimulationOutput& s, std::ostream& out) {
              out << simulation_json(s.setup, s.compared).dump(2) << '\n';
          }}});
    return printers;
}

}  // namespace migscope::stream
