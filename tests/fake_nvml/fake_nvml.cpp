// A fake libnvidia-ml for tests: exports the NVML entry points migscope uses, answering from a JSON
// file named by $MIGSCOPE_FAKE_NVML_CONFIG. Power follows a piecewise-linear trace in time since
// nvmlInit, and the energy counter is its exact integral, so counter and trace can be compared;
// or, for a device with "busy_power_w" under $MIGSCOPE_FAKE_NVML_BUSY_DIR, power follows whether a
// fake worker runs (as a real board's does across many runs in one process).
// MIG is stateful: GPU and compute instances (preloaded from the config or created through the
// API) live until destroyed or until the last nvmlShutdown; see h200-mig.json for the MIG keys.
// Activity (see exporter-*.json): "processes" may carry "sm_util" (percent, for
// nvmlDeviceGetProcessUtilization), "sm_util_until_s" (listed, but no sample from then on) and
// "start_s"/"end_s" (alive only between them); a MIG
// instance may carry "sm_activity_pct" (GPM SM utilization); "lost_after_s" makes the GPU answer
// "GPU is lost" to its power, energy, process and GPM calls from then on;
// "fail_process_utilization" makes nvmlDeviceGetProcessUtilization fail for a while.
#include <signal.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nvml/nvml_api.h"

namespace api = migscope::nvml::api;
using nlohmann::json;

namespace {

struct FakeGpuInstance;

struct FakeDevice {
    json config;
    std::vector<std::pair<double, double>> power_trace;  // (t_s, W), piecewise linear
    std::set<std::string> unsupported;
    unsigned index = 0;
    // Set on MIG device handles (one per compute instance): the GPU and instance ids.
    FakeDevice* parent = nullptr;
    unsigned gpu_instance_id = 0;
    unsigned compute_instance_id = 0;
    // Calls so far, for the configured failures ("fail_gpu_instance_create": {"call": N, ...}).
    unsigned gpu_instance_creates = 0;
    unsigned compute_instance_creates = 0;
    unsigned gpu_instance_destroys = 0;
    unsigned mig_devices_made = 0;
    // "busy_power_w" with MIGSCOPE_FAKE_NVML_BUSY_DIR: the power drawn at the last read and the
    // energy drawn until then.
    double drawn_w = 0, drawn_j = 0, drawn_until_s = 0;
};

struct FakeComputeInstance {
    FakeGpuInstance* gpu_instance = nullptr;
    bool alive = true;
    unsigned id = 0;
    unsigned profile_id = 0;  // equal to its profile enum in this fake
    unsigned start = 0;       // compute slices within the GPU instance
    unsigned size = 0;
    FakeDevice* mig_device = nullptr;
};

struct FakeGpuInstance {
    FakeDevice* device = nullptr;
    bool alive = true;
    unsigned id = 0;
    unsigned profile_id = 0;
    unsigned start = 0;  // memory slices
    unsigned size = 0;
    unsigned compute_slices = 0;
    unsigned sms = 0;
    unsigned long long memory_mib = 0;
    std::string name;  // "3g.71gb"
    std::vector<FakeComputeInstance*> compute_instances;
    double sm_activity_pct = 0;  // what GPM reports for this instance
};

struct FakeGpmSample {
    FakeDevice* device = nullptr;
    unsigned gpu_instance_id = 0;
    double t_s = -1;  // -1: never filled
};

// Everything lives until the last nvmlShutdown: destroyed instances stay allocated (marked dead) so
// that a stale handle reads as "invalid argument" rather than a crash.
struct FakeState {
    json config;
    std::vector<std::unique_ptr<FakeDevice>> devices;
    std::vector<std::unique_ptr<FakeGpuInstance>> gpu_instances;
    std::vector<std::unique_ptr<FakeComputeInstance>> compute_instances;
    std::vector<std::unique_ptr<FakeDevice>> mig_devices;
    std::chrono::steady_clock::time_point t0;
    int init_count = 0;  // nvmlInit_v2/nvmlShutdown are reference counted, as in NVML
};

std::mutex g_mutex;
std::unique_ptr<FakeState> g_state;

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_state->t0).count();
}

double power_at(const FakeDevice& d, double t) {
    const auto& tr = d.power_trace;
    if (t <= tr.front().first)
        return tr.front().second;
    for (size_t i = 1; i < tr.size(); ++i) {
        if (t <= tr[i].first) {
            const double f = (t - tr[i - 1].first) / (tr[i].first - tr[i - 1].first);
            return tr[i - 1].second + f * (tr[i].second - tr[i - 1].second);
        }
    }
    return tr.back().second;
}

// Whether a (fake) worker runs: a file in MIGSCOPE_FAKE_NVML_BUSY_DIR named by a live process's id.
bool worker_running() {
    const char* dir = std::getenv("MIGSCOPE_FAKE_NVML_BUSY_DIR");
    if (!dir)
        return false;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const pid_t pid = static_cast<pid_t>(std::atol(entry.path().filename().c_str()));
        if (pid > 0 && kill(pid, 0) == 0)
            return true;
    }
    return false;
}

// A device with "busy_power_w" under MIGSCOPE_FAKE_NVML_BUSY_DIR draws that while a worker runs
// and its trace's first value otherwise; the energy counter adds what was drawn between reads.
bool follows_workers(const FakeDevice& d) {
    return d.config.contains("busy_power_w") && std::getenv("MIGSCOPE_FAKE_NVML_BUSY_DIR");
}

