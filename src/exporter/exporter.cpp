// Sampling every GPU, splitting its board energy among consumers and writing the metrics.
#include "exporter/exporter.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "core/error.h"
#include "exporter/measured_alone.h"
#include "mig/catalog.h"
#include "nvml/call_error.h"
#include "telemetry/idle_baseline.h"
#include "telemetry/power_regression.h"

namespace migscope::exporter {

// One GPU: how to read it, and the snapshot a scrape writes out.
struct Exporter::Gpu {
    unsigned index = 0;
    std::optional<nvml::Device> device;
    std::unique_ptr<ConsumerReader> reader;
    std::string uuid;
    std::string model;
    std::string model_key;  // the catalog's ("h200"); empty for a model it does not know
    telemetry::LiveIdleBaseline idle;
    telemetry::PowerRegression power;  // shared GPUs: each process's own watts
    MeasuredPowersAlone alone;         // shared GPUs with the probe: each process's power alone

    // Sampler state.
    std::optional<double> last_energy_j;  // last good board counter reading
    double last_t_s = 0;
    // Whether the GPU was idle at the last good reading: an interval teaches idle power only when
    // it was idle at both ends (one that ends idle may have begun with work, as when jobs exit).
    bool last_reading_idle = false;

    // Snapshot (under Exporter::mutex_).
    bool up = false;
    std::optional<double> power_w;
    std::optional<double> board_energy_j;  // the reading the ledger is complete up to
    EnergyLedger ledger;
    std::vector<ConsumerActivity> activity;  // the last interval's
    Sharing sharing = Sharing::kShared;
    bool activity_measured = true;
    bool instances_listed = true;
    bool mps_server = false;
    bool kernel_time = false;
    DynamicSplit dynamic_split = DynamicSplit::kActivity;  // the last interval's
    bool process_signal_missing = false;
    std::string idle_source = "unknown";
    bool down_reported = false;

