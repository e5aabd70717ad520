// NVML loading (dlopen/dlsym), session lifetime and device queries.
#include "nvml/session.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "nvml/library.h"

namespace migscope::nvml {

namespace {

// Calls an optional entry point; a missing one reads as "not supported".
template <typename T, typename Fn, typename... Args>
Reading<T> read(Fn fn, Args... args) {
    Reading<T> r;
    if (fn == nullptr) {
        r.code = api::kErrorNotSupported;
        return r;
    }
    T value{};
    r.code = fn(args..., &value);
    if (r.code == api::kSuccess)
        r.value = value;
    return r;
}

template <typename Fn>
Reading<std::string> read_string(Fn fn, api::Device handle, unsigned size) {
    Reading<std::string> r;
    if (fn == nullptr) {
        r.code = api::kErrorNotSupported;
        return r;
    }
    std::string buffer(size, '\0');
    r.code = fn(handle, buffer.data(), size);
    if (r.code == api::kSuccess)
        r.value = std::string(buffer.c_str());
    return r;
}

}  // namespace

Reading<std::string> Device::name() const {
    return read_string(lib_->get_name, handle_, api::kDeviceNameBufferSize);
}

Reading<std::string> Device::uuid() const {
    return read_string(lib_->get_uuid, handle_, api::kDeviceUuidBufferSize);
}

Reading<api::Memory> Device::memory() const {
    return read<api::Memory>(lib_->get_memory, handle_);
}

Reading<MigMode> Device::mig_mode() const {
    Reading<MigMode> r;
    if (lib_->get_mig_mode == nullptr) {
        r.code = api::kErrorNotSupported;
        return r;
    }
    unsigned current = 0, pending = 0;
    r.code = lib_->get_mig_mode(handle_, &current, &pending);
    if (r.code == api::kSuccess) {
        r.value = MigMode{current == api::kMigEnabled, pending == api::kMigEnabled};
    }
    return r;
}

namespace {
Reading<double> milli_to_unit(Reading<unsigned> r) {
    Reading<double> out;
    out.code = r.code;
    if (r.value)
        out.value = *r.value / 1000.0;
    return out;
}
}  // namespace

Reading<double> Device::power_limit_w() const {
    return milli_to_unit(read<unsigned>(lib_->get_power_limit, handle_));
}

Reading<double> Device::power_usage_w() const {
    return milli_to_unit(read<unsigned>(lib_->get_power_usage, handle_));
}

Reading<double> Device::energy_j() const {
    Reading<unsigned long long> mj = read<unsigned long long>(lib_->get_energy, handle_);
    Reading<double> out;
    out.code = mj.code;
    if (mj.value)
        out.value = static_cast<double>(*mj.value) / 1000.0;
    return out;
}

PowerFields Device::power_fields() const {
    PowerFields out;
    if (lib_->get_field_values == nullptr)
        return out;
    api::FieldValue values[2] = {};
    values[0].fieldId = api::kFieldPowerInstant;
    values[1].fieldId = api::kFieldPowerAverage;
    if (lib_->get_field_values(handle_, 2, values) != api::kSuccess)
        return out;
    auto milli = [](const api::FieldValue& v) -> std::optional<double> {
        if (v.nvmlReturn != api::kSuccess)
            return std::nullopt;
        switch (v.valueType) {
            case api::kValueUnsignedInt:
                return v.value.uiVal / 1000.0;
            case api::kValueUnsignedLong:
                return static_cast<double>(v.value.ulVal) / 1000.0;
            case api::kValueUnsignedLongLong:
                return static_cast<double>(v.value.ullVal) / 1000.0;
            case api::kValueSignedLongLong:
                return static_cast<double>(v.value.sllVal) / 1000.0;
            case api::kValueSignedInt:
                return v.value.siVal / 1000.0;
            case api::kValueDouble:
                return v.value.dVal / 1000.0;
            default:
                return std::nullopt;
        }
    };
    out.instant_w = milli(values[0]);
    out.average_w = milli(values[1]);
    return out;
}

Clocks Device::clocks() const {
    return Clocks{read<unsigned>(lib_->get_clock, handle_, api::kClockSm).value,
                  read<unsigned>(lib_->get_clock, handle_, api::kClockMem).value};
}

Reading<api::Utilization> Device::utilization() const {
    return read<api::Utilization>(lib_->get_utilization, handle_);
}

Reading<unsigned> Device::temperature_c() const {
    return read<unsigned>(lib_->get_temperature, handle_, api::kTemperatureGpu);
}

Reading<unsigned long long> Device::clocks_event_reasons() const {
    return read<unsigned long long>(lib_->get_clocks_event_reasons, handle_);
}

std::vector<NvmlProfile> Device::gpu_instance_profiles() const {
    std::vector<NvmlProfile> profiles;
    if (lib_->get_profile_info == nullptr)
        return profiles;
    for (unsigned e = 0; e < api::kMaxGpuInstanceProfileEnum; ++e) {
        api::GpuInstanceProfileInfo info{};
        api::Return rc = lib_->get_profile_info(handle_, e, &info);
        if (rc == api::kErrorInvalidArgument)
            break;  // past the last profile enum
        if (rc != api::kSuccess)
            continue;  // not offered on this GPU
        NvmlProfile p;
        p.profile_enum = e;
        p.id = info.id;
        p.slice_count = info.sliceCount;
        p.instance_count = info.instanceCount;
        p.multiprocessor_count = info.multiprocessorCount;
        p.memory_mib = info.memorySizeMB;
        if (lib_->get_profile_info_v != nullptr) {
            api::GpuInstanceProfileInfoV2 v2{};
            v2.version = api::kGpuInstanceProfileInfoV2Version;
            if (lib_->get_profile_info_v(handle_, e, &v2) == api::kSuccess) {
                p.name = std::string(v2.name, strnlen(v2.name, sizeof(v2.name)));
            }
        }
        if (lib_->get_placements != nullptr) {
            unsigned count = 0;
            if (lib_->get_placements(handle_, p.id, nullptr, &count) == api::kSuccess &&
                count > 0) {
                p.placements.resize(count);
                if (lib_->get_placements(handle_, p.id, p.placements.data(), &count) ==
                    api::kSuccess) {
                    p.placements.resize(count);
                } else {
                    p.placements.clear();
                }
            }
        }
        profiles.push_back(std::move(p));
    }
    return profiles;
}

Session Session::open() {
    const char* override_path = std::getenv("MIGSCOPE_NVML_LIBRARY");
    const std::string path = override_path && *override_path ? override_path : "libnvidia-ml.so.1";
    auto lib = std::make_shared<const Library>(path);
    api::Return rc = lib->init();
    if (rc != api::kSuccess) {
        throw unavailable_error("NVML unavailable: " + lib->describe("nvmlInit_v2", rc));
    }
    return Session(std::move(lib));
}

Session Session::retain(const Device& device) {
    api::Return rc = device.library()->init();
    if (rc != api::kSuccess) {
        throw unavailable_error("NVML unavailable: " +
                                device.library()->describe("nvmlInit_v2", rc));
    }
    return Session(device.library());
}

Session::~Session() {
    if (lib_)
        lib_->shutdown();
}

Session::Session(Session&& other) noexcept : lib_(std::move(other.lib_)) {}

unsigned Session::device_count() const {
    unsigned count = 0;
    api::Return rc = lib_->get_count(&count);
    if (rc != api::kSuccess)
        throw runtime_error(lib_->describe("nvmlDeviceGetCount_v2", rc));
    return count;
}

Device Session::device(unsigned index) const {
    unsigned count = device_count();
    if (index >= count) {
        throw input_error("GPU index " + std::to_string(index) + " out of range (" +
                          std::to_string(count) + " GPU" + (count == 1 ? "" : "s") + " present)");
    }
    api::Device handle = nullptr;
    api::Return rc = lib_->get_handle(index, &handle);
    if (rc != api::kSuccess) {
        throw runtime_error(lib_->describe("nvmlDeviceGetHandleByIndex_v2", rc));
    }
    return Device(lib_, handle, index);
}

std::optional<std::string> Session::driver_version() const {
    if (lib_->driver_version == nullptr)
        return std::nullopt;
    char buffer[api::kDriverVersionBufferSize] = {};
    if (lib_->driver_version(buffer, sizeof(buffer)) != api::kSuccess)
        return std::nullopt;
    return std::string(buffer);
}

std::optional<int> Session::cuda_driver_version() const {
    return read<int>(lib_->cuda_driver_version).value;
}

std::string Session::library_path() const {
    return lib_->path();
}

std::vector<std::string> clocks_event_reason_names(unsigned long long mask) {
    static const std::pair<unsigned long long, const char*> kNames[] = {
        {api::kClocksEventGpuIdle, "gpu_idle"},
        {api::kClocksEventApplicationsClocksSetting, "applications_clocks_setting"},
        {api::kClocksEventSwPowerCap, "sw_power_cap"},
        {api::kClocksEventHwSlowdown, "hw_slowdown"},
        {api::kClocksEventSyncBoost, "sync_boost"},
        {api::kClocksEventSwThermalSlowdown, "sw_thermal_slowdown"},
        {api::kClocksEventHwThermalSlowdown, "hw_thermal_slowdown"},
        {api::kClocksEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
        {api::kClocksEventDisplayClockSetting, "display_clock_setting"},
    };
    std::vector<std::string> names;
    unsigned long long known = 0;
    for (const auto& [bit, name] : kNames) {
        known |= bit;
        if (mask & bit)
            names.emplace_back(name);
    }
    if (mask & ~known) {
        char hex[32];
        std::snprintf(hex, sizeof(hex), "other_0x%llx", mask & ~known);
        names.emplace_back(hex);
    }
    return names;
}

}  // namespace migscope::nvml
