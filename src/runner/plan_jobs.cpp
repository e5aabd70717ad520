// The planner's job requests from `migscope plan`'s job and work options, and a plan of the
// user's own.
#include "runner/plan_jobs.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"
#include "partition/job.h"
#include "partition/layout.h"
#include "partition/partitions.h"

namespace migscope::runner {

std::vector<double> per_job(const std::string& option, const std::string& text, size_t jobs) {
    std::vector<double> out;
    for (const std::string& item : text::split(text, ',')) {
        try {
            size_t used = 0;
            out.push_back(std::stod(text::trim(item), &used));
            if (used != text::trim(item).size() || !std::isfinite(out.back()))
                throw std::invalid_argument(item);
        } catch (const std::exception&) {
            throw input_error(option + ": '" + user_text::shown(item) + "' is not a finite number");
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

std::vector<plan::JobRequest> plan_job_requests(const std::string& jobs,
                                                const std::string& jobs_file,
                                                const std::string& work_text,
                                                const std::string& weights_text) {
    if (!work_text.empty() && !weights_text.empty())
        throw input_error("give --work or --weights, not both");
    std::vector<plan::JobRequest> out;
    const std::vector<partition::JobSpec> specs = partition::jobs_from_options(jobs, jobs_file);
    const bool work_list = work_text.find(',') != std::string::npos;
    const std::vector<double> work =
        work_text.empty() ? std::vector<double>{} : per_job("--work", work_text, specs.size());
    const std::vector<double> weights = weights_text.empty()
                                            ? std::vector<double>(specs.size(), kDefaultWeightS)
                                            : per_job("--weights", weights_text, specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        plan::JobRequest r;
        r.name = specs[i].name;
        r.workload = specs[i].workload;
        r.mode = specs[i].mode;
        r.batch = specs[i].batch;
        r.command = specs[i].command;
        if (specs[i].external()) {
            if (work_list && work[i] != 1)
                throw input_error("--work: job '" + r.name +
                                  "' is a command: its work is one run of it (give 1)");
            if (weights_text.find(',') != std::string::npos)
                throw input_error("--weights: job '" + r.name +
                                  "' is a command: its work is one run of it; give --work, with "
                                  "1 for it in a per-job list");
        } else if (!work.empty()) {
            if (work[i] != std::floor(work[i]) || work[i] <= 0 ||
                work[i] > double(plan::kMaxWorkSteps))
                throw input_error("--work: steps must be whole numbers from 1 to 1e15, not " +
                                  user_text::shown(fmt::format("{:g}", work[i])));
            r.work_steps = static_cast<int64_t>(work[i]);
        } else {
            if (!(weights[i] > 0) || weights[i] > plan::kMaxWorkSeconds)
                throw input_error("--weights: seconds must be above 0 and at most 1e9, not " +
                                  user_text::shown(fmt::format("{:g}", weights[i])));
            r.work_whole_gpu_s = weights[i];
        }
        out.push_back(r);
    }
    return out;
}

plan::SearchOptions::GivenLayout given_layout(const std::string& layout_text,
                                              const std::vector<size_t>& assign,
                                              const mig::GpuModel& model, size_t jobs) {
    partition::Layout layout;
    try {
        layout = partition::Layout::parse(layout_text, model);
    } catch (const Error& e) {
        throw Error(e.kind(), std::string("layout: ") + e.what());
    }
    const mig::LayoutCheck check = mig::check_layout(layout.terms(), model);
    if (!check.layout)
        throw input_error("layout: not valid on " + model.key + ": " + check.reason);
    plan::SearchOptions::GivenLayout given{*check.layout, {}};
    if (assign.empty())
        return given;
    const std::vector<partition::JobPlace> places = partition::place_jobs(layout, jobs, assign);
    // check_layout orders the placed partitions by their start: each term of the text takes the
    // first placed instance of its profile (and start, where given) not taken yet.
    const std::vector<mig::Instance>& placed = given.layout.instances;
    std::vector<size_t> instance_of;
    std::vector<bool> taken(placed.size(), false);
    for (const partition::LayoutPart& part : layout.parts()) {
        size_t k = 0;
        while (k < placed.size() && (taken[k] || placed[k].profile != part.profile.name ||
                                     (part.start && placed[k].start != *part.start)))
            ++k;
        taken.at(k) = true;  // check_layout placed every term
        instance_of.push_back(k);
    }
    given.queues.resize(placed.size());
    for (size_t j = 0; j < places.size(); ++j)
        given.queues[instance_of[places[j].term]].push_back(j);
    return given;
}

}  // namespace migscope::runner