void advance(FakeDevice& d, double t) {
    d.drawn_j += d.drawn_w * (t - d.drawn_until_s);
    d.drawn_until_s = t;
    d.drawn_w =
        worker_running() ? d.config["busy_power_w"].get<double>() : d.power_trace.front().second;
}

// Exact integral of the piecewise-linear trace over [0, t], in joules.
double energy_until(const FakeDevice& d, double t) {
    double e = 0, prev_t = 0, prev_w = power_at(d, 0);
    for (const auto& [pt, pw] : d.power_trace) {
        if (pt <= prev_t)
            continue;
        const double seg_end = std::min(pt, t);
        const double w_end = power_at(d, seg_end);
        e += 0.5 * (prev_w + w_end) * (seg_end - prev_t);
        prev_t = seg_end;
        prev_w = w_end;
        if (pt >= t)
            return e;
    }
    return e + prev_w * (t - prev_t);
}

double power_now(FakeDevice& d) {
    if (!follows_workers(d))
        return power_at(d, now_s());
    advance(d, now_s());
    return d.drawn_w;
}

double energy_now(FakeDevice& d) {
    if (!follows_workers(d))
        return energy_until(d, now_s());
    advance(d, now_s());
    return d.drawn_j;
}

FakeDevice* dev(api::Device handle) {
    return reinterpret_cast<FakeDevice*>(handle);
}

bool unsupported(api::Device handle, const char* call) {
    return dev(handle)->unsupported.count(call) > 0;
}

// "lost_after_s": from then on the GPU (or the GPU of a MIG device) has fallen off the bus.
bool lost(api::Device handle) {
    const FakeDevice* d = dev(handle)->parent ? dev(handle)->parent : dev(handle);
    return d->config.contains("lost_after_s") && g_state &&
           now_s() >= d->config["lost_after_s"].get<double>();
}

// A scripted process is alive between its "start_s" (default 0) and "end_s" (default never).
bool process_alive(const json& p) {
    const double t = now_s();
    return t >= p.value("start_s", 0.0) && t < p.value("end_s", 1e300);
}

api::Return get_uint(api::Device handle, const char* call, const char* key, unsigned* out) {
    if (unsupported(handle, call) || !dev(handle)->config.contains(key)) {
        return api::kErrorNotSupported;
    }
    *out = dev(handle)->config[key].get<unsigned>();
    return api::kSuccess;
}

// ---- MIG -------------------------------------------------------------------------------------

const json* mig_profile_by_id(const FakeDevice* d, unsigned profile_id) {
    if (!d->config.contains("mig_profiles"))
        return nullptr;
    for (const json& p : d->config.at("mig_profiles")) {
        if (p["id"].get<unsigned>() == profile_id)
            return &p;
    }
    return nullptr;
}

bool mig_enabled(const FakeDevice* d) {
    return d->config.value("mig_current", 0u) == api::kMigEnabled;
}

std::vector<FakeGpuInstance*> live_gpu_instances(FakeState& state, const FakeDevice* d) {
    std::vector<FakeGpuInstance*> out;
    for (auto& gi : state.gpu_instances) {
        if (gi->alive && gi->device == d)
            out.push_back(gi.get());
    }
    return out;
}

// A configured failure of the Nth call of one kind: {"call": N, "code": NVML code}.
api::Return injected_failure(const FakeDevice* d, const char* key, unsigned call) {
    if (!d->config.contains(key))
        return api::kSuccess;
    const json& f = d->config.at(key);
    if (f.value("call", 0u) != call)
        return api::kSuccess;
    return f.value("code", api::kErrorInsufficientResources);
}

// NVML's checks for a new GPU instance: the placement is one the profile allows, it overlaps no
// live instance, and the profile count and the compute slices stay within the GPU's.
api::Return make_gpu_instance(FakeState& state, FakeDevice* d, unsigned profile_id,
                              api::GpuInstancePlacement placement, std::optional<unsigned> id,
                              FakeGpuInstance** out) {
    const json* p = mig_profile_by_id(d, profile_id);
    if (p == nullptr)
        return api::kErrorInvalidArgument;
    bool allowed = false;
    for (const json& pl : (*p)["placements"]) {
        allowed |=
            pl[0].get<unsigned>() == placement.start && pl[1].get<unsigned>() == placement.size;
    }
    if (!allowed)
        return api::kErrorInvalidArgument;
    const unsigned slices = (*p)["slices"];
    unsigned same_profile = 0, compute_used = 0;
    std::set<unsigned> ids;
    for (FakeGpuInstance* gi : live_gpu_instances(state, d)) {
        const bool overlap =
            placement.start < gi->start + gi->size && gi->start < placement.start + placement.size;
        if (overlap)
            return api::kErrorInsufficientResources;
        same_profile += gi->profile_id == profile_id;
        compute_used += gi->compute_slices;
        ids.insert(gi->id);
    }
    if (same_profile >= (*p)["instances"].get<unsigned>() ||
        compute_used + slices > d->config.value("compute_slices", 7u)) {
        return api::kErrorInsufficientResources;
    }
    auto gi = std::make_unique<FakeGpuInstance>();
    gi->device = d;
    if (id) {
        if (ids.count(*id))
            return api::kErrorInvalidArgument;
        gi->id = *id;
    } else {
        gi->id = 1;
        while (ids.count(gi->id))
            ++gi->id;
    }
    gi->profile_id = profile_id;
    gi->start = placement.start;
    gi->size = placement.size;
    gi->compute_slices = slices;
    gi->sms = (*p)["sms"];
    gi->memory_mib = (*p)["memory_mib"];
    std::string name = p->value("name", std::to_string(slices) + "g.fake");
    gi->name = name.rfind("MIG ", 0) == 0 ? name.substr(4) : name;
    *out = gi.get();
    state.gpu_instances.push_back(std::move(gi));
    return api::kSuccess;
}

