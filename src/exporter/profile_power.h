// Each process's dynamic power alone, from the profile of the job its activity probe names
// (`migscope exporter --profiles`): the job alone on the whole GPU when processes take turns
// (time-slicing), or on its SM share under MPS (from profiles measured with `--backend mps`),
// less the profiles' idle power. The exporter's split uses them as `run` uses its probes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/profile.h"

namespace migscope::exporter {

// A process's power alone, or why there is none.
struct PowerAlone {
    std::optional<double> dynamic_w;  // board power above the profiles' idle power
    std::string missing;              // why none: "no profile of job 'x'", ...
    // Why dynamic_w may not be the process's own: its profile's runs did not load the activity
    // probe (or do not say), or recorded the other kind than the process's probe; the probe slows
    // a job and lowers its power. Empty when they ran as the process does.
    std::string caveat;
};

class ProfilePowers {
  public:
    ProfilePowers() = default;
    explicit ProfilePowers(std::vector<plan::ProfileSet> sets) : sets_(std::move(sets)) {}
    // Reads each file (plan::read_profiles_file: an input error names the file and the field).
    static ProfilePowers from_files(const std::vector<std::string>& paths);
    bool empty() const { return sets_.empty(); }

    // `job` as the probe names it: a profile's label ("resnet18:train:32", a command's name) or
    // "workload:mode" where one batch of it is profiled. The first file that profiles it answers.
    // `mps`: the process is an MPS client with `sm_share` of the SMs (none: all of them). Only
    // profiles of the process's GPU model (catalog key, "h200") answer. `probe_records`: what the
    // process's probe records (activity::probe_records; empty: not said), which the profile's
    // runs should have recorded too (PowerAlone::caveat).
    PowerAlone alone(const std::string& gpu_model, const std::string& job, bool mps,
                     std::optional<double> sm_share, const std::string& probe_records = "") const;
    // The board's idle power with its clocks up that the profiles of this GPU model (catalog key,
    // "h200") were measured against, from the first such file; none when no file gives one.
    std::optional<double> clocks_up_idle_w(const std::string& gpu_model) const;

  private:
    std::vector<plan::ProfileSet> sets_;
};

}  // namespace migscope::exporter
