// `migscope plan`: recommends a layout and an assignment for a job set and an objective from
// measured profiles, with the baselines it beats, the top alternatives and the Pareto front;
// `--verify` runs the top candidates on the GPU and sets measured against predicted.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/error.h"
#include "core/text.h"
#include "mig/mig_parted.h"
#include "output_file.h"
#include "partition/job.h"
#include "plan/search.h"
#include "report/table.h"
#include "results_output.h"
#include "runner/memory_fit.h"
#include "self_run.h"
#include "store/store.h"

namespace migscope::cli {
namespace {

using nlohmann::json;

struct PlanOptions {
    std::string jobs;
    std::string work;     // steps: one for every job or one per job
    std::string weights;  // seconds of whole-GPU work: one or one per job
    std::string objective = "energy";
    std::string gpu_model = "h200";
    std::string backend = "mig";  // what the partitions are: mig instances or green contexts
    size_t gpus = 1;
    std::string profiles;  // JSON file or results store; default data/profiles-MODEL.json
    double min_speed = 0;
    size_t top = 3;
    std::string method = "auto";
    std::string format = "table";
    std::string output;
    bool verify = false;
    unsigned gpu = 0;  // --verify: GPU index
    std::string db;    // --verify: store the runs here
    std::string run_dir;
    std::string worker;
};

constexpr double kDefaultWeightS = 60;

std::string data_dir() {
    const char* env = std::getenv("MIGSCOPE_DATA_DIR");
    return env ? env : MIGSCOPE_DEFAULT_DATA_DIR;
}

bool is_sqlite(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char head[16] = {};
    in.read(head, sizeof head);
    return in.gcount() == 16 && std::memcmp(head, "SQLite format 3", 16) == 0;
}

// The profiles: a results store, a profile file, or the shipped file for the model. Jobs without
// a measured peak get one from data/peak-memory-MODEL.json where it has them.
plan::ProfileSet load_profiles(const std::string& given, const mig::GpuModel& model,
                               std::string& origin) {
    origin = given.empty() ? data_dir() + "/profiles-" + model.key + ".json" : given;
    if (given.empty() && !std::ifstream(origin)) {
        throw input_error("no shipped profiles for " + model.key + " (" + origin +
                          "): pass --profiles FILE|DB (`migscope profile` measures them)");
    }
    plan::ProfileSet set;
    if (is_sqlite(origin)) {
        store::Store db = store::Store::open(origin, store::OpenMode::kExisting);
        set = plan::profiles_from_runs(db.list_runs(), model);
        set.provenance.source = origin + ": " + set.provenance.source;
    } else {
        set = plan::read_profiles_file(origin);
    }
    if (set.gpu_model != model.key) {
        throw input_error(origin + " holds profiles of " + set.gpu_model + ", not " + model.key +
                          " (--gpu-model)");
    }
    const std::string memory_file = data_dir() + "/peak-memory-" + model.key + ".json";
    if (std::ifstream(memory_file)) {
        const auto records = runner::read_memory_records(memory_file);
        for (plan::JobProfile& j : set.jobs) {
            partition::JobSpec spec;
            spec.workload = j.workload;
            spec.mode = j.mode;
            spec.batch = j.batch;
            if (const auto r = runner::find_memory_record(records, spec); r && !j.peak_memory_gib)
                j.peak_memory_gib = r->peak_memory_gib;
        }
    }
    return set;
}

// "2000" for every job or "2000,500,..." one per job.
std::vector<double> per_job(const std::string& option, const std::string& text, size_t jobs) {
    std::vector<double> out;
    for (const std::string& item : text::split(text, ',')) {
        try {
            size_t used = 0;
            out.push_back(std::stod(text::trim(item), &used));
            if (used != text::trim(item).size())
                throw std::invalid_argument(item);
        } catch (const std::exception&) {
            throw input_error(option + ": '" + item + "' is not a number");
        }
    }
    if (out.size() == 1)
        out.assign(jobs, out.front());
    if (out.size() != jobs) {
        throw input_error(option + ": " + std::to_string(out.size()) + " values for " +
                          std::to_string(jobs) + " jobs (give one, or one per job)");
    }
    return out;
}

std::vector<plan::JobRequest> job_requests(const PlanOptions& o) {
    if (!o.work.empty() && !o.weights.empty())
        throw input_error("give --work or --weights, not both");
    std::vector<plan::JobRequest> out;
    const std::vector<partition::JobSpec> specs = partition::parse_job_list(o.jobs);
    const std::vector<double> work =
        o.work.empty() ? std::vector<double>{} : per_job("--work", o.work, specs.size());
    const std::vector<double> weights = o.weights.empty()
                                            ? std::vector<double>(specs.size(), kDefaultWeightS)
                                            : per_job("--weights", o.weights, specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        plan::JobRequest r;
        r.name = specs[i].name;
        r.workload = specs[i].workload;
        r.mode = specs[i].mode;
        r.batch = specs[i].batch;
        if (!work.empty()) {
            if (work[i] != std::floor(work[i]) || work[i] <= 0)
                throw input_error("--work: steps must be positive whole numbers");
            r.work_steps = static_cast<int64_t>(work[i]);
        } else {
            r.work_whole_gpu_s = weights[i];
        }
        out.push_back(r);
    }
    return out;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const std::string& i : items)
        out += (out.empty() ? "" : separator) + i;
    return out;
}

std::string kj(double j) {
    return fmt::format("{:.2f}", j / 1e3);
}

std::string signed_pct(double value, double base) {
    return base > 0 ? fmt::format("{:+.1f}%", 100 * (value - base) / base) : "-";
}

// The plan as a mig-parted config: one entry per distinct layout, with its GPUs.
mig::MigPartedConfig mig_parted_config(const std::string& name, const plan::Plan& plan) {
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
                        {"interpolated", jp.interpolated}});
    }
    json gpus = json::array();
    for (const plan::GpuPlan& g : c.plan)
        gpus.push_back({{"layout", plan::describe(g)}, {"partitioned", g.layout.has_value()}});
    return {{"name", c.name},
            {"partitioned", c.partitioned()},
            {"gpus", gpus},
            {"makespan_s", r.makespan_s},
            {"energy_j", r.energy_j},
            {"idle_energy_j", r.idle_energy_j},
            {"throughput", r.throughput},
            {"edp_js", r.edp_js},
            {"corrected", r.corrected},
            {"jobs", jobs}};
}