// Compute instance profiles by enum (NVML_COMPUTE_INSTANCE_PROFILE_*): compute slices, 0 = past
// the last enum. This fake offers 1, 2, 3, 4 and 7 slices, each where it fits in the GI.
unsigned ci_profile_slices(unsigned profile_enum) {
    static const unsigned kSlices[] = {1, 2, 3, 4, 7, 8, 6, 1};
    return profile_enum < std::size(kSlices) ? kSlices[profile_enum] : 0;
}

bool ci_profile_offered(const FakeGpuInstance* gi, unsigned profile_enum) {
    const unsigned slices = ci_profile_slices(profile_enum);
    return slices != 0 && profile_enum <= 4 && slices <= gi->compute_slices;
}

api::Return make_compute_instance(FakeState& state, FakeGpuInstance* gi, unsigned profile_id,
                                  FakeComputeInstance** out) {
    if (!ci_profile_offered(gi, profile_id))
        return api::kErrorNotSupported;
    const unsigned slices = ci_profile_slices(profile_id);
    unsigned used = 0;
    std::set<unsigned> ids;
    for (FakeComputeInstance* ci : gi->compute_instances) {
        if (ci->alive) {
            used = std::max(used, ci->start + ci->size);
            ids.insert(ci->id);
        }
    }
    if (used + slices > gi->compute_slices)
        return api::kErrorInsufficientResources;
    auto ci = std::make_unique<FakeComputeInstance>();
    ci->gpu_instance = gi;
    ci->profile_id = profile_id;
    ci->start = used;
    ci->size = slices;
    while (ids.count(ci->id))
        ++ci->id;
    // The MIG device (what CUDA sees) of this compute instance, with a fresh UUID.
    FakeDevice* parent = gi->device;
    auto mig = std::make_unique<FakeDevice>();
    char uuid[96];
    std::snprintf(uuid, sizeof(uuid), "MIG-%08x-%04x-4%03x-8%03x-%012x",
                  0xfa4e0000u + parent->index, gi->id, ci->id, ++parent->mig_devices_made,
                  gi->start * 16 + gi->size);
    mig->config = {
        {"name",
         parent->config.value("name", std::string("Fake GPU")) + " MIG " +
             (slices == gi->compute_slices ? gi->name : std::to_string(slices) + "c." + gi->name)},
        {"uuid", uuid},
        {"memory_total_mib", gi->memory_mib},
        {"memory_used_mib", 0}};
    mig->power_trace.emplace_back(0.0, 0.0);
    mig->parent = parent;
    mig->gpu_instance_id = gi->id;
    mig->compute_instance_id = ci->id;
    ci->mig_device = mig.get();
    state.mig_devices.push_back(std::move(mig));
    gi->compute_instances.push_back(ci.get());
    *out = ci.get();
    state.compute_instances.push_back(std::move(ci));
    return api::kSuccess;
}

// "mig_instances": [{"profile_id": 9, "start": 0, "id": 2 (optional), "compute_instances": [3]
// (compute slices of each CI; default one full-size CI, [] for none)}].
api::Return preload_mig_instances(FakeState& state, FakeDevice* d) {
    for (const json& m : d->config.value("mig_instances", json::array())) {
        const json* p = mig_profile_by_id(d, m.at("profile_id").get<unsigned>());
        if (p == nullptr)
            return api::kErrorUnknown;
        api::GpuInstancePlacement placement{m.at("start").get<unsigned>(),
                                            (*p)["placements"][0][1].get<unsigned>()};
        std::optional<unsigned> id;
        if (m.contains("id"))
            id = m["id"].get<unsigned>();
        FakeGpuInstance* gi = nullptr;
        if (make_gpu_instance(state, d, (*p)["id"], placement, id, &gi) != api::kSuccess)
            return api::kErrorUnknown;  // a fixture that NVML itself would not accept
        json cis = m.value("compute_instances", json::array({gi->compute_slices}));
        for (const json& slices : cis) {
            unsigned profile_enum = 0;
            while (ci_profile_slices(profile_enum) != 0 &&
                   ci_profile_slices(profile_enum) != slices.get<unsigned>()) {
                ++profile_enum;
            }
            FakeComputeInstance* ci = nullptr;
            if (make_compute_instance(state, gi, profile_enum, &ci) != api::kSuccess)
                return api::kErrorUnknown;
        }
        gi->sm_activity_pct = m.value("sm_activity_pct", 0.0);
    }
    return api::kSuccess;
}

// Live MIG devices of a GPU, in index order (by GPU instance id, then compute instance id).
std::vector<FakeComputeInstance*> live_compute_instances(FakeState& state, const FakeDevice* d) {
    std::vector<FakeComputeInstance*> out;
    for (FakeGpuInstance* gi : live_gpu_instances(state, d)) {
        for (FakeComputeInstance* ci : gi->compute_instances) {
            if (ci->alive)
                out.push_back(ci);
        }
    }
    std::sort(
        out.begin(), out.end(), [](const FakeComputeInstance* a, const FakeComputeInstance* b) {
            return std::pair(a->gpu_instance->id, a->id) < std::pair(b->gpu_instance->id, b->id);
        });
    return out;
}

