// The only code that talks to NVML: loads libnvidia-ml.so.1 at run time, an RAII session over
// nvmlInit/nvmlShutdown, and typed device queries that name the NVML call in every error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nvml/nvml_api.h"

namespace migscope::nvml {

// One query's outcome: a value, or the NVML return code that explains its absence.
template <typename T>
struct Reading {
    std::optional<T> value;
    api::Return code = api::kSuccess;
    bool supported() const { return code != api::kErrorNotSupported; }
};

struct MigMode {
    bool current_enabled = false;
    bool pending_enabled = false;
};

struct Clocks {
    std::optional<unsigned> sm_mhz;
    std::optional<unsigned> memory_mhz;
};

struct PowerFields {  // one nvmlDeviceGetFieldValues call
    std::optional<double> instant_w;
    std::optional<double> average_w;
};

// A GPU instance profile as NVML reports it (works with MIG disabled).
struct NvmlProfile {
    unsigned profile_enum = 0;  // NVML_GPU_INSTANCE_PROFILE_* value it was read with
    unsigned id = 0;
    unsigned slice_count = 0;
    unsigned instance_count = 0;
    unsigned multiprocessor_count = 0;
    unsigned long long memory_mib = 0;
    std::string name;  // empty when the driver does not give it
    std::vector<api::GpuInstancePlacement> placements;
};

class Library;

// A handle to one GPU; valid while its Session lives.
class Device {
  public:
    Device(std::shared_ptr<const Library> lib, api::Device handle, unsigned index)
        : lib_(std::move(lib)), handle_(handle), index_(index) {}

    unsigned index() const { return index_; }
    Reading<std::string> name() const;
    Reading<std::string> uuid() const;
    Reading<api::Memory> memory() const;
    Reading<MigMode> mig_mode() const;
    Reading<double> power_limit_w() const;  // enforced limit
    Reading<double> power_usage_w() const;  // nvmlDeviceGetPowerUsage (1 s average on Ampere+)
    Reading<double> energy_j() const;       // board energy counter since driver load (~4 ms)
    // Instant and 1 s average power as NVML fields, in one call: under 1 us of CPU on our H200,
    // where reading the energy counter (API or field 83 alike) costs about 4 ms.
    PowerFields power_fields() const;
    Clocks clocks() const;
    Reading<api::Utilization> utilization() const;
    Reading<unsigned> temperature_c() const;
    Reading<unsigned long long> clocks_event_reasons() const;
    // Every GPU instance profile the device offers, with placements; empty when MIG is unsupported.
    std::vector<NvmlProfile> gpu_instance_profiles() const;

    // For the other files of src/nvml (e.g. mig_instances_api.cpp): the raw handle and library.
    api::Device handle() const { return handle_; }
    const std::shared_ptr<const Library>& library() const { return lib_; }

  private:
    std::shared_ptr<const Library> lib_;
    api::Device handle_;
    unsigned index_;
};

// An initialised NVML. Throws an "unavailable" error when the library or driver is missing.
class Session {
  public:
    // Loads $MIGSCOPE_NVML_LIBRARY if set, else libnvidia-ml.so.1.
    static Session open();
    // One more reference on the NVML that `device` came from (nvmlInit_v2/nvmlShutdown are
    // reference counted), so that objects holding NVML handles can outlive the Session that made
    // them and still release what they own.
    static Session retain(const Device& device);
    ~Session();
    Session(Session&&) noexcept;
    Session& operator=(Session&&) = delete;
    Session(const Session&) = delete;

    unsigned device_count() const;
    Device device(unsigned index) const;  // input error for an index out of range
    std::optional<std::string> driver_version() const;
    std::optional<int> cuda_driver_version() const;  // e.g. 13000
    std::string library_path() const;

  private:
    explicit Session(std::shared_ptr<const Library> lib) : lib_(std::move(lib)) {}
    std::shared_ptr<const Library> lib_;
};

// Names of the set bits of a clocks-event ("throttle") reason mask, e.g. "sw_power_cap".
std::vector<std::string> clocks_event_reason_names(unsigned long long mask);

}  // namespace migscope::nvml
