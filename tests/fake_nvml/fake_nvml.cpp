// A fake libnvidia-ml for tests: exports the NVML entry points migscope uses, answering from a JSON
// file named by $MIGSCOPE_FAKE_NVML_CONFIG. Power follows a piecewise-linear trace in time since
// nvmlInit, and the energy counter is its exact integral, so counter and trace can be compared.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "nvml/nvml_api.h"

namespace api = migscope::nvml::api;
using nlohmann::json;

namespace {

struct FakeDevice {
    json config;
    std::vector<std::pair<double, double>> power_trace;  // (t_s, W), piecewise linear
    std::set<std::string> unsupported;
};

struct FakeState {
    json config;
    std::vector<std::unique_ptr<FakeDevice>> devices;
    std::chrono::steady_clock::time_point t0;
    int init_count = 0;
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

FakeDevice* dev(api::Device handle) {
    return reinterpret_cast<FakeDevice*>(handle);
}

bool unsupported(api::Device handle, const char* call) {
    return dev(handle)->unsupported.count(call) > 0;
}

api::Return get_uint(api::Device handle, const char* call, const char* key, unsigned* out) {
    if (unsupported(handle, call) || !dev(handle)->config.contains(key)) {
        return api::kErrorNotSupported;
    }
    *out = dev(handle)->config[key].get<unsigned>();
    return api::kSuccess;
}

}  // namespace

extern "C" {

api::Return nvmlInit_v2() {
    std::lock_guard<std::mutex> lock(g_mutex);
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
        state->devices.push_back(std::move(fake));
    }
    state->init_count = 1;
    g_state = std::move(state);
    return api::kSuccess;
}

api::Return nvmlShutdown() {
    std::lock_guard<std::mutex> lock(g_mutex);
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
    std::lock_guard<std::mutex> lock(g_mutex);
    *power_mw = static_cast<unsigned>(power_at(*dev(d), now_s()) * 1000.0);
    return api::kSuccess;
}

api::Return nvmlDeviceGetTotalEnergyConsumption(api::Device d, unsigned long long* energy_mj) {
    if (unsupported(d, "nvmlDeviceGetTotalEnergyConsumption"))
        return api::kErrorNotSupported;
    std::lock_guard<std::mutex> lock(g_mutex);
    const double base_j = dev(d)->config.value("energy_base_j", 1.0e6);
    *energy_mj =
        static_cast<unsigned long long>((base_j + energy_until(*dev(d), now_s())) * 1000.0);
    return api::kSuccess;
}

api::Return nvmlDeviceGetFieldValues(api::Device d, int count, api::FieldValue* values) {
    if (unsupported(d, "nvmlDeviceGetFieldValues"))
        return api::kErrorNotSupported;
    std::lock_guard<std::mutex> lock(g_mutex);
    const double w = power_at(*dev(d), now_s());
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

}  // extern "C"