FakeGpuInstance* gi_of(api::GpuInstance handle) {
    return reinterpret_cast<FakeGpuInstance*>(handle);
}
FakeComputeInstance* ci_of(api::ComputeInstance handle) {
    return reinterpret_cast<FakeComputeInstance*>(handle);
}
bool no_permission(const FakeDevice* d) {
    return d->config.value("mig_no_permission", false);
}

}  // namespace

extern "C" {

api::Return nvmlInit_v2() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_state) {
        ++g_state->init_count;
        return api::kSuccess;
    }
    const char* path = std::getenv("MIGSCOPE_FAKE_NVML_CONFIG");
    if (path == nullptr)
        return api::kErrorDriverNotLoaded;
    std::ifstream in(path);
    if (!in)
        return api::kErrorDriverNotLoaded;
    auto state = std::make_unique<FakeState>();
    state->config = json::parse(in);
    if (int err = state->config.value("init_error", 0))
        return err;
    state->t0 = std::chrono::steady_clock::now();
    for (const json& d : state->config["devices"]) {
        auto fake = std::make_unique<FakeDevice>();
        fake->config = d;
        if (d.contains("power_trace")) {
            for (const json& p : d["power_trace"])
                fake->power_trace.emplace_back(p[0], p[1]);
        } else {
            fake->power_trace.emplace_back(0.0, d.value("power_w", 100.0));
        }
        for (const json& u : d.value("unsupported", json::array()))
            fake->unsupported.insert(u);
        fake->index = static_cast<unsigned>(state->devices.size());
        state->devices.push_back(std::move(fake));
    }
    for (auto& fake : state->devices) {
        if (api::Return rc = preload_mig_instances(*state, fake.get()); rc != api::kSuccess)
            return rc;
    }
    state->init_count = 1;
    g_state = std::move(state);
    return api::kSuccess;
}

api::Return nvmlShutdown() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_state && --g_state->init_count <= 0)
        g_state.reset();
    return api::kSuccess;
}

const char* nvmlErrorString(api::Return code) {
    switch (code) {
        case api::kSuccess:
            return "Success";
        case api::kErrorNotSupported:
            return "Not Supported";
        case api::kErrorDriverNotLoaded:
            return "Driver Not Loaded";
        case api::kErrorInvalidArgument:
            return "Invalid Argument";
        case api::kErrorNoPermission:
            return "Insufficient Permissions";
        case api::kErrorNotFound:
            return "Not Found";
        case api::kErrorInsufficientSize:
            return "Insufficient Size";
        case api::kErrorInUse:
            return "In use by another client";
        case api::kErrorInsufficientResources:
            return "Insufficient resources";
        case api::kErrorUninitialized:
            return "Uninitialized";
        case api::kErrorGpuIsLost:
            return "GPU is lost";
        default:
            return "Unknown Error";
    }
}

api::Return nvmlSystemGetDriverVersion(char* version, unsigned length) {
    std::snprintf(version, length, "%s",
                  g_state->config.value("driver_version", std::string("0.0")).c_str());
    return api::kSuccess;
}

api::Return nvmlSystemGetCudaDriverVersion(int* version) {
    *version = g_state->config.value("cuda_driver_version", 13000);
    return api::kSuccess;
}

api::Return nvmlDeviceGetCount_v2(unsigned* count) {
    *count = static_cast<unsigned>(g_state->devices.size());
    return api::kSuccess;
}

api::Return nvmlDeviceGetHandleByIndex_v2(unsigned index, api::Device* device) {
    if (index >= g_state->devices.size())
        return api::kErrorInvalidArgument;
    *device = reinterpret_cast<api::Device>(g_state->devices[index].get());
    return api::kSuccess;
}

api::Return nvmlDeviceGetName(api::Device d, char* name, unsigned length) {
    std::snprintf(name, length, "%s",
                  dev(d)->config.value("name", std::string("Fake GPU")).c_str());
    return api::kSuccess;
}

api::Return nvmlDeviceGetUUID(api::Device d, char* uuid, unsigned length) {
    std::snprintf(uuid, length, "%s",
                  dev(d)->config.value("uuid", std::string("GPU-fake")).c_str());
    return api::kSuccess;
}

api::Return nvmlDeviceGetMemoryInfo(api::Device d, api::Memory* memory) {
    if (unsupported(d, "nvmlDeviceGetMemoryInfo"))
        return api::kErrorNotSupported;
    const double mib = 1048576.0;
    memory->total =
        static_cast<unsigned long long>(dev(d)->config.value("memory_total_mib", 1024.0) * mib);
    memory->used =
        static_cast<unsigned long long>(dev(d)->config.value("memory_used_mib", 0.0) * mib);
    memory->free = memory->total - memory->used;
    return api::kSuccess;
}

