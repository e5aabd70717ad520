// The host total of a run over several GPUs: summed energy with the idle tail of GPUs done
// sooner, the longest window, summed jobs, failed GPUs named.
#include "report/host_total.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/text.h"

namespace migscope::report {
namespace {

std::string gpu_name(int64_t gpu) {
    return "GPU " + std::to_string(gpu);
}

std::string gpu_list(const std::vector<int64_t>& gpus) {
    std::vector<std::string> names;
    for (int64_t g : gpus)
        names.push_back(gpu_name(g));
    return text::join(names, ", ");
}

}  // namespace

HostTotals host_totals(HostMode mode, const std::vector<HostGpu>& gpus) {
    HostTotals t;
    t.mode = mode;
    t.gpus = static_cast<int64_t>(gpus.size());
    if (gpus.empty())
        return t;
    for (const HostGpu& g : gpus) {
        t.window_s = std::max(t.window_s, g.window_s);
        t.jobs += g.jobs;
        t.jobs_ok += g.jobs_ok;
        if (g.failed)
            t.failed_gpus.push_back(g.gpu);
    }
    bool known = true;
    for (const HostGpu& g : gpus) {
        const std::string name = gpu_name(g.gpu);
        if (!g.energy_j) {
            known = false;
            t.warnings.push_back(name + ": board energy not measured" +
                                 (g.failed ? " (it failed)" : "") +
                                 ": the host's total energy is not given");
            continue;
        }
        t.measured_energy_j += *g.energy_j;
        const double wait_s = t.mode == HostMode::kWork ? t.window_s - g.window_s : 0;
        if (wait_s <= 0)
            continue;
        if (!g.idle_power_w) {
            known = false;
            t.warnings.push_back(name + ": idle power not measured (--idle-probe 0?): its " +
                                 std::to_string(wait_s) +
                                 " s waiting for the slowest GPU cannot be charged; the host's "
                                 "total energy is not given");
            continue;
        }
        t.idle_tail_j += *g.idle_power_w * wait_s;
    }
    if (known)
        t.energy_j = t.measured_energy_j + t.idle_tail_j;
    return t;
}

HostTotals host_totals(const std::vector<store::RunRecord>& rows) {
    std::vector<HostGpu> gpus;
    bool interrupted = false;
    for (const store::RunRecord& r : rows) {
        HostGpu g;
        g.gpu = r.gpu_index.value_or(0);
        g.window_s = r.window_s;
        g.energy_j = r.counter_energy_j;
        g.idle_power_w = r.idle_power_w;
        for (const store::JobRecord& j : r.jobs) {
            g.failed = g.failed || j.status == "gpu failed";
            g.jobs_ok += j.status == "ok" ? 1 : 0;
        }
        g.jobs = static_cast<int64_t>(r.jobs.size());
        interrupted = interrupted || r.interrupted;
        gpus.push_back(g);
    }
    HostTotals t = host_totals(
        !rows.empty() && rows.front().mode == "work" ? HostMode::kWork : HostMode::kDuration, gpus);
    t.interrupted = interrupted;
    return t;
}

HostRuns host_runs(const std::vector<store::RunRecord>& runs) {
    HostRuns hosts;
    std::map<int64_t, size_t> index;
    for (const store::RunRecord& r : runs) {
        if (!r.host_run_id)
            continue;
        auto [it, added] = index.emplace(*r.host_run_id, hosts.size());
        if (added)
            hosts.push_back({*r.host_run_id, {}});
        hosts[it->second].second.push_back(r);
    }
    return hosts;
}

const HostRuns::value_type* host_run_ending_at(const HostRuns& hosts, const store::RunRecord& row) {
    for (const auto& host : hosts) {
        if (host.first == row.host_run_id && host.second.back().id == row.id)
            return &host;
    }
    return nullptr;
}

std::string host_total_role(int64_t host_run_id, const HostTotals& t) {
    std::string s =
        "host run " + std::to_string(host_run_id) + ", " + std::to_string(t.gpus) + " GPUs";
    if (!t.failed_gpus.empty())
        s += " (" + gpu_list(t.failed_gpus) + " failed)";
    return s;
}

std::string host_total_note(const HostTotals& t) {
    const bool work = t.mode == HostMode::kWork;
    std::string s = "host total of " + std::to_string(t.gpus) + " GPUs: ";
    if (t.energy_j) {
        s += "energy the sum of each GPU's board energy over its own " +
             std::string(work ? "makespan" : "window");
        if (t.idle_tail_j > 0)
            s += fmt::format(
                " ({:.2f} kJ) + {:.2f} kJ idle of GPUs done sooner, until the "
                "slowest (each at its measured idle power)",
                t.measured_energy_j / 1e3, t.idle_tail_j / 1e3);
    } else {
        s += "no total energy (" + text::join(t.warnings, "; ") + ")";
    }
    s += std::string("; ") + (work ? "makespan the slowest GPU's" : "window the longest GPU's") +
         fmt::format(" ({:.2f} s); jobs summed ({} of {} ok)", t.window_s, t.jobs_ok, t.jobs);
    if (!t.failed_gpus.empty())
        s += "; includes " + gpu_list(t.failed_gpus) + ", which failed: its board energy until " +
             "the failure" + (work ? " then its idle power until the slowest was done" : "") +
             ", its jobs as they ended (\"gpu failed\"): a partial total";
    if (t.interrupted)
        s += "; interrupted: partial results";
    return s;
}

}  // namespace migscope::report
