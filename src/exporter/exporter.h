// The exporter's state: every GPU of the host sampled each interval, board energy split among
// consumers into monotonic counters, and the snapshot a scrape reads as Prometheus text.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exporter/activity_listener.h"
#include "exporter/consumers.h"
#include "exporter/energy_ledger.h"
#include "exporter/exposition.h"
#include "exporter/pod_resources.h"
#include "exporter/profile_power.h"
#include "nvml/session.h"

namespace migscope::exporter {

struct ExporterOptions {
    double interval_s = 1.0;
    std::optional<double> idle_power_w;  // none: learned while a GPU is idle (idle_baseline.h)
    std::string hostname;                // the Hostname label; empty: this host's name
    std::string proc_root = "/proc";
    // The kubelet's pod-resources socket, which names the containers holding GPUs and MIG
    // devices; empty: no names (the command's default is kKubeletPodResourcesSocket).
    std::string pod_resources_socket;
    double pod_resources_refresh_s = 5;
    double pod_resources_deadline_s = 1;
    // Where processes running the activity probe send their kernel busy time
    // (activity_listener.h); empty: not listened for.
    std::string activity_socket;
    // Split a shared GPU's dynamic energy by each process's watts, learned live
    // (telemetry::PowerRegression); off: by activity alone. Opt-in: on the H200 (2026-12-05) the
    // learned split missed run's by up to 98 % a job in steady mixes (docs/exporter.md).
    bool learned_power = false;
    // Profiles that give each process of a time-sliced or MPS GPU its power alone, by the job its
    // activity probe names (profile_power.h): then the split is `run`'s marginal one. Empty: none.
    ProfilePowers profile_powers;
    // Idle intervals per clock state whose mean board power is the learned idle power
    // (telemetry::LiveIdleBaseline).
    size_t idle_window = 30;
    // How long a MIG instance or process that is gone keeps its own series; then its energy moves
    // into consumer="retired" (bounded memory with churn; the sum stays whole).
    double retain_finished_s = 3600;
};

class Exporter {
  public:
    // Opens every GPU of `session` (an NVML error for one GPU marks it down, not the exporter).
    Exporter(const nvml::Session& session, ExporterOptions options);
    ~Exporter();

    // One interval for every GPU: read, split, add to the counters. The caller's sampling loop
    // calls it every interval_s (the interval is measured, so jitter costs nothing).
    void sample_once();

    // The metrics of the last sample, as Prometheus text; never calls NVML (cheap, safe while
    // a consumer exits or a GPU fails).
    std::string metrics_text() const;
    std::vector<MetricFamily> metric_families() const;
    // Messages for the operator, each given once (the library never prints).
    std::vector<std::string> take_warnings();

    size_t gpu_count() const;

  private:
    struct Gpu;
    // The GPU's static power and where it came from, first found: the option, the learned idle
    // power with clocks up, the --profiles' ("profiles_clocks_up"), the learned deep or no-clock
    // idle power ("learned_deep", ...), none ("unknown").
    std::pair<std::optional<double>, std::string> static_power(const Gpu& gpu) const;
    // The interval since the GPU's last good reading, split; an interval idle at both of its
    // readings also teaches the idle power (after the split, which used the power learned before).
    IntervalSplit split_since_last(Gpu& gpu, const ConsumerReading& reading, double energy_j,
                                   double t_s, std::optional<double> idle_w,
                                   std::optional<unsigned> sm_clock_mhz,
                                   std::vector<std::string>& warnings);
    ExporterOptions options_;
    std::unique_ptr<PodResourcesWatcher> pod_resources_;  // none when the socket option is empty
    std::unique_ptr<ActivityListener> activity_;          // none when activity_socket is empty
    std::set<std::string> missing_powers_said_;           // sampler thread only
    std::vector<std::unique_ptr<Gpu>> gpus_;
    mutable std::mutex mutex_;  // guards the Gpu snapshots and warnings_
    std::vector<std::string> warnings_;
};

}  // namespace migscope::exporter