api::Return nvmlDeviceGetMigMode(api::Device d, unsigned* current, unsigned* pending) {
    if (unsupported(d, "nvmlDeviceGetMigMode"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    *current = dev(d)->config.value("mig_current", 0u);
    *pending = dev(d)->config.value("mig_pending", 0u);
    return api::kSuccess;
}

api::Return nvmlDeviceGetEnforcedPowerLimit(api::Device d, unsigned* limit_mw) {
    if (unsupported(d, "nvmlDeviceGetEnforcedPowerLimit"))
        return api::kErrorNotSupported;
    *limit_mw = static_cast<unsigned>(dev(d)->config.value("power_limit_w", 700.0) * 1000.0);
    return api::kSuccess;
}

api::Return nvmlDeviceGetPowerUsage(api::Device d, unsigned* power_mw) {
    if (unsupported(d, "nvmlDeviceGetPowerUsage"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    std::lock_guard<std::mutex> lock(g_mutex);
    *power_mw = static_cast<unsigned>(power_now(*dev(d)) * 1000.0);
    return api::kSuccess;
}

api::Return nvmlDeviceGetTotalEnergyConsumption(api::Device d, unsigned long long* energy_mj) {
    if (unsupported(d, "nvmlDeviceGetTotalEnergyConsumption"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    std::lock_guard<std::mutex> lock(g_mutex);
    const double base_j = dev(d)->config.value("energy_base_j", 1.0e6);
    *energy_mj = static_cast<unsigned long long>((base_j + energy_now(*dev(d))) * 1000.0);
    return api::kSuccess;
}

api::Return nvmlDeviceGetFieldValues(api::Device d, int count, api::FieldValue* values) {
    if (unsupported(d, "nvmlDeviceGetFieldValues"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    std::lock_guard<std::mutex> lock(g_mutex);
    const double w = power_now(*dev(d));
    for (int i = 0; i < count; ++i) {
        api::FieldValue& v = values[i];
        v.valueType = api::kValueUnsignedInt;
        if (v.fieldId == api::kFieldPowerInstant || v.fieldId == api::kFieldPowerAverage) {
            v.nvmlReturn = api::kSuccess;
            v.value.uiVal = static_cast<unsigned>(w * 1000.0);
        } else {
            v.nvmlReturn = api::kErrorNotSupported;
        }
    }
    return api::kSuccess;
}

api::Return nvmlDeviceGetClockInfo(api::Device d, int type, unsigned* mhz) {
    return get_uint(d, "nvmlDeviceGetClockInfo",
                    type == api::kClockSm ? "sm_clock_mhz" : "memory_clock_mhz", mhz);
}

api::Return nvmlDeviceGetUtilizationRates(api::Device d, api::Utilization* u) {
    if (unsupported(d, "nvmlDeviceGetUtilizationRates"))
        return api::kErrorNotSupported;
    u->gpu = dev(d)->config.value("gpu_utilization_pct", 0u);
    u->memory = dev(d)->config.value("memory_utilization_pct", 0u);
    return api::kSuccess;
}

api::Return nvmlDeviceGetTemperature(api::Device d, int, unsigned* celsius) {
    return get_uint(d, "nvmlDeviceGetTemperature", "temperature_c", celsius);
}

api::Return nvmlDeviceGetCurrentClocksEventReasons(api::Device d, unsigned long long* reasons) {
    if (unsupported(d, "nvmlDeviceGetCurrentClocksEventReasons"))
        return api::kErrorNotSupported;
    *reasons = dev(d)->config.value("clocks_event_reasons", 0ull);
    return api::kSuccess;
}

static const json* find_profile(api::Device d, const char* key, unsigned value) {
    const json& config = dev(d)->config;
    if (!config.contains("mig_profiles"))
        return nullptr;
    for (const json& p : config.at("mig_profiles")) {
        if (p[key].get<unsigned>() == value)
            return &p;
    }
    return nullptr;
}

api::Return nvmlDeviceGetGpuInstanceProfileInfo(api::Device d, unsigned profile_enum,
                                                api::GpuInstanceProfileInfo* info) {
    const unsigned last_enum = dev(d)->config.value("last_profile_enum", 0x10u);
    if (profile_enum > last_enum)
        return api::kErrorInvalidArgument;
    const json* p = find_profile(d, "enum", profile_enum);
    if (p == nullptr)
        return api::kErrorNotSupported;
    *info = {};
    info->id = (*p)["id"];
    info->sliceCount = (*p)["slices"];
    info->instanceCount = (*p)["instances"];
    info->multiprocessorCount = (*p)["sms"];
    info->memorySizeMB = (*p)["memory_mib"];
    return api::kSuccess;
}

api::Return nvmlDeviceGetGpuInstanceProfileInfoV(api::Device d, unsigned profile_enum,
                                                 api::GpuInstanceProfileInfoV2* info) {
    if (info->version != api::kGpuInstanceProfileInfoV2Version)
        return api::kErrorInvalidArgument;
    if (unsupported(d, "nvmlDeviceGetGpuInstanceProfileInfoV"))
        return api::kErrorNotSupported;
    const json* p = find_profile(d, "enum", profile_enum);
    if (p == nullptr || !p->contains("name"))
        return api::kErrorNotSupported;
    std::snprintf(info->name, sizeof(info->name), "%s", (*p)["name"].get<std::string>().c_str());
    return api::kSuccess;
}

api::Return nvmlDeviceGetGpuInstancePossiblePlacements_v2(api::Device d, unsigned profile_id,
                                                          api::GpuInstancePlacement* placements,
                                                          unsigned* count) {
    if (unsupported(d, "nvmlDeviceGetGpuInstancePossiblePlacements_v2"))
        return api::kErrorNoPermission;
    const json* p = find_profile(d, "id", profile_id);
    if (p == nullptr)
        return api::kErrorInvalidArgument;
    const json& list = (*p)["placements"];
    if (placements == nullptr) {
        *count = static_cast<unsigned>(list.size());
        return api::kSuccess;
    }
    if (*count < list.size())
        return api::kErrorInsufficientSize;
    for (size_t i = 0; i < list.size(); ++i)
        placements[i] = {list[i][0], list[i][1]};
    *count = static_cast<unsigned>(list.size());
    return api::kSuccess;
}

// ---- MIG instances ---------------------------------------------------------------------------

api::Return nvmlDeviceGetGpuInstances(api::Device d, unsigned profile_id,
                                      api::GpuInstance* instances, unsigned* count) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    if (instances == nullptr || count == nullptr)
        return api::kErrorInvalidArgument;
    if (!mig_enabled(dev(d)))
        return api::kErrorNotSupported;
    if (dev(d)->config.value("mig_list_no_permission", false))  // listing needs root here
        return api::kErrorNoPermission;
    if (mig_profile_by_id(dev(d), profile_id) == nullptr)
        return api::kErrorInvalidArgument;
    unsigned n = 0;
    for (FakeGpuInstance* gi : live_gpu_instances(*g_state, dev(d))) {
        if (gi->profile_id == profile_id)
            instances[n++] = reinterpret_cast<api::GpuInstance>(gi);
    }
    *count = n;
    return api::kSuccess;
}

api::Return nvmlDeviceCreateGpuInstanceWithPlacement(api::Device d, unsigned profile_id,
                                                     const api::GpuInstancePlacement* placement,
                                                     api::GpuInstance* instance) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    if (placement == nullptr || instance == nullptr)
        return api::kErrorInvalidArgument;
    FakeDevice* fake = dev(d);
    if (!mig_enabled(fake))
        return api::kErrorNotSupported;
    if (no_permission(fake))
        return api::kErrorNoPermission;
    if (api::Return rc =
            injected_failure(fake, "fail_gpu_instance_create", ++fake->gpu_instance_creates);
        rc != api::kSuccess) {
        return rc;
    }
    FakeGpuInstance* gi = nullptr;
    api::Return rc = make_gpu_instance(*g_state, fake, profile_id, *placement, std::nullopt, &gi);
    if (rc == api::kSuccess)
        *instance = reinterpret_cast<api::GpuInstance>(gi);
    return rc;
}

api::Return nvmlGpuInstanceDestroy(api::GpuInstance instance) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    FakeGpuInstance* gi = gi_of(instance);
    if (gi == nullptr || !gi->alive)
        return api::kErrorInvalidArgument;
    if (no_permission(gi->device))
        return api::kErrorNoPermission;
    if (api::Return rc = injected_failure(gi->device, "fail_gpu_instance_destroy",
                                          ++gi->device->gpu_instance_destroys);
        rc != api::kSuccess) {
        return rc;
    }
    for (FakeComputeInstance* ci : gi->compute_instances) {
        if (ci->alive)
            return api::kErrorInUse;
    }
    gi->alive = false;
    return api::kSuccess;
}

api::Return nvmlGpuInstanceGetInfo(api::GpuInstance instance, api::GpuInstanceInfo* info) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    FakeGpuInstance* gi = gi_of(instance);
    if (gi == nullptr || !gi->alive || info == nullptr)
        return api::kErrorInvalidArgument;
    info->device = reinterpret_cast<api::Device>(gi->device);
    info->id = gi->id;
    info->profileId = gi->profile_id;
    info->placement = {gi->start, gi->size};
    return api::kSuccess;
}

namespace {
api::Return ci_profile_info(api::GpuInstance instance, unsigned profile_enum, unsigned eng_profile,
                            api::ComputeInstanceProfileInfo* info, char* name, size_t name_size) {
    if (!g_state)
        return api::kErrorUninitialized;
    FakeGpuInstance* gi = gi_of(instance);
    if (gi == nullptr || !gi->alive || eng_profile != api::kComputeInstanceEngineProfileShared)
        return api::kErrorInvalidArgument;
    if (ci_profile_slices(profile_enum) == 0)
        return api::kErrorInvalidArgument;  // past the last enum
    if (!ci_profile_offered(gi, profile_enum))
        return api::kErrorNotSupported;
    const unsigned slices = ci_profile_slices(profile_enum);
    *info = {};
    info->id = profile_enum;
    info->sliceCount = slices;
    info->instanceCount = gi->compute_slices / slices;
    info->multiprocessorCount = gi->sms * slices / gi->compute_slices;
    if (name != nullptr) {
        std::snprintf(
            name, name_size, "MIG %s",
            (slices == gi->compute_slices ? gi->name : std::to_string(slices) + "c." + gi->name)
                .c_str());
    }
    return api::kSuccess;
}
}  // namespace

api::Return nvmlGpuInstanceGetComputeInstanceProfileInfo(api::GpuInstance instance,
                                                         unsigned profile_enum,
                                                         unsigned eng_profile,
                                                         api::ComputeInstanceProfileInfo* info) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return ci_profile_info(instance, profile_enum, eng_profile, info, nullptr, 0);
}

api::Return nvmlGpuInstanceGetComputeInstanceProfileInfoV(api::GpuInstance instance,
                                                          unsigned profile_enum,
                                                          unsigned eng_profile,
                                                          api::ComputeInstanceProfileInfoV2* info) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (info == nullptr || info->version != api::kComputeInstanceProfileInfoV2Version)
        return api::kErrorInvalidArgument;
    api::ComputeInstanceProfileInfo v1{};
    api::Return rc =
        ci_profile_info(instance, profile_enum, eng_profile, &v1, info->name, sizeof(info->name));
    if (rc != api::kSuccess)
        return rc;
    info->id = v1.id;
    info->sliceCount = v1.sliceCount;
    info->instanceCount = v1.instanceCount;
    info->multiprocessorCount = v1.multiprocessorCount;
    return api::kSuccess;
}

api::Return nvmlGpuInstanceCreateComputeInstance(api::GpuInstance instance, unsigned profile_id,
                                                 api::ComputeInstance* out) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    FakeGpuInstance* gi = gi_of(instance);
    if (gi == nullptr || !gi->alive || out == nullptr)
        return api::kErrorInvalidArgument;
    if (no_permission(gi->device))
        return api::kErrorNoPermission;
    if (api::Return rc = injected_failure(gi->device, "fail_compute_instance_create",
                                          ++gi->device->compute_instance_creates);
        rc != api::kSuccess) {
        return rc;
    }
    FakeComputeInstance* ci = nullptr;
    api::Return rc = make_compute_instance(*g_state, gi, profile_id, &ci);
    if (rc == api::kSuccess)
        *out = reinterpret_cast<api::ComputeInstance>(ci);
    return rc;
}

api::Return nvmlGpuInstanceGetComputeInstances(api::GpuInstance instance, unsigned profile_id,
                                               api::ComputeInstance* instances, unsigned* count) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    FakeGpuInstance* gi = gi_of(instance);
    if (gi == nullptr || !gi->alive || instances == nullptr || count == nullptr)
        return api::kErrorInvalidArgument;
    if (!ci_profile_offered(gi, profile_id))
        return api::kErrorNotSupported;
    unsigned n = 0;
    for (FakeComputeInstance* ci : gi->compute_instances) {
        if (ci->alive && ci->profile_id == profile_id)
            instances[n++] = reinterpret_cast<api::ComputeInstance>(ci);
    }
    *count = n;
    return api::kSuccess;
}