    explicit Gpu(size_t idle_window) : idle(idle_window) {}
};

namespace {

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0)
        return "unknown";
    return name;
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// `learned_clocks_up`, `learned_deep`, `learned_no_clock`: the idle state the learned static
// power is the mean of.
std::string idle_source_label(telemetry::IdleState state) {
    std::string key = telemetry::state_key(state);
    std::replace(key.begin(), key.end(), '-', '_');
    return "learned_" + key;
}

std::string method_of(Sharing sharing, bool activity_measured, bool instances_listed,
                      bool mps_server, bool kernel_time, bool process_signal_missing) {
    if (sharing == Sharing::kMig && !instances_listed)
        return "mig_unlisted_static_idle_dynamic_unattributed_no_permission";
    if (sharing == Sharing::kMig)
        return activity_measured ? "mig_slices_static_gpm_sm_activity_dynamic"
                                 : "mig_slices_static_dynamic_unattributed_no_gpm";
    // Every process sends the probe's kernel busy time (MPS or not).
    if (kernel_time)
        return "shared_idle_static_kernel_time_dynamic";
    // The driver hands MPS clients' SM use to the server: no per-client signal.
    if (mps_server)
        return "shared_idle_static_mps_server_dynamic_unattributed";
    if (!activity_measured)
        return "shared_idle_static_dynamic_unattributed_no_process_util";
    // Processes run, but not one has given a utilization sample yet.
    if (process_signal_missing)
        return "shared_idle_static_dynamic_unattributed_no_process_samples";
    return "shared_idle_static_process_sm_util_dynamic";
}

// Feeds the interval to the GPU's power regression and gives each consumer the power it has
// learned, where it knows all of them. Only with a static power: without it the dynamic power is
// not known.
void learn_powers(telemetry::PowerRegression& power, IntervalInput& input) {
    if (!input.idle_power_w || !(input.duration_s > 0))
        return;
    telemetry::PowerObservation observation;
    observation.duration_s = input.duration_s;
    observation.dynamic_w = input.energy_j / input.duration_s - *input.idle_power_w;
    std::vector<std::string> keys;
    for (const ConsumerActivity& c : input.consumers) {
        if (c.activity_ratio) {
            observation.activity.emplace_back(c.consumer.key, *c.activity_ratio);
            keys.push_back(c.consumer.key);
        }
    }
    power.add(observation);
    if (keys.size() != input.consumers.size())
        return;
    if (const auto watts = power.full_activity_power_w(keys)) {
        for (size_t i = 0; i < input.consumers.size(); ++i)
            input.consumers[i].full_activity_power_w = (*watts)[i];
    }
}

// Each active process's power alone: measured in the intervals it ran alone, else from its job's
// profile (with --profiles); why one has neither is said once per GPU and reason (the GPU's split
// then stays by activity).
void set_powers_alone(const MeasuredPowersAlone& measured, const ProfilePowers& powers,
                      unsigned gpu_index, const std::string& model_key, IntervalInput& input,
                      std::set<std::string>& said, std::vector<std::string>& warnings) {
    for (ConsumerActivity& c : input.consumers) {
        if (!has_activity(c))
            continue;
        if ((c.alone_dynamic_w = measured.dynamic_w(c.consumer.key))) {
            c.alone_measured = true;
            continue;
        }
        if (powers.empty())
            continue;
        const PowerAlone p = powers.alone(model_key, c.job, input.mps, c.sm_share, c.probe_records);
        c.alone_dynamic_w = p.dynamic_w;
        const std::string key = std::to_string(gpu_index) + "\n" + p.missing;
        if (!p.dynamic_w && said.insert(key).second)
            warnings.push_back("GPU " + std::to_string(gpu_index) + ": process " +
                               c.consumer.labels.at(0).second + " has no power alone (" +
                               p.missing +
                               "): its GPU's split stays by activity while it runs (said once)");
        // The probe slows a job and lowers its power: a profile made without it, or under the
        // other record kind, is not the process's power alone (docs/exporter.md, "Profiles
        // under the probe").
        if (p.dynamic_w && !p.caveat.empty() &&
            said.insert(std::to_string(gpu_index) + "\n" + p.caveat).second)
            warnings.push_back("GPU " + std::to_string(gpu_index) + ": " + p.caveat +
                               "; the probe slows a job and lowers its power, by how much "
                               "depends on what it records, so these powers alone are not the "
                               "processes' own: profile under the probe they run with (said "
                               "once)");
    }
}

}  // namespace

Exporter::Exporter(const nvml::Session& session, ExporterOptions options)
    : options_(std::move(options)) {
    if (!(options_.interval_s > 0))
        throw input_error("exporter: --interval-s must be > 0");
    if (!(options_.retain_finished_s >= 0))
        throw input_error("exporter: --retain-finished-s must be >= 0");
    if (options_.idle_power_w && !(*options_.idle_power_w >= 0))
        throw input_error("exporter: --idle-power-w must be >= 0");
    if (options_.hostname.empty())
        options_.hostname = host_name();
    if (!options_.pod_resources_socket.empty()) {
        pod_resources_ = std::make_unique<PodResourcesWatcher>(
            PodResourcesOptions{options_.pod_resources_socket, options_.pod_resources_refresh_s,
                                options_.pod_resources_deadline_s});
    }
    if (!options_.activity_socket.empty())
        activity_ = std::make_unique<ActivityListener>(options_.activity_socket);
    const unsigned count = session.device_count();
    for (unsigned i = 0; i < count; ++i) {
        auto gpu = std::make_unique<Gpu>(options_.idle_window);
        gpu->index = i;
        try {
            gpu->device = session.device(i);
            gpu->uuid = gpu->device->uuid().value.value_or("");
            gpu->model = gpu->device->name().value.value_or("");
            if (const mig::GpuModel* known = mig::match_builtin_by_device_name(gpu->model))
                gpu->model_key = known->key;
            gpu->reader =
                std::make_unique<ConsumerReader>(*gpu->device, options_.proc_root, activity_.get());
        } catch (const Error& e) {
            warnings_.push_back("GPU " + std::to_string(i) + ": " + e.what());
        }
        gpus_.push_back(std::move(gpu));
    }
}