// One line per candidate: energy, makespan, throughput, and each against a reference.
void candidates_table(const std::vector<std::pair<std::string, const plan::Candidate*>>& rows,
                      const plan::Candidate& reference, std::ostream& out) {
    using report::Align;
    report::TextTable t({{"", Align::kLeft},
                         {"layout", Align::kLeft},
                         {"energy kJ", Align::kRight},
                         {"vs sequential", Align::kRight},
                         {"makespan s", Align::kRight},
                         {"throughput", Align::kRight},
                         {"EDP MJ·s", Align::kRight}});
    for (const auto& [label, c] : rows) {
        const plan::Prediction& r = c->prediction;
        t.add_row({label, c->name, kj(r.energy_j),
                   signed_pct(r.energy_j, reference.prediction.energy_j),
                   fmt::format("{:.1f}", r.makespan_s), fmt::format("{:.2f}", r.throughput),
                   fmt::format("{:.2f}", r.edp_js / 1e6)});
    }
    t.print(out);
}

void print_table(const plan::Problem& p, const plan::SearchResult& r, const PlanOptions& o,
                 const plan::ProfileSet& set, const std::string& origin, double elapsed_ms,
                 std::ostream& out) {
    const plan::Candidate& best = r.top.front();
    const plan::Candidate& seq = *r.baselines.front().candidate;
    out << "migscope plan: " << p.jobs.size() << " jobs on " << o.gpus << " × "
        << p.model.description << ", objective " << o.objective << "\n";
    out << "profiles: " << origin << " (measured " << set.provenance.measured_from << " to "
        << set.provenance.measured_to << " on " << set.provenance.gpu << ", driver "
        << set.provenance.driver << ", steps "
        << (set.provenance.steps.empty() ? "not recorded" : set.provenance.steps) << "); idle "
        << fmt::format("{:.0f}", p.idle_power_w) << " W; corrections: throughput "
        << fmt::format("{:.2f}", p.correction.throughput) << ", dynamic power "
        << fmt::format("{:.2f}", p.correction.dynamic_power) << " (from " << p.correction.mixes
        << " measured mixes)\n";
    out << "search: " << plan::to_string(r.method) << ", " << r.layouts
        << " layouts (the whole GPU included), " << r.evaluated << " plans scored, "
        << fmt::format("{:.1f}", elapsed_ms) << " ms\n\n";
    if (r.sequential_wins()) {
        out << "Recommendation: do not partition. Run the jobs one after another on the whole "
               "GPU: no layout beats it for "
            << o.objective << ".\n";
    } else {
        out << "Recommendation: " << best.name << "\n";
    }
    const plan::Prediction& b = best.prediction;
    out << fmt::format(
        "  energy {} kJ ({} vs sequential), makespan {:.1f} s ({}), throughput {:.2f} "
        "(sequential 1.00)\n\n",
        kj(b.energy_j), signed_pct(b.energy_j, seq.prediction.energy_j), b.makespan_s,
        signed_pct(b.makespan_s, seq.prediction.makespan_s), b.throughput);
    using report::Align;
    report::TextTable jobs({{"job", Align::kLeft},
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
                      fmt::format("{:.0f} {}", jp.items_per_s, p.jobs[j].profile->item_unit),
                      fmt::format("{:.2f}", jp.speed_fraction), kj(jp.energy_j)});
    }
    jobs.print(out);
    out << "  idle partitions and unused SMs: " << kj(b.idle_energy_j)
        << " kJ (idle power is split by partition SMs while a job runs)\n\n";
    if (best.partitioned()) {
        out << "mig-parted config:\n"
            << mig::write_mig_parted(
                   std::vector<mig::MigPartedConfig>{mig_parted_config("migscope-plan", best.plan)})
            << "\n";
    }
    out << "Baselines:\n";
    std::vector<std::pair<std::string, const plan::Candidate*>> rows;
    rows.emplace_back("recommended", &best);
    for (const plan::Baseline& base : r.baselines) {
        if (base.candidate)
            rows.emplace_back(base.name, &*base.candidate);
    }
    candidates_table(rows, seq, out);
    for (const plan::Baseline& base : r.baselines) {
        if (!base.candidate)
            out << "  " << base.name << ": not possible: " << base.why_not << "\n";
    }
    out << "\nTop " << r.top.size() << ":\n";
    rows.clear();
    for (size_t i = 0; i < r.top.size(); ++i)
        rows.emplace_back(std::to_string(i + 1), &r.top[i]);
    candidates_table(rows, seq, out);
    out << "\nPareto front, energy vs throughput (each layout's best plans for energy and for "
           "throughput):\n";
    rows.clear();
    for (const plan::Candidate& c : r.pareto)
        rows.emplace_back("", &c);
    candidates_table(rows, seq, out);
    if (!p.notes.empty() || b.corrected) {
        out << "\nnotes:\n";
        for (const std::string& n : p.notes)
            out << "  " << n << "\n";
    }
    out << "Model: each job's measured speed and board power alone on its partition size; idle "
           "power for the whole GPU until the last partition frees; SM partitions emulate MIG "
           "(no L2/bandwidth isolation). See docs/planner.md.\n";
}

