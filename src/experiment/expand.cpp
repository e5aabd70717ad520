// Spec -> cells: layouts resolved and checked, jobs assigned to partitions, keys made.
#include "experiment/expand.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/error.h"
#include "core/user_text.h"
#include "mig/layout.h"
#include "partition/layout.h"

namespace migscope::experiment {
namespace {

std::string number_text(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.15g", v);
    return buffer;
}

std::string job_key(const partition::JobSpec& j) {
    std::string k;
    if (j.external()) {
        k = "command=";
        for (const std::string& a : j.command)
            k += (k.size() > 8 ? " " : "") + a;
    } else {
        k = j.workload;
    }
    k += "/" + j.mode + "/" + (j.batch ? std::to_string(*j.batch) : "default");
    if (!j.data.empty())
        k += "/data=" + j.data;
    if (j.lora_rank)
        k += "/lora_rank=" + std::to_string(*j.lora_rank);
    if (j.steps)
        k += "/steps=" + std::to_string(*j.steps);
    return k;
}

std::string cell_key(const Cell& c) {
    std::string jobs;
    for (const partition::JobSpec& j : c.jobs)
        jobs += (jobs.empty() ? "" : ",") + job_key(j);
    return "section=" + c.section + ";backend=" + partition::to_string(c.backend) +
           ";layout=" + c.layout.text() + ";jobs=" + jobs +
           (c.duration_s > 0 ? ";duration_s=" + number_text(c.duration_s)
                             : ";work_steps=" + std::to_string(c.work_steps)) +
           ";baseline=" + (c.baseline ? "sequential" : "none") +
           ";rep=" + std::to_string(c.repetition) +
           // One GPU keeps the key it had before gpus existed: stores made then resume.
           (c.gpus > 1 ? ";gpus=" + std::to_string(c.gpus) : "");
}

// A layout checked against the model, in job order, with canonical text.
partition::Layout resolve_layout(const std::string& text, const mig::GpuModel& model,
                                 const std::string& path) {
    partition::Layout layout;
    try {
        layout = partition::Layout::parse(text, model).canonical();
    } catch (const Error& e) {
        throw input_error(path + ": " + e.what());
    }
    const mig::LayoutCheck check = mig::check_layout(layout.terms(), model);
    if (!check.layout)
        throw input_error(path + ": layout '" + user_text::shown(text) + "' is not valid on " +
                          model.key + ": " + check.reason);
    return layout;
}

// The section's layouts with the path each came from: sets and all-maximal expanded.
// all-maximal is every maximal layout that can take the section's jobs (at least one partition
// per job: the whole-GPU layout takes one job only); none of them is an error naming the field.
std::vector<std::pair<std::string, std::string>> layout_texts(const Spec& spec, const Section& s,
                                                              const mig::GpuModel& model) {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < s.layouts.size(); ++i) {
        const std::string path = s.path + ".layouts[" + std::to_string(i) + "]";
        const std::string& l = s.layouts[i];
        if (l == "all-maximal") {
            mig::EnumerateOptions options;
            options.maximality = mig::Maximality::kMaximalOnly;
            size_t most_partitions = 0, taken = 0;
            for (const mig::Layout& layout : mig::enumerate_layouts(model, options)) {
                const size_t partitions = layout.instances.size();
                most_partitions = std::max(most_partitions, partitions);
                if (partitions < s.jobs.size())
                    continue;
                out.emplace_back(path + " (all-maximal)", mig::to_string(layout));
                ++taken;
            }
            if (taken == 0)
                throw input_error(path + ": no maximal layout of " + model.key + " has " +
                                  std::to_string(s.jobs.size()) + " partitions for the " +
                                  std::to_string(s.jobs.size()) + " jobs of " + s.path +
                                  ".jobs (the most is " + std::to_string(most_partitions) + ")");
        } else if (const auto set = spec.layout_sets.find(l); set != spec.layout_sets.end()) {
            for (size_t k = 0; k < set->second.size(); ++k)
                out.emplace_back("layout_sets." + l + "[" + std::to_string(k) + "]",
                                 set->second[k]);
        } else {
            out.emplace_back(path, l);
        }
    }
    return out;
}

// Fixed work in proportion to the partition's SMs: what it does while the whole GPU does `steps`.
int64_t matched_steps(int64_t steps, const mig::Profile& p, const mig::GpuModel& model,
                      const std::string& path) {
    if (!p.sms || !model.sm_count)
        throw input_error(path + ": work = \"matched\" needs SM counts, which " + model.key +
                          " does not have for " + p.name);
    return std::max<int64_t>(1,
                             std::llround(static_cast<double>(steps) * *p.sms / *model.sm_count));
}

Cell cell_of(const Section& s, partition::BackendKind backend, int64_t repetition) {
    Cell c;
    c.section = s.name;
    c.kind = s.kind;
    c.on = s.on;
    c.backend = backend;
    c.duration_s = s.duration_s;
    c.work_steps = s.work_steps;
    c.baseline = s.baseline == Baseline::kSequential &&
                 partition::traits(backend).plan_role != partition::PlanRole::kBaseline;
    c.repetition = repetition;
    c.repetitions = s.repetitions;
    c.cooldown_s = s.cooldown_s;
    c.gpus = s.gpus;
    c.gpus_path = s.gpus_path;
    return c;
}

// The jobs on a layout: one per partition in order, cycling when the layout has more partitions.
std::vector<partition::JobSpec> assign(const Section& s, const partition::Layout& layout,
                                       const mig::GpuModel& model, const std::string& path) {
    if (layout.size() < s.jobs.size()) {
        throw input_error(path + ": layout " + layout.text() + " has " +
                          std::to_string(layout.size()) + " partitions for the " +
                          std::to_string(s.jobs.size()) + " jobs of " + s.path + ".jobs");
    }
    std::vector<partition::JobSpec> jobs;
    for (size_t i = 0; i < layout.size(); ++i) {
        partition::JobSpec job = s.jobs[i % s.jobs.size()];
        if (s.work == WorkSplit::kMatched)
            job.steps = matched_steps(s.work_steps, layout.parts()[i].profile, model, path);
        jobs.push_back(std::move(job));
    }
    partition::make_names_unique(jobs);
    return jobs;
}

void expand_section(const Spec& spec, const Section& s, const mig::GpuModel& model,
                    std::vector<Cell>& out) {
    // Resolve every layout once (errors before any cell is made).
    std::vector<std::pair<std::string, partition::Layout>> layouts;
    if (s.kind == SectionKind::kScaling) {
        for (size_t i = 0; i < s.profiles.size(); ++i) {
            const std::string path = s.path + ".profiles[" + std::to_string(i) + "]";
            partition::Layout r = resolve_layout(s.profiles[i], model, path);
            if (r.size() != 1)
                throw input_error(path + ": '" + user_text::shown(s.profiles[i]) +
                                  "' is a layout, not a profile");
            layouts.emplace_back(path, std::move(r));
        }
    } else {
        for (const auto& [path, text] : layout_texts(spec, s, model))
            layouts.emplace_back(path, resolve_layout(text, model, path));
    }

    for (int64_t rep = 1; rep <= s.repetitions; ++rep) {
        for (partition::BackendKind backend : s.backends) {
            if (!partition::traits(backend).takes_layout) {
                Cell c = cell_of(s, backend, rep);
                c.jobs = s.jobs;
                partition::make_names_unique(c.jobs);
                out.push_back(std::move(c));
                continue;
            }
            for (const auto& [path, layout] : layouts) {
                if (s.kind == SectionKind::kMix) {
                    Cell c = cell_of(s, backend, rep);
                    c.layout = layout;
                    c.jobs = assign(s, layout, model, path);
                    out.push_back(std::move(c));
                    continue;
                }
                for (const partition::JobSpec& job : s.jobs) {
                    Cell c = cell_of(s, backend, rep);
                    c.layout = layout;
                    c.jobs = {job};
                    if (s.work == WorkSplit::kMatched)
                        c.jobs[0].steps =
                            matched_steps(s.work_steps, layout.parts()[0].profile, model, path);
                    out.push_back(std::move(c));
                }
            }
        }
    }
}

}  // namespace

