// Partitions for the jobs of a run.
#include "partition/partitions.h"

#include <algorithm>
#include <optional>

#include "core/error.h"

namespace migscope::partition {

std::vector<JobPlace> place_jobs(const Layout& layout, size_t job_count,
                                 const std::vector<size_t>& assign) {
    const size_t parts = layout.size();
    if (assign.empty() && parts != job_count) {
        throw input_error("layout: " + std::to_string(parts) + " partitions for " +
                          std::to_string(job_count) +
                          " jobs: give one partition per job (or assign jobs to partitions)");
    }
    if (!assign.empty() && assign.size() != job_count) {
        throw input_error("assign: " + std::to_string(assign.size()) + " entries for " +
                          std::to_string(job_count) + " jobs: give one partition per job");
    }
    for (size_t j = 0; j < assign.size(); ++j) {
        if (assign[j] >= parts)
            throw input_error("assign[" + std::to_string(j) + "]: job " + std::to_string(j) +
                              " is on partition " + std::to_string(assign[j]) +
                              ", but the layout's partitions are 0 to " +
                              std::to_string(parts - 1));
    }
    for (size_t t = 0; t < parts && !assign.empty(); ++t) {
        if (std::find(assign.begin(), assign.end(), t) == assign.end())
            throw input_error("assign: partition " + std::to_string(t) + " (" +
                              layout.parts()[t].profile.name +
                              ") has no job: leave it out of the layout");
    }
    std::vector<JobPlace> out;
    std::vector<std::optional<size_t>> last_on(parts);  // the last job queued on a partition
    for (size_t j = 0; j < job_count; ++j) {
        const size_t term = assign.empty() ? j : assign[j];
        out.push_back({term, last_on[term]});
        last_on[term] = j;
    }
    return out;
}

std::vector<Partition> layout_partitions(const Layout& layout, const mig::GpuModel& model,
                                         size_t job_count, const std::string& device,
                                         const std::vector<size_t>& assign) {
    const std::vector<JobPlace> places = place_jobs(layout, job_count, assign);
    const mig::LayoutCheck check = mig::check_layout(layout.terms(), model);
    if (!check.layout)
        throw input_error("layout not valid on " + model.key + ": " + check.reason);
    std::vector<Partition> by_part;
    for (const LayoutPart& part : layout.parts()) {
        const mig::Profile& profile = part.profile;
        if (!profile.sms)
            throw input_error("profile " + profile.name + " of " + model.key +
                              " has no known SM count: cannot size an SM partition for it");
        Partition p;
        p.label = profile.name;
        p.sms = profile.sms;
        p.memory_gib = profile.memory_gib;
        p.device = device;
        by_part.push_back(std::move(p));
    }
    std::vector<Partition> out;
    for (const JobPlace& place : places) {
        out.push_back(by_part[place.term]);
        out.back().after_job = place.after_job;
    }
    return out;
}

std::vector<Partition> whole_gpu_partitions(const mig::GpuModel& model, size_t job_count,
                                            const std::string& device) {
    Partition p;
    p.label = "whole GPU";
    p.sms = model.sm_count;
    p.device = device;
    return std::vector<Partition>(job_count, p);
}

std::vector<Partition> cpu_partitions(const std::vector<unsigned>& cores, size_t job_count) {
    if (job_count == 0 || job_count > cores.size()) {
        throw input_error(std::to_string(job_count) + " jobs on " + std::to_string(cores.size()) +
                          " CPU cores: the cpu backend gives every job at least one core");
    }
    const size_t share = cores.size() / job_count;
    std::vector<Partition> out;
    for (size_t j = 0; j < job_count; ++j) {
        Partition p;
        p.cpu_cores.assign(cores.begin() + static_cast<long>(j * share),
                           cores.begin() + static_cast<long>((j + 1) * share));
        p.label = share == 1 ? "core " + std::to_string(p.cpu_cores.front())
                             : "cores " + std::to_string(p.cpu_cores.front()) + "-" +
                                   std::to_string(p.cpu_cores.back());
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace migscope::partition
