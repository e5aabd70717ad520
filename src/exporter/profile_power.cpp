// Each process's dynamic power alone from its job's profile.
#include "exporter/profile_power.h"

#include <algorithm>
#include <cmath>

#include "activity/injection.h"

namespace migscope::exporter {
namespace {

// The profile `job` names in `set`: its exact label, or "workload:mode" when one batch of that
// workload and mode is profiled.
const plan::JobProfile* find_job(const plan::ProfileSet& set, const std::string& job) {
    const plan::JobProfile* by_workload = nullptr;
    int batches = 0;
    for (const plan::JobProfile& p : set.jobs) {
        if (p.label() == job)
            return &p;
        if (!p.external() && p.workload + ":" + p.mode == job) {
            by_workload = &p;
            ++batches;
        }
    }
    return batches == 1 ? by_workload : nullptr;
}

const plan::PartitionProfile* whole_gpu(const plan::JobProfile& job) {
    for (const plan::PartitionProfile& p : job.partitions) {
        if (p.partition == plan::kWholeGpu)
            return &p;
    }
    return nullptr;
}

// The SMs of an MPS client with `sms_exact` of them: a profiled size's SMs within one percent of
// the GPU's (MPS takes whole percents: 3g.71gb's 60 SMs of 132 become 45 %, 59.4 SMs), else the
// nearest whole number.
unsigned mps_sms(const plan::JobProfile& job, double sms_exact, unsigned whole_sms) {
    for (const plan::PartitionProfile& p : job.partitions) {
        if (std::abs(static_cast<double>(p.sms) - sms_exact) <= 0.01 * whole_sms)
            return p.sms;
    }
    return static_cast<unsigned>(std::lround(sms_exact));
}

// Why a profile's powers may not be a probed process's own: its runs lacked the activity probe, or
// do not say, or recorded another kind than the process's probe does.
std::string probe_caveat(const plan::ProfileProvenance& p, const std::string& probe_records) {
    const std::string which = "profiles measured " + p.measured_from + " to " + p.measured_to;
    if (activity::is_activity_probe(p.cuda_injection)) {
        if (probe_records.empty() || p.cuda_injection == activity::probe_injection(probe_records))
            return "";
        return which + " ran under the probe recording " +
               p.cuda_injection.substr(p.cuda_injection.rfind(' ') + 1) +
               ", processes whose probe records " + probe_records;
    }
    if (p.cuda_injection.empty() || p.cuda_injection == "unknown")
        return which + " do not say whether their runs loaded the activity probe";
    return which + " ran without the activity probe (cuda_injection: " + p.cuda_injection + ")";
}

}  // namespace

ProfilePowers ProfilePowers::from_files(const std::vector<std::string>& paths) {
    std::vector<plan::ProfileSet> sets;
    for (const std::string& path : paths)
        sets.push_back(plan::read_profiles_file(path));
    return ProfilePowers(std::move(sets));
}

PowerAlone ProfilePowers::alone(const std::string& gpu_model, const std::string& job, bool mps,
                                std::optional<double> sm_share,
                                const std::string& probe_records) const {
    if (job.empty())
        return {std::nullopt, "its activity probe names no job (MIGSCOPE_JOB)", ""};
    std::string missing = "no --profiles file profiles job '" + job + "'";
    for (const plan::ProfileSet& set : sets_) {
        if (set.gpu_model != gpu_model) {
            missing =
                "a --profiles file holds profiles of " + set.gpu_model + ", not of this GPU (" +
                (gpu_model.empty() ? std::string("a model the catalog does not know") : gpu_model) +
                ")";
            continue;
        }
        const plan::JobProfile* profile = find_job(set, job);
        if (!profile)
            continue;
        const plan::PartitionProfile* whole = whole_gpu(*profile);
        if (!whole) {
            missing = "job '" + job + "' has no whole-GPU profile";
            continue;
        }
        // Time-sliced, a process runs alone on the whole GPU in its turns; under MPS on its
        // share of the SMs, as profiles measured on MPS partitions (green ones draw otherwise:
        // resnet18:32 on 64 green SMs 347 W, on a 3g MPS share 261 W, H200).
        unsigned sms = whole->sms;
        if (mps && sm_share && *sm_share < 1) {
            if (profile->backend != "mps") {
                missing = "job '" + job + "' is profiled on " +
                          (profile->backend.empty() ? std::string("green") : profile->backend) +
                          " partitions, not on MPS (migscope profile --backend mps)";
                continue;
            }
            sms = mps_sms(*profile, *sm_share * whole->sms, whole->sms);
        }
        const std::optional<plan::Estimate> e = plan::estimate(*profile, "", sms);
        if (!e) {
            missing = "job '" + job + "' is not profiled near " + std::to_string(sms) + " SMs";
            continue;
        }
        return {std::max(0.0, e->average_power_w - set.idle_power_w.value), "",
                probe_caveat(set.provenance, probe_records)};
    }
    return {std::nullopt, missing, ""};
}

std::optional<double> ProfilePowers::clocks_up_idle_w(const std::string& gpu_model) const {
    for (const plan::ProfileSet& set : sets_) {
        if (set.gpu_model == gpu_model && set.idle_state == "clocks-up" &&
            set.idle_power_w.reps > 0)
            return set.idle_power_w.value;
    }
    return std::nullopt;
}

}  // namespace migscope::exporter