std::vector<Cell> expand(const Spec& spec, const mig::GpuModel& model) {
    std::vector<Cell> cells;
    for (const Section& s : spec.sections)
        expand_section(spec, s, model, cells);
    std::set<std::string> keys;
    for (Cell& c : cells) {
        c.key = cell_key(c);
        if (!keys.insert(c.key).second)
            throw input_error("section " + c.section + " has the same run twice (" +
                              partition::to_string(c.backend) + " " + c.layout.text() +
                              "): list each layout, profile and job once");
    }
    return cells;
}

std::vector<Cell> select_cells(const Spec& spec, const std::vector<Cell>& cells,
                               const std::vector<std::string>& only, bool have_gpu) {
    std::set<std::string> names;
    std::string known;
    for (const Section& s : spec.sections) {
        names.insert(s.name);
        known += (known.empty() ? "" : ", ") + s.name;
    }
    for (const std::string& o : only) {
        if (!names.count(o))
            throw input_error("--only " + o + ": no such section (sections: " + known + ")");
    }
    std::vector<Cell> out;
    for (const Cell& c : cells) {
        const bool wanted =
            only.empty() || std::find(only.begin(), only.end(), c.section) != only.end();
        const bool here = c.on == Where::kAny || (c.on == Where::kGpu) == have_gpu;
        if (wanted && here)
            out.push_back(c);
    }
    return out;
}

Estimate estimate(const Cell& cell) {
    const bool cpu = !partition::traits(cell.backend).needs_gpu;
    const double job_startup_s = cpu ? kCpuStartupAllowance_s : kGpuJobStartupAllowance_s;
    const double run_startup_s =
        cpu || cell.jobs.size() < 2 ? job_startup_s : kGpuMixStartupAllowance_s;
    // duration_s is 0 for fixed work
    Estimate e;
    e.seconds = run_startup_s + cell.duration_s + cell.cooldown_s;
    if (cell.baseline)
        e.seconds += static_cast<double>(cell.jobs.size()) * (job_startup_s + cell.duration_s);
    e.without_work = cell.work_steps > 0;
    return e;
}

}  // namespace migscope::experiment
