// A plan file as the cells of a host run: its GPUs' partitions, queues and jobs, and its
// sequential baseline.
#include "runner/plan_file.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text.h"
#include "core/text_file.h"
#include "core/user_text.h"
#include "mig/catalog.h"
#include "partition/job.h"
#include "partition/layout.h"

namespace migscope::runner {
namespace {

using nlohmann::json;
using partition::BackendKind;

// Reads the file's JSON strictly enough that every error names where it is.
class PlanDoc {
  public:
    PlanDoc(const json& doc, std::string origin) : doc_(doc), origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw input_error(origin_ + ": " + path + ": " + what);
    }
    const json& at(const json& parent, const std::string& key, const std::string& path,
                   json::value_t type) const {
        const json& v = field(parent, key, path);
        const bool number = type == json::value_t::number_unsigned;
        if (number ? !v.is_number_unsigned() : v.type() != type)
            throw strict::wrong_type(origin_ + ": " + path,
                                     number ? "a whole number" : json_type(json(type)),
                                     json_type(v));
        return v;
    }
    std::string text(const json& parent, const std::string& key, const std::string& path) const {
        if (!field(parent, key, path).is_string())
            throw strict::wrong_type(origin_ + ": " + path, "a string", json_type(parent.at(key)));
        const std::string value = parent.at(key).get<std::string>();
        user_text::check_text(value, origin_ + ": " + path);
        return value;
    }
    const json& doc() const { return doc_; }
    const std::string& origin() const { return origin_; }

  private:
    const json& field(const json& parent, const std::string& key, const std::string& path) const {
        if (!parent.is_object() || !parent.contains(key))
            throw strict::missing_field(
                origin_ + ": " + path,
                "is this a `migscope plan --format json` file of this version?");
        return parent.at(key);
    }
    const json& doc_;
    std::string origin_;
};

// The plan's jobs by name, as job specs; `steps` from each job's work_steps unless `work_steps`.
std::map<std::string, partition::JobSpec> plan_jobs(const PlanDoc& d, int64_t work_steps) {
    std::map<std::string, partition::JobSpec> out;
    const json& jobs = d.at(d.doc(), "jobs", "jobs", json::value_t::array);
    for (size_t i = 0; i < jobs.size(); ++i) {
        const std::string path = "jobs[" + std::to_string(i) + "]";
        const json& j = jobs[i];
        partition::JobSpec spec;
        spec.name = d.text(j, "name", path + ".name");
        partition::check_job_name(spec.name, d.origin() + ": " + path + ".name");
        if (j.contains("workload") && !j.at("workload").is_null())
            spec.workload = d.text(j, "workload", path + ".workload");
        if (spec.external()) {
            const json& command = d.at(j, "command", path + ".command", json::value_t::array);
            for (size_t a = 0; a < command.size(); ++a) {
                if (!command[a].is_string())
                    d.fail(path + ".command", "expected strings");
                spec.command.push_back(command[a].get<std::string>());
                user_text::check_text(spec.command.back(), d.origin() + ": " + path + ".command[" +
                                                               std::to_string(a) + "]");
            }
            if (spec.command.empty())
                d.fail(path, "neither a workload nor a command");
        } else {
            spec.mode = d.text(j, "mode", path + ".mode");
            spec.batch =
                d.at(j, "batch", path + ".batch", json::value_t::number_unsigned).get<int64_t>();
            if (work_steps <= 0) {
                if (!j.contains("work_steps") || j.at("work_steps").is_null())
                    d.fail(path + ".work_steps",
                           "the plan gives job '" + spec.name +
                               "' its work as seconds (--weights), not steps: give --work STEPS");
                const json& steps =
                    d.at(j, "work_steps", path + ".work_steps", json::value_t::number_unsigned);
                spec.steps = steps.get<int64_t>();
                if (*spec.steps <= 0)
                    d.fail(path + ".work_steps", "must be positive");
            }
        }
        if (!out.emplace(spec.name, spec).second)
            d.fail(path + ".name", "'" + spec.name + "' is given twice");
    }
    return out;
}

// One plan (its "gpus") as cells: the busy partitions of each GPU and their queues.
std::vector<GpuCell> plan_cells(const PlanDoc& d, const json& plan, const std::string& path,
                                BackendKind backend, const mig::GpuModel& model,
                                const std::map<std::string, partition::JobSpec>& jobs,
                                const PlanFileOptions& o) {
    std::vector<GpuCell> cells;
    std::map<std::string, std::string> placed;  // job name -> where
    const json& gpus = d.at(plan, "gpus", path + ".gpus", json::value_t::array);
    for (size_t g = 0; g < gpus.size(); ++g) {
        const std::string at = path + ".gpus[" + std::to_string(g) + "]";
        const json& partitions =
            d.at(gpus[g], "partitions", at + ".partitions", json::value_t::array);
        const json& queues = d.at(gpus[g], "queues", at + ".queues", json::value_t::array);
        const bool partitioned = !partitions.empty();
        if (queues.size() != (partitioned ? partitions.size() : 1))
            d.fail(at + ".queues", "one queue per partition (the whole GPU: one)");
        GpuCell c;
        c.gpu = o.first_gpu + static_cast<unsigned>(g);
        c.cell.backend = partitioned ? backend : partition::baseline_backend();
        std::vector<std::string> layout;
        for (size_t k = 0; k < queues.size(); ++k) {
            const std::string qat = at + ".queues[" + std::to_string(k) + "]";
            if (!queues[k].is_array())
                d.fail(qat, "expected an array of job names");
            if (queues[k].empty())
                continue;  // an idle partition: left out, as plan --verify does
            if (partitioned) {
                if (!partitions[k].is_string())
                    d.fail(at + ".partitions[" + std::to_string(k) + "]", "expected a string");
                layout.push_back(partitions[k].get<std::string>());
            }
            for (const json& name : queues[k]) {
                if (!name.is_string())
                    d.fail(qat, "expected job names");
                const auto job = jobs.find(name.get<std::string>());
                if (job == jobs.end())
                    d.fail(qat, "job '" + name.get<std::string>() + "' is not in jobs");
                if (!placed.emplace(job->first, qat).second)
                    d.fail(qat, "job '" + job->first + "' is placed twice");
                c.cell.jobs.push_back(job->second);
                if (partitioned)
                    c.cell.assign.push_back(layout.size() - 1);
            }
        }
        if (c.cell.jobs.empty())
            continue;  // a GPU the plan leaves idle
        if (partitioned) {  // parsed once, here, against the plan's GPU model
            try {
                c.cell.layout = partition::Layout::parse(text::join(layout, "+"), model);
            } catch (const Error& e) {
                d.fail(at + ".partitions", e.what());
            }
        }
        if (c.cell.assign.size() == layout.size())
            c.cell.assign.clear();  // one job per partition, in order
        c.cell.work_steps = o.work_steps;
        for (const partition::JobSpec& j : c.cell.jobs)
            c.cell.work_steps = std::max(c.cell.work_steps, j.steps.value_or(1));
        cells.push_back(std::move(c));
    }
    if (placed.size() != jobs.size())
        d.fail(path + ".gpus", "places " + std::to_string(placed.size()) + " of the " +
                                   std::to_string(jobs.size()) + " jobs");
    return cells;
}

}  // namespace