api::Return nvmlComputeInstanceDestroy(api::ComputeInstance instance) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    FakeComputeInstance* ci = ci_of(instance);
    if (ci == nullptr || !ci->alive)
        return api::kErrorInvalidArgument;
    if (no_permission(ci->gpu_instance->device))
        return api::kErrorNoPermission;
    ci->alive = false;
    return api::kSuccess;
}

api::Return nvmlComputeInstanceGetInfo_v2(api::ComputeInstance instance,
                                          api::ComputeInstanceInfo* info) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    FakeComputeInstance* ci = ci_of(instance);
    if (ci == nullptr || !ci->alive || info == nullptr)
        return api::kErrorInvalidArgument;
    info->device = reinterpret_cast<api::Device>(ci->gpu_instance->device);
    info->gpuInstance = reinterpret_cast<api::GpuInstance>(ci->gpu_instance);
    info->id = ci->id;
    info->profileId = ci->profile_id;
    info->placement = {ci->start, ci->size};
    return api::kSuccess;
}

// ---- MIG device handles ----------------------------------------------------------------------

api::Return nvmlDeviceGetMaxMigDeviceCount(api::Device d, unsigned* count) {
    if (count == nullptr)
        return api::kErrorInvalidArgument;
    *count = mig_enabled(dev(d)) ? dev(d)->config.value("compute_slices", 7u) : 0u;
    return api::kSuccess;
}

