// Partitions for the jobs of a run.
#include "partition/partitions.h"

#include "core/error.h"

namespace migscope::partition {

std::vector<Partition> layout_partitions(const std::vector<mig::LayoutTerm>& terms,
                                         const mig::GpuModel& model, size_t job_count,
                                         const std::string& device) {
    if (terms.size() != job_count) {
        throw input_error("the layout has " + std::to_string(terms.size()) + " partitions for " +
                          std::to_string(job_count) + " jobs: give one partition per job");
    }
    const mig::LayoutCheck check = mig::check_layout(terms, model);
    if (!check.layout)
        throw input_error("layout not valid on " + model.key + ": " + check.reason);
    std::vector<Partition> out;
    for (const mig::LayoutTerm& t : terms) {
        const mig::Profile& profile = model.require(t.profile);
        if (!profile.sms)
            throw input_error("profile " + profile.name + " of " + model.key +
                              " has no known SM count: cannot size an SM partition for it");
        Partition p;
        p.label = profile.name;
        p.sms = profile.sms;
        p.memory_gib = profile.memory_gib;
        p.device = device;
        out.push_back(std::move(p));
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