HostRequest parse_plan_file(const std::string& text, const std::string& origin,
                            const PlanFileOptions& o) {
    user_text::check_text(text, origin);  // as every input file: named before its parser's words
    const json doc = parse_user_json(text, origin);
    const PlanDoc d(doc, origin);
    const std::string backend_text = d.text(doc, "backend", "backend");
    const BackendKind backend = partition::parse_backend(backend_text);
    if (partition::traits(backend).plan_role != partition::PlanRole::kPartitions)
        d.fail("backend", "'" + backend_text + "' is not " +
                              partition::backend_names_text(partition::plans_partitions, "or"));
    const std::map<std::string, partition::JobSpec> jobs = plan_jobs(d, o.work_steps);
    const std::string model_key = d.text(doc, "gpu_model", "gpu_model");
    const mig::GpuModel* model = nullptr;
    try {
        model = &mig::builtin_model(model_key);
    } catch (const Error& e) {
        d.fail("gpu_model", e.what());
    }

    std::string path = "recommended";
    const json* plan = &d.at(doc, "recommended", path, json::value_t::object);
    if (o.candidate > 0) {
        const json& top = d.at(doc, "top", "top", json::value_t::array);
        path = "top[" + std::to_string(o.candidate - 1) + "]";
        if (o.candidate > top.size())
            d.fail(path, "the plan has " + std::to_string(top.size()) + " top candidates");
        plan = &top[o.candidate - 1];
    }
    HostRequest r;
    r.gpus = plan_cells(d, *plan, path, backend, *model, jobs, o);
    if (o.baseline) {
        const json& baselines = d.at(doc, "baselines", "baselines", json::value_t::array);
        for (size_t i = 0; i < baselines.size(); ++i) {
            const std::string at = "baselines[" + std::to_string(i) + "]";
            if (d.text(baselines[i], "name", at + ".name") != "sequential whole GPU")
                continue;
            r.baseline =
                plan_cells(d, d.at(baselines[i], "plan", at + ".plan", json::value_t::object),
                           at + ".plan", partition::baseline_backend(), *model, jobs, o);
        }
        if (r.baseline.empty())
            d.fail("baselines", "no \"sequential whole GPU\" baseline to run");
    }
    return r;
}

HostRequest read_plan_file(const std::string& path, const PlanFileOptions& o) {
    return parse_plan_file(read_text_file(path, "plan file"), path, o);
}

}  // namespace migscope::runner
