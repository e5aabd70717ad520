// Summing a tenant's attributed-energy series out of scraped metrics.
#include "exporter/tenant_energy.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::exporter {
namespace {

constexpr const char* kEnergyMetric = "migscope_energy_joules_total";
constexpr const char* kInfoMetric = "migscope_attribution_info";

std::string label_of(const Labels& labels, const std::string& name) {
    for (const auto& [n, v] : labels) {
        if (n == name)
            return v;
    }
    return "";
}

bool holds(const Labels& labels, const Labels& match) {
    return std::all_of(match.begin(), match.end(), [&](const auto& pair) {
        return std::find(labels.begin(), labels.end(), pair) != labels.end();
    });
}

const MetricFamily* find_family(const std::vector<MetricFamily>& families, const char* name) {
    for (const MetricFamily& f : families) {
        if (f.name == name)
            return &f;
    }
    return nullptr;
}

}  // namespace

std::pair<std::string, std::string> parse_label_match(std::string_view text,
                                                       const std::string& option) {
    const size_t eq = text.find('=');
    const std::string name(text.substr(0, eq));
    if (eq == std::string_view::npos || !valid_name(name, /*metric=*/false))
        throw input_error(option + " '" + user_text::shown(text) +
                          "': expected LABEL=VALUE, e.g. slurm_job_id=123");
    return {name, std::string(text.substr(eq + 1))};
}

TenantEnergy tenant_energy(const std::vector<MetricFamily>& families, const Labels& match) {
    if (match.empty())
        throw input_error("no label to match: give one, e.g. slurm_job_id=123");
    TenantEnergy out;
    std::set<std::string> gpus, consumers, hostnames;
    std::set<std::pair<std::string, std::string>> gpu_hosts;
    if (const MetricFamily* energy = find_family(families, kEnergyMetric)) {
        for (const MetricSample& s : energy->samples) {
            if (!holds(s.labels, match))
                continue;
            out.energy_j += s.value;
            ++out.series;
            gpus.insert(label_of(s.labels, "gpu"));
            consumers.insert(label_of(s.labels, "consumer"));
            hostnames.insert(label_of(s.labels, "Hostname"));
            gpu_hosts.emplace(label_of(s.labels, "gpu"), label_of(s.labels, "Hostname"));
        }
    }
    std::set<std::string> methods;
    if (const MetricFamily* info = find_family(families, kInfoMetric)) {
        for (const MetricSample& s : info->samples) {
            if (gpu_hosts.count({label_of(s.labels, "gpu"), label_of(s.labels, "Hostname")}))
                methods.insert(label_of(s.labels, "method"));
        }
    }
    out.gpus.assign(gpus.begin(), gpus.end());
    out.consumers.assign(consumers.begin(), consumers.end());
    out.methods.assign(methods.begin(), methods.end());
    out.hostnames.assign(hostnames.begin(), hostnames.end());
    return out;
}

}  // namespace migscope::exporter
