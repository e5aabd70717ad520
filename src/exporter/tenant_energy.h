// A tenant's energy read back from an exporter's metrics: the sum of the attributed-energy series
// whose labels match (a Slurm job, a pod, a process), with the attribution method of their GPUs.
// A process's series lives as long as the exporter does, so after the tenant ends it holds the
// tenant's whole energy since the exporter first saw it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "exporter/exposition.h"

namespace migscope::exporter {

struct TenantEnergy {
    double energy_j = 0;
    size_t series = 0;                   // matching migscope_energy_joules_total series
    std::vector<std::string> gpus;       // their `gpu` labels, sorted
    std::vector<std::string> consumers;  // their `consumer` kinds, sorted
    std::vector<std::string> methods;    // their GPUs' migscope_attribution_info `method`s
    std::vector<std::string> hostnames;  // their `Hostname`s
};

// "NAME=VALUE" (slurm_job_id=123, pod_uid=..., pid=4001, Hostname=node-1) as a label pair;
// an input error naming `option` for a bad label name or a missing '='.
std::pair<std::string, std::string> parse_label_match(std::string_view text,
                                                       const std::string& option);

// Every migscope_energy_joules_total series whose labels hold every pair of `match`, summed.
// `match` must not be empty (an input error: that would be the whole host).
TenantEnergy tenant_energy(const std::vector<MetricFamily>& families, const Labels& match);

}  // namespace migscope::exporter