api::Return nvmlDeviceGetMigDeviceHandleByIndex(api::Device d, unsigned index,
                                                api::Device* mig_device) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_state)
        return api::kErrorUninitialized;
    if (mig_device == nullptr || dev(d)->parent != nullptr)
        return api::kErrorInvalidArgument;
    if (!mig_enabled(dev(d)))
        return api::kErrorNotSupported;
    std::vector<FakeComputeInstance*> cis = live_compute_instances(*g_state, dev(d));
    if (index >= cis.size())
        return api::kErrorNotFound;
    *mig_device = reinterpret_cast<api::Device>(cis[index]->mig_device);
    return api::kSuccess;
}

api::Return nvmlDeviceGetGpuInstanceId(api::Device d, unsigned* id) {
    if (id == nullptr || dev(d)->parent == nullptr)
        return dev(d)->parent == nullptr ? api::kErrorNotSupported : api::kErrorInvalidArgument;
    *id = dev(d)->gpu_instance_id;
    return api::kSuccess;
}

api::Return nvmlDeviceGetComputeInstanceId(api::Device d, unsigned* id) {
    if (id == nullptr || dev(d)->parent == nullptr)
        return dev(d)->parent == nullptr ? api::kErrorNotSupported : api::kErrorInvalidArgument;
    *id = dev(d)->compute_instance_id;
    return api::kSuccess;
}

// ---- processes -------------------------------------------------------------------------------

