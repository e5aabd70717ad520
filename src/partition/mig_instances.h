// The `mig` backend's NVML half: realises a MIG layout on one GPU (instances used as found, or
// created and later destroyed) and names each instance's MIG device UUID for the job placed on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mig/catalog.h"
#include "mig/layout.h"
#include "nvml/session.h"

namespace migscope::nvml {
class MigInstancesApi;
}

namespace migscope::partition {

enum class ApplyMode {
    kUseExisting,  // use GPU + compute instances as found; never create or destroy anything
    kApply,        // create the layout's instances (needs root), destroy them again on release
};

// One MIG instance a job runs on: a GPU instance and the compute instance chosen in it.
struct MigInstance {
    std::string profile;       // "3g.71gb", as the catalog names it
    unsigned start_slice = 0;  // first memory slice of the GPU instance
    unsigned gpu_instance_id = 0;
    unsigned compute_instance_id = 0;
    std::string uuid;       // "MIG-…": the worker's CUDA_VISIBLE_DEVICES
    unsigned sm_count = 0;  // of the compute instance
    unsigned long long memory_bytes = 0;
};

// The instances of a realised layout, in the order of the request's terms. Owns (and destroys)
// only what ApplyMode::kApply created; instances found in place are never destroyed. Keeps NVML
// initialised while it owns instances, so it may outlive the nvml::Session it came from.
class MigInstances {
  public:
    MigInstances(MigInstances&&) noexcept;
    MigInstances& operator=(MigInstances&&) noexcept;
    MigInstances(const MigInstances&) = delete;
    MigInstances& operator=(const MigInstances&) = delete;
    ~MigInstances();  // release(), its failures dropped: call release() to see them

    const std::vector<MigInstance>& instances() const { return instances_; }
    // True while instances this object created still exist.
    bool owns_instances() const { return !created_.empty(); }

    // Destroys what this object created: every compute instance, then every GPU instance, newest
    // first. Returns one line per failure (naming the NVML call and the nvidia-smi command that
    // finishes the job by hand); empty when all went. Never retries: a second call does nothing.
    std::vector<std::string> release();

  private:
    struct Created {  // one instance this object made: a GPU or a compute instance
        nvml::api::GpuInstance gpu_instance = nullptr;
        nvml::api::ComputeInstance compute_instance = nullptr;
        std::string what;     // "compute instance 0 of 3g.71gb@4 (GPU instance 2)"
        std::string by_hand;  // the nvidia-smi command that destroys it
    };

    friend MigInstances realise_mig_layout(const nvml::Device&, const mig::GpuModel&,
                                           const std::vector<mig::LayoutTerm>&, ApplyMode);
    explicit MigInstances(const nvml::Device& gpu);

    std::unique_ptr<nvml::MigInstancesApi> api_;
    std::unique_ptr<nvml::Session> nvml_reference_;  // set while created_ is not empty
    std::vector<MigInstance> instances_;
    std::vector<Created> created_;
};

// Realises `request` (terms as mig::parse_layout gives them; a term without a start takes any
// placement) on `gpu`, whose profiles `model` describes (best: nvml::read_live_model(gpu)).
//
// kUseExisting: matches each term to an existing GPU instance of that profile (at its start, when
// given) that has a compute instance. Missing ones: input error listing what exists and what is
// missing. MIG mode disabled: unavailable error.
//
// kApply: refuses (never changing anything) when MIG mode is disabled (migscope never changes it),
// when compute processes run on the GPU (names their PIDs), or when an existing instance overlaps
// a requested placement; places start-less terms around existing instances; then creates each GPU
// instance at its placement with one full-size compute instance. On any failure it destroys what
// it created, newest first, and throws the original error (plus any cleanup failure). No
// permission: unavailable error saying that root is needed.
MigInstances realise_mig_layout(const nvml::Device& gpu, const mig::GpuModel& model,
                                const std::vector<mig::LayoutTerm>& request, ApplyMode mode);

// The same for a placed layout (every instance at its start).
MigInstances realise_mig_layout(const nvml::Device& gpu, const mig::GpuModel& model,
                                const mig::Layout& layout, ApplyMode mode);

}  // namespace migscope::partition