json result_json(const plan::Problem& p, const plan::SearchResult& r, const PlanOptions& o,
                 const plan::ProfileSet& set, const std::string& origin, double elapsed_ms) {
    json doc;
    doc["objective"] = o.objective;
    doc["gpu_model"] = p.model.key;
    doc["gpus"] = o.gpus;
    doc["profiles"] = {
        {"source", origin},
        {"measured_from", set.provenance.measured_from},
        {"measured_to", set.provenance.measured_to},
        {"gpu", set.provenance.gpu},
        {"driver", set.provenance.driver},
        {"steps", set.provenance.steps.empty() ? json(nullptr) : json(set.provenance.steps)},
        {"idle_power_w", p.idle_power_w},
        {"correction",
         {{"throughput", p.correction.throughput},
          {"dynamic_power", p.correction.dynamic_power},
          {"mixes", p.correction.mixes}}}};
    doc["search"] = {{"method", plan::to_string(r.method)},
                     {"layouts", r.layouts},
                     {"plans_scored", r.evaluated},
                     {"elapsed_ms", elapsed_ms}};
    doc["sequential_wins"] = r.sequential_wins();
    doc["recommended"] = prediction_json(p, r.top.front());
    doc["mig_parted"] = mig::write_mig_parted(
        std::vector<mig::MigPartedConfig>{mig_parted_config("migscope-plan", r.top.front().plan)});
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

// What `migscope run` needs for one candidate: jobs in queue order, the busy partitions as a
// layout and each job's partition in it (--assign); no layout for the whole GPU.
struct RunArgs {
    std::vector<std::string> jobs;
    std::vector<size_t> order;  // plan job index of each run job
    std::vector<std::string> layout;
    std::vector<std::string> assign;
};

RunArgs run_args(const plan::Problem& p, const plan::GpuPlan& g) {
    RunArgs a;
    for (size_t k = 0; k < g.queues.size(); ++k) {
        if (g.queues[k].empty())
            continue;  // an idle partition is SMs nobody uses: left out
        if (g.layout) {
            const mig::Instance& i = g.layout->instances[k];
            a.layout.push_back(i.profile + "@" + std::to_string(i.start));
        }
        for (size_t j : g.queues[k]) {
            const plan::JobModel& job = p.jobs[j];
            a.jobs.push_back(job.request.workload + ":" + job.request.mode + ":" +
                             std::to_string(job.profile->batch));
            a.order.push_back(j);
            if (g.layout)
                a.assign.push_back(std::to_string(a.layout.size() - 1));
        }
    }
    return a;
}

// A verified candidate's run: its JSON (the run's record), the wall time it took (0 when it was
// taken from --db), or why it was not run.
struct Verified {
    std::optional<json> run;
    double wall_s = 0;
    bool from_db = false;
    std::string skipped;
};

// Runs one candidate with `migscope run` (green backend, fixed work), or takes its earlier run
// from --db (same label: the layout, jobs and work), so that an interrupted --verify resumes.
Verified verify_candidate(const plan::Candidate& c, const RunArgs& a, const PlanOptions& o,
                          const std::string& dir) {
    Verified v;
    if (o.work.empty() || o.work.find(',') != std::string::npos) {
        v.skipped = "--verify needs one --work STEPS for every job (as `migscope run`)";
        return v;
    }
    const std::string label = "plan --verify " + c.name + " --jobs " + join(a.jobs, ",") +
                              (a.assign.empty() ? "" : " --assign " + join(a.assign, ",")) +
                              " --work " + o.work;
    if (!o.db.empty() && std::ifstream(o.db)) {
        store::Store db = store::Store::open(o.db, store::OpenMode::kExisting);
        for (const store::RunRecord& r : db.list_runs()) {
            if (r.label == label && r.role == store::RunRole::kRun && !r.interrupted) {
                v.run = record_json(r);
                v.from_db = true;
                std::cerr << "migscope plan: " << c.name << ": measured before (run " << r.id
                          << " in " << o.db << ")\n";
                return v;
            }
        }
    }
    std::vector<std::string> args = {
        "run",  "--jobs", join(a.jobs, ","),     "--work",    o.work, "--format",
        "json", "--gpu",  std::to_string(o.gpu), "--run-dir", dir};
    if (!a.layout.empty()) {
        args.insert(args.end(), {"--backend", "green", "--layout", join(a.layout, "+")});
        if (a.assign.size() > a.layout.size())  // some partition queues jobs
            args.insert(args.end(), {"--assign", join(a.assign, ",")});
    } else {
        args.insert(args.end(), {"--backend", "sequential"});
    }
    if (!o.db.empty())
        args.insert(args.end(), {"--db", o.db, "--label", label});
    if (!o.worker.empty())
        args.insert(args.end(), {"--worker", o.worker});
    std::cerr << "migscope plan: verifying " << c.name << '\n';
    const auto start = std::chrono::steady_clock::now();
    const SelfRun run = run_self(args);
    v.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << fmt::format("migscope plan: {} ran in {:.1f} s of wall time\n", c.name, v.wall_s);
    if (run.exit_code == kExitBadInput || run.exit_code == kExitUnavailable) {
        throw Error(run.exit_code == kExitBadInput ? ErrorKind::kInput : ErrorKind::kUnavailable,
                    "--verify: `migscope run` exited " + std::to_string(run.exit_code) + " for " +
                        c.name + " (see above)");
    }
    if (run.exit_code != kExitOk && run.exit_code != kExitFailure) {
        v.skipped = "`migscope run` exited " + std::to_string(run.exit_code) + " (see above)";
        return v;
    }
    const json doc = json::parse(run.stdout_text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("run"))
        v.skipped = "`migscope run` gave no JSON result";
    else
        v.run = doc["run"];
    return v;
}

// The objective of a measured run (lower is better, as plan::score), when it can be measured:
// energy, makespan and EDP from the run's makespan and board energy counter.
std::optional<double> measured_score(plan::Objective objective, double makespan_s,
                                     const json& energy_j) {
    if (!energy_j.is_number() && objective != plan::Objective::kMakespan)
        return std::nullopt;
    switch (objective) {
        case plan::Objective::kEnergy:
            return energy_j.get<double>();
        case plan::Objective::kMakespan:
            return makespan_s;
        case plan::Objective::kEdp:
            return energy_j.get<double>() * makespan_s;
        case plan::Objective::kThroughput:
            return std::nullopt;  // needs every job's whole-GPU speed measured alongside
    }
    return std::nullopt;
}

// Predicted against measured for the top candidates (jobs in the order the run got them), then
// how far the recommendation's measured objective is from the best measured one.
json verify(const plan::Problem& p, const plan::SearchResult& r, const PlanOptions& o,
            plan::Objective objective, std::ostream* table) {
    json entries = json::array();
    const std::string base = o.run_dir.empty() ? "migscope-runs/plan-verify" : o.run_dir;
    double wall_s = 0;
    std::optional<size_t> best;  // index of the best measured candidate
    std::vector<std::optional<double>> scores;
    for (size_t i = 0; i < r.top.size(); ++i) {
        const plan::Candidate& c = r.top[i];
        std::cerr << "migscope plan: candidate " << i + 1 << " of " << r.top.size() << '\n';
        const RunArgs a = run_args(p, c.plan.front());
        const Verified v = verify_candidate(c, a, o, base + "/" + std::to_string(i + 1));
        wall_s += v.wall_s;
        json entry = {
            {"name", c.name},
            {"predicted",
             {{"makespan_s", c.prediction.makespan_s}, {"energy_j", c.prediction.energy_j}}}};
        scores.emplace_back();
        if (!v.run) {
            entry["skipped"] = v.skipped;
            if (table)
                *table << "  " << c.name << ": not verified: " << v.skipped << "\n";
            entries.push_back(entry);
            continue;
        }
        const json& run = *v.run;
        const double makespan = run.value("window_s", 0.0);
        const json energy = run.contains("energy") ? run["energy"]["counter_energy_j"] : json();
        bool all_ok = true;
        entry["measured"] = {{"makespan_s", makespan}, {"energy_j", energy}};
        entry["wall_s"] = v.wall_s;
        entry["from_db"] = v.from_db;
        entry["jobs"] = json::array();
        for (size_t k = 0; k < a.order.size() && k < run["jobs"].size(); ++k) {
            const json& mj = run["jobs"][k];
            all_ok = all_ok && mj["status"] == "ok";
            entry["jobs"].push_back(
                {{"job", p.jobs[a.order[k]].request.name},
                 {"predicted_items_per_s", c.prediction.jobs[a.order[k]].items_per_s},
                 {"measured_items_per_s", mj["items_per_s"]},
                 {"status", mj["status"]},
                 {"message", mj.value("message", std::string())}});
        }
        if (all_ok)
            scores.back() = measured_score(objective, makespan, energy);
        if (scores.back() && (!best || *scores.back() < *scores[*best]))
            best = i;
        if (table) {
            *table << fmt::format("  {}: makespan {:.1f} s predicted, {:.1f} s measured ({}); ",
                                  c.name, c.prediction.makespan_s, makespan,
                                  signed_pct(makespan, c.prediction.makespan_s));
            if (energy.is_number())
                *table << fmt::format("energy {} kJ predicted, {} kJ measured ({})\n",
                                      kj(c.prediction.energy_j), kj(energy.get<double>()),
                                      signed_pct(energy.get<double>(), c.prediction.energy_j));
            else
                *table << "energy not measured\n";
            for (const json& j : entry["jobs"]) {
                *table << fmt::format(
                    "    {}: {:.0f} items/s predicted, {} measured{}\n",
                    j["job"].get<std::string>(), j["predicted_items_per_s"].get<double>(),
                    j["measured_items_per_s"].is_number()
                        ? fmt::format("{:.0f}", j["measured_items_per_s"].get<double>())
                        : std::string("-"),
                    j["status"] == "ok" ? "" : " (" + j["status"].get<std::string>() + ")");
            }
        }
        entries.push_back(entry);
    }
    json summary = {{"objective", plan::to_string(objective)},
                    {"candidates", r.top.size()},
                    {"runs_wall_s", wall_s}};
    if (best && scores.front()) {
        const double gap = *scores.front() / *scores[*best] - 1;
        summary["best_measured"] = r.top[*best].name;
        summary["recommended_gap"] = gap;
        if (table)
            *table << fmt::format(
                "  Measured {}: the recommendation ({}) is {:.1f} % above the best measured "
                "candidate ({}); {} candidates, runs took {:.0f} s of wall time here.\n",
                plan::to_string(objective), r.top.front().name, 100 * gap, r.top[*best].name,
                r.top.size(), wall_s);
    } else if (table) {
        *table << "  The recommendation's measured " << plan::to_string(objective)
               << " cannot be compared (not measured, a job failed, or an objective a run "
                  "cannot measure).\n";
    }
    return {{"candidates", entries}, {"summary", summary}};
}

int plan_command(const PlanOptions& o) {
    const mig::GpuModel& model = mig::builtin_model(o.gpu_model);
    const plan::Objective objective = plan::parse_objective(o.objective);
    const std::vector<plan::JobRequest> requests = job_requests(o);
    std::string origin;
    const plan::PartitionKind kind =
        o.backend == "green" ? plan::PartitionKind::kGreen : plan::PartitionKind::kMig;
    if (o.verify && o.gpus != 1)
        throw input_error("--verify runs plans of one GPU: give --gpus 1");
    if (o.verify && kind != plan::PartitionKind::kGreen)
        throw input_error(
            "--verify runs the candidates on green SM partitions: give --backend green so that "
            "the predictions are for what runs");
    plan::ProfileSet set = load_profiles(o.profiles, model, origin);
    if (kind == plan::PartitionKind::kGreen)
        set = plan::on_green_contexts(std::move(set), model);
    const plan::Problem problem = plan::make_problem(requests, set, model, {o.min_speed}, kind);
    plan::SearchOptions so;
    so.objective = objective;
    so.gpus = o.gpus;
    so.top_k = o.top;
    so.method = o.method == "exhaustive"  ? plan::Method::kExhaustive
                : o.method == "heuristic" ? plan::Method::kHeuristic
                                          : plan::Method::kAuto;
    const auto start = std::chrono::steady_clock::now();
    const plan::SearchResult result = plan::search(problem, so);
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    Output output(o.output);
    std::ostream& out = output.stream();
    if (o.format == "yaml") {
        std::vector<mig::MigPartedConfig> configs;
        for (size_t i = 0; i < result.top.size(); ++i)
            configs.push_back(
                mig_parted_config("migscope-plan-" + std::to_string(i + 1), result.top[i].plan));
        out << mig::write_mig_parted(configs);
        return kExitOk;
    }
    if (o.format == "json") {
        json doc = result_json(problem, result, o, set, origin, elapsed_ms);
        if (o.verify)
            doc["verify"] = verify(problem, result, o, objective, nullptr);
        out << doc.dump(2) << '\n';
        return kExitOk;
    }
    print_table(problem, result, o, set, origin, elapsed_ms, out);
    if (o.verify) {
        out << "\nVerification (migscope run, green SM partitions, --work " << o.work << "):\n";
        verify(problem, result, o, objective, &out);
    }
    return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, Action& action) {
    auto o = std::make_shared<PlanOptions>();
    CLI::App* cmd = app.add_subcommand(
        "plan",
        "Recommend a partition layout and which job goes where, for an objective, from measured "
        "profiles (offline: the shipped data/profiles-MODEL.json, or --profiles FILE|DB).\n"
        "Example: migscope plan --jobs resnet18:32,bert-base:train:4,resnet50:32 --objective "
        "energy --work 2000");
    cmd->add_option("--jobs", o->jobs, "Comma list of WORKLOAD[:MODE][:BATCH]")->required();
    cmd->add_option("--work", o->work,
                    "Training steps per job: one number for every job, or one per job");
    cmd->add_option("--weights", o->weights,
                    "Instead of --work: each job's work as seconds of its run alone on the whole "
                    "GPU, one for every job or one per job (default 60 each)");
    cmd->add_option("--objective", o->objective, "energy | throughput | makespan | edp")
        ->capture_default_str();
    cmd->add_option("--gpu-model", o->gpu_model, "GPU model (" + mig::known_model_keys() + ")")
        ->capture_default_str();
    cmd->add_option("--gpus", o->gpus, "GPUs of that model to plan on")->capture_default_str();
    cmd->add_option("--backend", o->backend,
                    "mig: partitions are MIG instances with their profiles' SMs; green: SM "
                    "partitions (green contexts), which round SMs up (H200: to multiples of 8)")
        ->check(CLI::IsMember({"mig", "green"}))
        ->capture_default_str();
    cmd->add_option("--profiles", o->profiles,
                    "Profile file (JSON) or results store (SQLite) (default: the shipped "
                    "data/profiles-MODEL.json)");
    cmd->add_option("--min-speed", o->min_speed,
                    "Each job keeps at least this fraction of its whole-GPU speed (0 to 1)")
        ->capture_default_str();
    cmd->add_option("--top", o->top, "Alternatives to list")->capture_default_str();
    cmd->add_option("--method", o->method,
                    "auto (exhaustive on one GPU up to 9 jobs), exhaustive or heuristic")
        ->check(CLI::IsMember({"auto", "exhaustive", "heuristic"}))
        ->capture_default_str();
    cmd->add_option("--format", o->format,
                    "table, json, or yaml (the top layouts as a mig-parted config)")
        ->check(CLI::IsMember({"table", "json", "yaml"}))
        ->capture_default_str();
    cmd->add_option("-o,--output", o->output, "Write here instead of stdout");
    cmd->add_flag("--verify", o->verify,
                  "Run the top candidates with `migscope run` (--backend green, --work; queued "
                  "jobs through --assign) and print predicted against measured, and how far the "
                  "recommendation is from the best measured; with --db, candidates already "
                  "measured there are not run again");
    cmd->add_option("--gpu", o->gpu, "--verify: GPU index (NVML)")->capture_default_str();
    cmd->add_option("--db", o->db, "--verify: also store the runs in this results store");
    cmd->add_option("--run-dir", o->run_dir,
                    "--verify: where the runs' files go (default migscope-runs/plan-verify)");
    cmd->add_option("--worker", o->worker, "--verify: migscope-worker binary");
    cmd->callback([o, &action] { action = [o] { return plan_command(*o); }; });
}

}  // namespace migscope::cli