// "processes": [{"pid": 4242, "used_memory_mib": 1024}] on the GPU; MIG device handles list none.
api::Return nvmlDeviceGetComputeRunningProcesses_v3(api::Device d, unsigned* count,
                                                    api::ProcessInfo* infos) {
    if (count == nullptr)
        return api::kErrorInvalidArgument;
    if (unsupported(d, "nvmlDeviceGetComputeRunningProcesses_v3"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    json processes = json::array();
    if (!dev(d)->parent) {
        for (const json& p : dev(d)->config.value("processes", json::array())) {
            if (process_alive(p))
                processes.push_back(p);
        }
    }
    const unsigned n = static_cast<unsigned>(processes.size());
    if (*count < n) {
        *count = n;
        return api::kErrorInsufficientSize;
    }
    if (n > 0 && infos == nullptr)
        return api::kErrorInvalidArgument;
    for (unsigned i = 0; i < n; ++i) {
        infos[i] = {};
        infos[i].pid = processes[i].at("pid");
        infos[i].usedGpuMemory =
            static_cast<unsigned long long>(processes[i].value("used_memory_mib", 0.0) * 1048576.0);
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *count = n;
    return api::kSuccess;
}

// ---- activity --------------------------------------------------------------------------------

// Processes alive now with "sm_util" (percent), one sample each stamped now; "not found" when the
// caller has seen everything up to now.
api::Return nvmlDeviceGetProcessUtilization(api::Device d, api::ProcessUtilizationSample* samples,
                                            unsigned* count, unsigned long long last_seen_us) {
    if (count == nullptr)
        return api::kErrorInvalidArgument;
    if (unsupported(d, "nvmlDeviceGetProcessUtilization"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    // "fail_process_utilization": {"from_s": 1, "until_s": 2, "code": 999}: a passing fault.
    if (const json f = dev(d)->config.value("fail_process_utilization", json());
        f.is_object() && now_s() >= f.value("from_s", 0.0) && now_s() < f.value("until_s", 1e300))
        return f.value("code", api::kErrorUnknown);
    const auto now_us = static_cast<unsigned long long>(
        std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());
    std::vector<api::ProcessUtilizationSample> out;
    if (last_seen_us < now_us) {
        for (const json& p : dev(d)->config.value("processes", json::array())) {
            // "sm_util_until_s": the process stays listed but gives no sample from then on.
            if (process_alive(p) && p.contains("sm_util") &&
                now_s() < p.value("sm_util_until_s", 1e300))
                out.push_back({p.at("pid").get<unsigned>(), now_us, p["sm_util"].get<unsigned>(),
                               0, 0, 0});
        }
    }
    if (out.empty())
        return api::kErrorNotFound;
    if (samples == nullptr || *count < out.size()) {
        *count = static_cast<unsigned>(out.size());
        return api::kErrorInsufficientSize;
    }
    std::copy(out.begin(), out.end(), samples);
    *count = static_cast<unsigned>(out.size());
    return api::kSuccess;
}

api::Return nvmlGpmQueryDeviceSupport(api::Device d, api::GpmSupport* support) {
    if (support == nullptr || support->version != api::kGpmSupportVersion)
        return api::kErrorInvalidArgument;
    support->isSupportedDevice = unsupported(d, "nvmlGpmQueryDeviceSupport") ? 0 : 1;
    return api::kSuccess;
}

api::Return nvmlGpmSampleAlloc(api::GpmSample* sample) {
    if (sample == nullptr)
        return api::kErrorInvalidArgument;
    *sample = reinterpret_cast<api::GpmSample>(new FakeGpmSample);
    return api::kSuccess;
}

api::Return nvmlGpmSampleFree(api::GpmSample sample) {
    delete reinterpret_cast<FakeGpmSample*>(sample);
    return api::kSuccess;
}

api::Return nvmlGpmMigSampleGet(api::Device d, unsigned gpu_instance_id, api::GpmSample sample) {
    if (sample == nullptr)
        return api::kErrorInvalidArgument;
    if (unsupported(d, "nvmlGpmMigSampleGet"))
        return api::kErrorNotSupported;
    if (lost(d))
        return api::kErrorGpuIsLost;
    std::lock_guard<std::mutex> lock(g_mutex);
    for (FakeGpuInstance* gi : live_gpu_instances(*g_state, dev(d))) {
        if (gi->id == gpu_instance_id) {
            auto* s = reinterpret_cast<FakeGpmSample*>(sample);
            s->device = dev(d);
            s->gpu_instance_id = gpu_instance_id;
            s->t_s = now_s();
            return api::kSuccess;
        }
    }
    return api::kErrorInvalidArgument;
}

// SM utilization between two samples of one instance: its "sm_activity_pct"; other metrics are
// not supported.
api::Return nvmlGpmMetricsGet(api::GpmMetricsGet* get) {
    if (get == nullptr || get->version != api::kGpmMetricsGetVersion ||
        get->numMetrics > api::kGpmMetricMax)
        return api::kErrorInvalidArgument;
    const auto* a = reinterpret_cast<const FakeGpmSample*>(get->sample1);
    const auto* b = reinterpret_cast<const FakeGpmSample*>(get->sample2);
    if (a == nullptr || b == nullptr || a->t_s < 0 || b->t_s <= a->t_s || a->device != b->device ||
        a->gpu_instance_id != b->gpu_instance_id)
        return api::kErrorInvalidArgument;
    std::lock_guard<std::mutex> lock(g_mutex);
    const FakeGpuInstance* instance = nullptr;
    for (FakeGpuInstance* gi : live_gpu_instances(*g_state, a->device)) {
        if (gi->id == a->gpu_instance_id)
            instance = gi;
    }
    for (unsigned i = 0; i < get->numMetrics; ++i) {
        api::GpmMetric& m = get->metrics[i];
        m.nvmlReturn = api::kErrorNotSupported;
        if (m.metricId == api::kGpmMetricSmUtil && instance != nullptr) {
            m.nvmlReturn = api::kSuccess;
            m.value = instance->sm_activity_pct;
        }
    }
    return api::kSuccess;
}

}  // extern "C"
