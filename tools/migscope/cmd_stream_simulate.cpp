// `migscope stream simulate`: a trace played through the stream simulator under each policy, with
// each figure's interval from the planner's known error.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "core/error.h"
#include "core/folders.h"
#include "core/text.h"
#include "core/user_text.h"
#include "core/version.h"
#include "mig/catalog.h"
#include "output_file.h"
#include "stream/compare.h"
#include "stream/schedule.h"
#include "stream/stream_input.h"
#include "stream/stream_page.h"
#include "stream_options.h"

namespace migscope::cli {
namespace {

struct SimulateOptions {
    std::string trace;
    size_t gpus = 1;
    StreamOptions stream;
    std::string policies = "never,static,periodic,online";
    std::string format = "table";
    double series_bin_s = 60;     // --format json, --html: the figures over time in bins this long
    std::string schedule_dir;     // --schedule-dir: the chosen policy's schedule, written here
    std::string schedule_policy;  // empty: the policy that scores best on the objective
    std::string html;             // --html: the page with the plots over time, written here
};

std::string bounds_text(const plan::Bounds& b, double scale, bool known) {
    if (!known)
        return "";
    return fmt::format("{:.4g}-{:.4g}", b.lo / scale, b.hi / scale);
}

nlohmann::ordered_json bounds_json(const plan::Bounds& b, bool known) {
    if (!known)
        return nullptr;
    return {{"lo", b.lo}, {"hi", b.hi}};
}

// A file opened before the work that fills it, removed again unless the work got to keep it.
struct RemovedUnlessKept {
    std::string path;  // empty: none
    bool kept = false;
    ~RemovedUnlessKept() {
        std::error_code ec;
        if (!path.empty() && !kept)
            std::filesystem::remove(path, ec);
    }
};

int simulate_command(const SimulateOptions& o) {
    if (!o.schedule_dir.empty())
        create_folder(o.schedule_dir, "--schedule-dir");  // before any work
    Output page(o.html);                  // opened before any work: an unwritable path is bad input
    RemovedUnlessKept page_file{o.html};  // and no empty page is left when the command fails
    const stream::Trace trace = stream::read_trace_file(o.trace);
    const stream::StreamInput input = stream::stream_input(trace);
    const mig::GpuModel& model = mig::builtin_model(o.stream.gpu_model);
    const StreamModel m = load_stream_model(o.stream, model, o.trace, input);

    stream::SimulationOptions options = simulation_options(o.stream, o.gpus);
    if (o.format == "json" || !o.html.empty())
        options.series_bin_s = o.series_bin_s;
    const stream::PolicySettings settings = policy_settings(o.stream);
    const stream::PolicyComparison compared = stream::compare_policies(
        m.problem, input.jobs, text::split(o.policies, ','), options, settings, o.stream.min_gain,
        m.error ? &*m.error : nullptr, [](const std::string& name) {
            std::cerr << "migscope stream simulate: " << name << " ...\n";
        });
    const auto& results = compared.policies;
    if (!o.schedule_dir.empty()) {
        const auto& [name, chosen] =
            stream::chosen_policy(compared, o.schedule_policy, settings.objective);
        const stream::LayoutSchedule schedule = stream::layout_schedule(chosen.point);
        stream::write_layout_schedule(o.schedule_dir, schedule);
        std::cerr << "migscope stream simulate: " << name << "'s schedule ("
                  << schedule.steps.size() << " layouts over time) in "
                  << user_text::escaped(o.schedule_dir) << ": " << stream::kScheduleConfigFile
                  << ", " << stream::kScheduleTimesFile << "\n";
    }
    if (!o.html.empty()) {
        stream::StreamPageInput in;
        in.trace = user_text::as_utf8(o.trace);
        in.trace_source = trace.source;
        in.gpus = o.gpus;
        in.gpu_model = model.key;
        in.profiles = user_text::as_utf8(m.profiles_origin);
        in.model_error = user_text::as_utf8(m.error_origin);
        in.objective = settings.objective;
        in.objective_name = o.stream.objective;
        in.reconfiguration = options.reconfiguration;
        in.generator = std::string("migscope ") + kVersion + " (" + kGitCommit + ")";
        std::ostringstream text;
        stream::write_stream_page(in, m.problem, input.jobs, compared, text);
        page.stream() << user_text::as_utf8(text.str());
        page.stream().flush();
        if (!page.stream())
            throw runtime_error("cannot write " + user_text::shown(o.html));
        page_file.kept = true;
        std::cerr << "migscope stream simulate: the page with the plots over time in "
                  << user_text::escaped(o.html) << "\n";
    }

    if (o.format == "json") {
        nlohmann::ordered_json doc;
        doc["trace"] = user_text::as_utf8(o.trace);
        doc["jobs"] = trace.jobs.size();
        doc["gpus"] = o.gpus;
        doc["gpu_model"] = model.key;
        doc["profiles"] = user_text::as_utf8(m.profiles_origin);
        doc["model_error"] = user_text::as_utf8(m.error_origin);
        doc["objective"] = o.stream.objective;
        doc["tardiness_weight_w"] = o.stream.tardiness_weight_w;
        doc["reconfiguration"] = {{"orchestrator_s", o.stream.orchestrator_s},
                                  {"per_instance_s", o.stream.instance_s}};
        doc["online_min_gain"] = {{"fraction", compared.online_min_gain},
                                  {"from", compared.online_min_gain_from}};
        doc["policies"] = nlohmann::ordered_json::array();
        for (const auto& [name, e] : results) {
            const stream::StreamResult& r = e.point;
            nlohmann::ordered_json p;
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
            p["energy_tardiness_j"] = stream::energy_tardiness_j(r, o.stream.tardiness_weight_w);
            p["energy_tardiness_j_interval"] = bounds_json(e.energy_tardiness_j, e.known);
            p["late_jobs"] = r.late_jobs;
            p["busy_fraction"] = r.busy_fraction;
            p["horizon_s"] = r.horizon_s;
            p["reconfigurations"] = r.reconfigurations;
            p["interval_unknown_why"] = e.known ? "" : e.unknown_why;
            p["layouts"] = nlohmann::ordered_json::array();
            for (const stream::LayoutEvent& l : r.layouts)
                p["layouts"].push_back({{"at_s", l.at_s}, {"gpu", l.gpu}, {"layout", l.layout}});
            nlohmann::ordered_json series;
            series["bin_s"] = r.series_bin_s;
            for (const char* key :
                 {"end_s", "energy_j", "tardiness_s", "energy_tardiness_j", "jobs_done"})
                series[key] = nlohmann::ordered_json::array();
            for (const stream::SeriesPoint& s : r.series) {
                series["end_s"].push_back(s.end_s);
                series["energy_j"].push_back(s.energy_j);
                series["tardiness_s"].push_back(s.tardiness_s);
                series["energy_tardiness_j"].push_back(s.energy_j +
                                                       o.stream.tardiness_weight_w * s.tardiness_s);
                series["jobs_done"].push_back(s.jobs_done);
            }
            p["series"] = std::move(series);
            doc["policies"].push_back(std::move(p));
        }
        std::cout << doc.dump(2) << '\n';
        return kExitOk;
    }

    std::cout << user_text::escaped(o.trace) << ": " << trace.jobs.size() << " jobs on " << o.gpus
              << " x " << model.key << ", objective " << o.stream.objective
              << (settings.objective.kind == stream::StreamObjective::Kind::kEnergyTardiness
                      ? fmt::format(" (a late second costs {:g} W)", o.stream.tardiness_weight_w)
                      : std::string())
              << "; a layout change "
              << "costs " << o.stream.orchestrator_s << " s + " << o.stream.instance_s
              << " s per instance; "
              << "online changes for a predicted gain over "
              << fmt::format("{:.1f}", 100 * compared.online_min_gain) << " % ("
              << compared.online_min_gain_from << ")\n";
    const bool known = !results.empty() && results.front().second.known;
    size_t width = 6;
    for (const auto& [name, e] : results)
        width = std::max(width, e.point.policy.size());
    std::cout << fmt::format(
        "{:<{}} {:>9} {:>15} {:>10} {:>15} {:>8} {:>10} {:>5} {:>5} {:>8} {:>11} {:>17}\n",
        "policy", width, "energy kJ", "interval", "mean JCT s", "interval", "p95 s", "tardy s",
        "late", "busy", "changes", "E+w*T kJ", "interval");
    for (const auto& [name, e] : results) {
        const stream::StreamResult& r = e.point;
        std::cout << fmt::format(
            "{:<{}} {:>9.4g} {:>15} {:>10.4g} {:>15} {:>8.4g} {:>10.4g} {:>5} {:>4.0f}% {:>8} "
            "{:>11.4g} {:>17}\n",
            r.policy, width, r.energy_j / 1000, bounds_text(e.energy_j, 1000, e.known),
            r.mean_completion_s, bounds_text(e.mean_completion_s, 1, e.known), r.p95_completion_s,
            r.tardiness_s, r.late_jobs, 100 * r.busy_fraction, r.reconfigurations,
            stream::energy_tardiness_j(r, o.stream.tardiness_weight_w) / 1000,
            bounds_text(e.energy_tardiness_j, 1000, e.known));
    }
    std::cout << "Simulated on the planner's model with " << user_text::escaped(m.profiles_origin)
              << "; ";
    if (known)
        std::cout << "intervals: every job at the slow and the fast end of the model's known "
                     "error ("
                  << user_text::escaped(m.error_origin) << ").\n";
    else
        std::cout << "no intervals: " << results.front().second.unknown_why << ".\n";
    std::cout << "JCT: completion time, end - arrival. E+w*T: energy + "
              << o.stream.tardiness_weight_w
              << " W x tardiness (the combined objective). static: the best fixed layout in "
                 "hindsight. docs/streams.md says how each policy decides.\n";
    return kExitOk;
}

}  // namespace

void add_stream_simulate_command(CLI::App& group, Action& action) {
    auto o = std::make_shared<SimulateOptions>();
    CLI::App* cmd = group.add_subcommand(
        "simulate",
        "Play a trace through the stream simulator under each policy (never partition, the best "
        "static layout, periodic and online repartitioning) on the planner's model, and print "
        "energy, completion times, tardiness and layout changes, each with its interval "
        "(docs/streams.md)");
    path_option(cmd->add_option("trace", o->trace, "The trace (JSON, `migscope stream trace`)"))
        ->required();
    cmd->add_option("--gpus", o->gpus, "GPUs the jobs share")
        ->capture_default_str()
        ->check(CLI::Range(size_t(1), size_t(100000)));
    add_stream_model_options(*cmd, o->stream);
    cmd->add_option("--policies", o->policies,
                    "Policies to compare, comma-separated (never, static, periodic, online)")
        ->capture_default_str();
    add_stream_policy_options(*cmd, o->stream, StreamCommand::kSimulate);
    path_option(cmd->add_option(
        "--schedule-dir", o->schedule_dir,
        "Write the chosen policy's layouts over time into this folder (made if missing): "
        "mig-parted-config.yaml (one named config per layout) and layout-schedule.json (when "
        "each GPU takes which config)"));
    cmd->add_option("--schedule-policy", o->schedule_policy,
                    "--schedule-dir: the policy whose schedule is written (one of --policies; "
                    "default: the one that scores best on --objective)");
    path_option(cmd->add_option(
        "--html", o->html,
        "Also write a self-contained HTML page: the comparison with each figure's interval, and "
        "energy and tardiness over time with the layout changes marked"));
    cmd->add_option("--series-bin-s", o->series_bin_s,
                    "--format json and --html: each policy's energy, tardiness and jobs done over "
                    "time, at the end of bins this long (made twice as long as often as needed to "
                    "keep at most 2000)")
        ->capture_default_str()
        ->check(positive_number());
    cmd->add_option("--format", o->format, "table or json")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->callback([o, &action] { action = [o] { return simulate_command(*o); }; });
}

}  // namespace migscope::cli