Exporter::~Exporter() = default;

size_t Exporter::gpu_count() const {
    return gpus_.size();
}

std::pair<std::optional<double>, std::string> Exporter::static_power(const Gpu& gpu) const {
    if (options_.idle_power_w)
        return {options_.idle_power_w, "option"};
    const auto learned = gpu.idle.baseline().static_power();
    if (learned && learned->first == telemetry::IdleState::kClocksUp)
        return {learned->second.mean_w, idle_source_label(learned->first)};
    // Not yet seen idle with its clocks up (a GPU busy since the exporter started, or one that
    // drops to deep idle between jobs): the clocks-up idle power the --profiles were measured
    // against, which their powers alone are above, before deep idle, which undercounts.
    if (const auto profiled = options_.profile_powers.clocks_up_idle_w(gpu.model_key))
        return {profiled, "profiles_clocks_up"};
    if (learned)
        return {learned->second.mean_w, idle_source_label(learned->first)};
    return {std::nullopt, "unknown"};
}

IntervalSplit Exporter::split_since_last(Gpu& gpu, const ConsumerReading& reading, double energy_j,
                                         double t_s, std::optional<double> idle_w,
                                         std::optional<unsigned> sm_clock_mhz,
                                         std::vector<std::string>& warnings) {
    IntervalInput input;
    input.energy_j = energy_j - *gpu.last_energy_j;
    input.duration_s = t_s - gpu.last_t_s;
    input.idle_power_w = idle_w;
    input.sharing = reading.sharing;
    input.total_compute_slices = reading.total_compute_slices;
    input.consumers = reading.consumers;
    input.mps = reading.mps_server;
    // Jobs are named by the probes' reports: in an interval in which one process has sent none
    // yet (it just started), the split is NVML's activity, and no job is missing (said
    // otherwise once the reports stay away: "partial-kernel-time"). An interval in which one
    // process ran alone measures its power alone, which its later intervals then use.
    if (input.sharing == Sharing::kShared && reading.kernel_time) {
        gpu.alone.observe(input);
        set_powers_alone(gpu.alone, options_.profile_powers, gpu.index, gpu.model_key, input,
                         missing_powers_said_, warnings);
    }
    if (input.sharing == Sharing::kShared && options_.learned_power)
        learn_powers(gpu.power, input);
    IntervalSplit split = split_interval(input);
    if (reading.idle && gpu.last_reading_idle && input.duration_s > 0)
        gpu.idle.add_idle(input.energy_j / input.duration_s, sm_clock_mhz);
    return split;
}

void Exporter::sample_once() {
    // The kubelet's last answer (its thread asks it; this never waits for it).
    const std::shared_ptr<const DeviceOwners> owners =
        pod_resources_ ? pod_resources_->owners() : std::make_shared<const DeviceOwners>();
    for (auto& gpu_ptr : gpus_) {
        Gpu& gpu = *gpu_ptr;
        if (!gpu.reader)
            continue;
        try {
            const double t_s = now_s();
            const nvml::Reading<double> energy = gpu.device->energy_j();
            if (!energy.value)
                throw nvml::CallError(ErrorKind::kRuntime,
                                      "nvmlDeviceGetTotalEnergyConsumption failed (NVML code " +
                                          std::to_string(energy.code) + ")",
                                      "nvmlDeviceGetTotalEnergyConsumption", energy.code);
            const nvml::Reading<double> power = gpu.device->power_usage_w();
            ConsumerReading reading = gpu.reader->read(*owners);
            std::vector<std::string> reader_warnings = gpu.reader->take_warnings();

            // The SM clock names the idle state an idle interval teaches
            // (telemetry/idle_baseline.h).
            const std::optional<unsigned> sm_clock_mhz = gpu.device->clocks().sm_mhz;
            gpu.idle.observe_clock(sm_clock_mhz);

            const auto [idle_w, idle_source] = static_power(gpu);
            // A counter that went back (the driver was reloaded) starts a new baseline: the
            // board series resets, the attributed ones keep their values.
            std::optional<IntervalSplit> split;
            if (gpu.last_energy_j && *energy.value >= *gpu.last_energy_j)
                split = split_since_last(gpu, reading, *energy.value, t_s, idle_w, sm_clock_mhz,
                                         reader_warnings);

            std::lock_guard<std::mutex> lock(mutex_);
            for (std::string& w : reader_warnings)
                warnings_.push_back(std::move(w));
            gpu.up = true;
            gpu.down_reported = false;
            gpu.power_w = power.value;
            if (split) {
                gpu.ledger.add(*split, t_s);
                gpu.ledger.retire_unseen(t_s, options_.retain_finished_s);
            }
            gpu.dynamic_split = split ? split->dynamic_split : DynamicSplit::kActivity;
            if (split || !gpu.board_energy_j)
                gpu.board_energy_j = *energy.value;
            gpu.activity = std::move(reading.consumers);
            gpu.sharing = reading.sharing;
            gpu.activity_measured = reading.activity_measured;
            gpu.instances_listed = reading.instances_listed;
            gpu.mps_server = reading.mps_server;
            gpu.kernel_time = reading.kernel_time;
            gpu.process_signal_missing = reading.process_signal_missing;
            gpu.idle_source = idle_source;
            gpu.last_energy_j = *energy.value;
            gpu.last_t_s = t_s;
            gpu.last_reading_idle = reading.idle;
        } catch (const Error& e) {
            // The GPU is down for this interval; its counters keep their values, and the next good
            // reading's delta covers the gap.
            std::lock_guard<std::mutex> lock(mutex_);
            if (!gpu.down_reported)
                warnings_.push_back("GPU " + std::to_string(gpu.index) + " is down: " + e.what());
            gpu.down_reported = true;
            gpu.up = false;
            gpu.last_reading_idle = false;
            gpu.power_w.reset();
            gpu.activity.clear();
        }
    }
}

std::vector<std::string> Exporter::take_warnings() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pod_resources_) {
        for (std::string& w : pod_resources_->take_warnings())
            warnings_.push_back(std::move(w));
    }
    if (activity_) {
        for (std::string& w : activity_->take_warnings())
            warnings_.push_back(std::move(w));
    }
    return std::exchange(warnings_, {});
}

std::vector<MetricFamily> Exporter::metric_families() const {
    // Long as the six families' help texts, the scrape's own documentation; the loop is short.
    MetricFamily up{"migscope_gpu_up",
                    "1 when the last sample of the GPU succeeded, 0 when NVML failed for it "
                    "(e.g. it fell off the bus).",
                    MetricType::kGauge,
                    {}};
    MetricFamily power{"migscope_gpu_power_watts",
                       "Board power (nvmlDeviceGetPowerUsage) at the last sample.",
                       MetricType::kGauge,
                       {}};
    MetricFamily board{"migscope_gpu_energy_joules_total",
                       "Board energy counter (nvmlDeviceGetTotalEnergyConsumption) since the "
                       "driver loaded, at the last sample.",
                       MetricType::kCounter,
                       {}};
    MetricFamily energy{
        "migscope_energy_joules_total",
        "Board energy attributed to each consumer since the exporter started. Per GPU the sum "
        "over consumers equals the board counter's increase since then. consumer=idle: static "
        "power charged to no one (unused MIG slices; all static power on a shared GPU); "
        "consumer=unattributed: dynamic energy with no measured activity; consumer=retired: "
        "the energy of MIG instances and processes gone longer than --retain-finished-s, whose "
        "own series were then dropped.",
        MetricType::kCounter,
        {}};
    MetricFamily activity{"migscope_sm_activity_ratio",
                          "SM activity (0-1) of each consumer over the last interval, as the "
                          "split used it: a MIG instance's GPM SM utilization of its own SMs, or "
                          "a process's SM utilization of the whole GPU.",
                          MetricType::kGauge,
                          {}};
    MetricFamily info{
        "migscope_attribution_info",
        "How each GPU's energy is attributed (value 1). method: mig_slices_static_* = static "
        "power (idle_power_source) split by compute slices, unused slices to idle; shared_idle_"
        "static_* = static power to idle; *_gpm_sm_activity_dynamic / *_process_sm_util_dynamic "
        "= the rest split by partition size x SM activity (migscope run's split without marginal "
        "probes); *_kernel_time_dynamic = the same with each process's activity its kernel busy "
        "time from the activity probe (x its MPS SM share); *_mps_server_dynamic_unattributed = an "
        "MPS server runs and the driver gives its "
        "clients' SM use to it, so the rest is unattributed (never charged to the server); "
        "*_unattributed_* = no per-consumer activity (the driver gives none, or no process has "
        "a sample yet), so the rest is unattributed. dynamic_split: activity = by activity "
        "alone; learned_power = each process its own watts at full activity, learned live by a "
        "regression of the board's dynamic power on the processes' activities (shared GPUs); "
        "profile_power = migscope run's marginal split, each process's power alone measured "
        "in the intervals it ran alone or, for one at least, from the profile of the job its "
        "activity probe names (--profiles); measured_power = the same with every power alone "
        "measured.",
        MetricType::kGauge,
        {}};

    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& gpu_ptr : gpus_) {
        const Gpu& gpu = *gpu_ptr;
        const std::string index = std::to_string(gpu.index);
        const Labels gpu_labels = {{"gpu", index},
                                   {"UUID", gpu.uuid},
                                   {"modelName", gpu.model},
                                   {"Hostname", options_.hostname}};
        up.samples.push_back({gpu_labels, gpu.up ? 1.0 : 0.0});
        if (gpu.power_w)
            power.samples.push_back({gpu_labels, *gpu.power_w});
        if (gpu.board_energy_j)
            board.samples.push_back({gpu_labels, *gpu.board_energy_j});
        const Labels base = {{"gpu", index}, {"UUID", gpu.uuid}, {"Hostname", options_.hostname}};
        auto consumer_labels = [&](const Consumer& c) {
            Labels labels = base;
            labels.emplace_back("consumer", consumer_label(c.kind));
            labels.insert(labels.end(), c.labels.begin(), c.labels.end());
            return labels;
        };
        for (const EnergyLedger::Entry& e : gpu.ledger.entries())
            energy.samples.push_back({consumer_labels(e.consumer), e.energy_j});
        for (const ConsumerActivity& a : gpu.activity) {
            if (a.activity_ratio)
                activity.samples.push_back({consumer_labels(a.consumer), *a.activity_ratio});
        }
        if (gpu.board_energy_j) {
            info.samples.push_back(
                {{{"gpu", index},
                  {"UUID", gpu.uuid},
                  {"Hostname", options_.hostname},
                  {"method",
                   method_of(gpu.sharing, gpu.activity_measured, gpu.instances_listed,
                             gpu.mps_server, gpu.kernel_time, gpu.process_signal_missing)},
                  {"idle_power_source", gpu.idle_source},
                  {"dynamic_split", dynamic_split_label(gpu.dynamic_split)}},
                 1.0});
        }
    }
    return {up, power, board, energy, activity, info};
}

std::string Exporter::metrics_text() const {
    return write_exposition(metric_families());
}

}  // namespace migscope::exporter
