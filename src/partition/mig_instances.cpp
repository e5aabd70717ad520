// Realising a MIG layout through NVML: matching existing instances, safety checks, creation with
// rollback, and destruction of exactly what was created.
#include "partition/mig_instances.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "core/error.h"
#include "nvml/mig_instances_api.h"

namespace migscope::partition {
namespace {

using nvml::MigInstancesApi;

// An existing GPU instance and the compute instance a job would use in it.
struct Found {
    nvml::GpuInstanceRecord gpu_instance;
    const mig::Profile* profile = nullptr;  // its catalog entry
    std::optional<nvml::ComputeInstanceRecord> compute_instance;
    unsigned sm_count = 0;  // of compute_instance
};

std::string gpu_label(const nvml::Device& gpu) {
    std::string label = "GPU " + std::to_string(gpu.index());
    if (auto name = gpu.name().value)
        label += " (" + *name + ")";
    return label;
}

std::string placed(const std::string& profile, unsigned start) {
    return profile + "@" + std::to_string(start);
}

std::string term_text(const mig::LayoutTerm& t) {
    return t.start ? placed(t.profile, *t.start) : t.profile + " (any start)";
}

std::string slice_range(unsigned start, unsigned size) {
    return size == 1 ? std::to_string(start)
                     : std::to_string(start) + "-" + std::to_string(start + size - 1);
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
    std::string out;
    for (const std::string& s : items)
        out += (out.empty() ? "" : separator) + s;
    return out;
}

std::string describe(const Found& f) {
    std::string text = placed(f.profile->name, f.gpu_instance.placement.start) + " (GPU instance " +
                       std::to_string(f.gpu_instance.id);
    if (f.compute_instance) {
        text += ", compute instance " + std::to_string(f.compute_instance->id) + ")";
    } else {
        text += ", no compute instance)";
    }
    return text;
}

std::string describe_all(const std::vector<Found>& found) {
    std::vector<std::string> items;
    for (const Found& f : found)
        items.push_back(describe(f));
    return items.empty() ? "none" : join(items);
}

unsigned profile_id(const mig::GpuModel& model, const mig::Profile& p) {
    if (!p.id) {
        throw input_error("profile " + p.name + " has no NVML profile id in the " + model.key +
                          " catalog (" + model.source + "); cannot create it");
    }
    return *p.id;
}

void require_mig_enabled(const nvml::Device& gpu) {
    nvml::Reading<nvml::MigMode> mode = gpu.mig_mode();
    if (!mode.value) {
        throw unavailable_error(
            gpu_label(gpu) + " reports no MIG mode (nvmlDeviceGetMigMode: NVML code " +
            std::to_string(mode.code) + "): the mig backend needs a MIG-capable GPU");
    }
    if (!mode.value->current_enabled) {
        throw unavailable_error(
            gpu_label(gpu) + " has MIG mode disabled" +
            (mode.value->pending_enabled ? " (enabled after the next GPU reset)" : "") +
            "; migscope never changes MIG mode: an administrator enables it with `nvidia-smi -i " +
            std::to_string(gpu.index()) + " -mig 1`, or use another backend (green, mps)");
    }
}

// Root (or the MIG capability files) is needed to change and to list MIG instances.
[[noreturn]] void rethrow_nvml(const nvml::CallError& e, const nvml::Device& gpu,
                               const std::string& doing) {
    if (e.code() == nvml::api::kErrorNoPermission) {
        throw unavailable_error(doing + " on " + gpu_label(gpu) +
                                " needs root (or read access to "
                                "/proc/driver/nvidia/capabilities/mig/config): " +
                                e.what());
    }
    throw Error(e.kind(), doing + " on " + gpu_label(gpu) + ": " + e.what());
}

// The compute instance profile that spans the whole GPU instance (else the largest offered).
const nvml::ComputeInstanceProfile* full_size_profile(
    const std::vector<nvml::ComputeInstanceProfile>& profiles, unsigned compute_slices) {
    const nvml::ComputeInstanceProfile* best = nullptr;
    for (const nvml::ComputeInstanceProfile& p : profiles) {
        if (p.slice_count == compute_slices)
            return &p;
        if (best == nullptr || p.slice_count > best->slice_count)
            best = &p;
    }
    return best;
}

// Every GPU instance of a catalog profile, sorted by start, each with its largest compute instance.
std::vector<Found> find_existing(const MigInstancesApi& api, const mig::GpuModel& model) {
    std::vector<Found> found;
    for (const mig::Profile& p : model.profiles) {
        if (!p.id)
            continue;
        for (const nvml::GpuInstanceRecord& gi : api.gpu_instances(*p.id)) {
            Found f{gi, &p, std::nullopt, 0};
            std::vector<nvml::ComputeInstanceProfile> profiles =
                api.compute_instance_profiles(gi.handle);
            std::sort(profiles.begin(), profiles.end(),
                      [](const auto& a, const auto& b) { return a.slice_count > b.slice_count; });
            for (const nvml::ComputeInstanceProfile& cp : profiles) {
                std::vector<nvml::ComputeInstanceRecord> cis =
                    api.compute_instances(gi.handle, cp.id);
                if (!cis.empty()) {
                    f.compute_instance = cis.front();
                    f.sm_count = cp.multiprocessor_count;
                    break;
                }
            }
            found.push_back(std::move(f));
        }
    }
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
        return a.gpu_instance.placement.start < b.gpu_instance.placement.start;
    });
    return found;
}

// Assigns terms to candidates: terms with a start take that exact placement first, then the others
// take any remaining candidate of their profile, lowest start first.
std::vector<std::optional<size_t>> match_terms(const std::vector<mig::LayoutTerm>& terms,
                                               const std::vector<mig::Instance>& candidates) {
    std::vector<bool> taken(candidates.size(), false);
    std::vector<std::optional<size_t>> match(terms.size());
    std::vector<size_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return candidates[a].start < candidates[b].start; });
    for (bool fixed : {true, false}) {
        for (size_t t = 0; t < terms.size(); ++t) {
            if (terms[t].start.has_value() != fixed)
                continue;
            for (size_t c : order) {
                if (!taken[c] && candidates[c].profile == terms[t].profile &&
                    (!fixed || candidates[c].start == *terms[t].start)) {
                    taken[c] = true;
                    match[t] = c;
                    break;
                }
            }
        }
    }
    return match;
}

std::vector<mig::Instance> usable(const std::vector<Found>& found) {
    std::vector<mig::Instance> out;
    for (const Found& f : found) {
        if (f.compute_instance)
            out.push_back({f.profile->name, f.gpu_instance.placement.start});
    }
    return out;
}

// Fills in each instance's MIG device UUID and memory.
void attach_mig_devices(const MigInstancesApi& api, const nvml::Device& gpu,
                        const mig::GpuModel& model, std::vector<MigInstance>& instances) {
    std::map<std::pair<unsigned, unsigned>, nvml::MigDevice> by_id;
    for (nvml::MigDevice& d : api.mig_devices())
        by_id[{d.gpu_instance_id, d.compute_instance_id}] = std::move(d);
    for (MigInstance& i : instances) {
        auto it = by_id.find({i.gpu_instance_id, i.compute_instance_id});
        if (it == by_id.end()) {
            throw runtime_error("no MIG device handle on " + gpu_label(gpu) + " for GPU instance " +
                                std::to_string(i.gpu_instance_id) + ", compute instance " +
                                std::to_string(i.compute_instance_id) +
                                " (nvmlDeviceGetMigDeviceHandleByIndex)");
        }
        i.uuid = it->second.uuid;
        const mig::Profile& p = model.require(i.profile);
        i.memory_bytes = it->second.memory_bytes.value_or(
            static_cast<unsigned long long>(p.memory_gib.value_or(0.0) * 1024.0 * 1024.0 * 1024.0));
    }
}

}  // namespace

MigInstances::MigInstances(const nvml::Device& gpu)
    : api_(std::make_unique<MigInstancesApi>(gpu)) {}

MigInstances::MigInstances(MigInstances&&) noexcept = default;

MigInstances& MigInstances::operator=(MigInstances&& other) noexcept {
    if (this != &other) {
        release();
        api_ = std::move(other.api_);
        nvml_reference_ = std::move(other.nvml_reference_);
        instances_ = std::move(other.instances_);
        created_ = std::move(other.created_);
    }
    return *this;
}

MigInstances::~MigInstances() {
    release();  // failures cannot be reported from here; release() first to see them
}

std::vector<std::string> MigInstances::release() {
    std::vector<std::string> failures;
    if (created_.empty())
        return failures;
    std::vector<Created> created = std::move(created_);
    created_.clear();
    instances_.clear();
    // Compute instances first (a GPU instance with one left is "in use"), newest first.
    for (bool compute : {true, false}) {
        for (auto it = created.rbegin(); it != created.rend(); ++it) {
            if ((it->compute_instance != nullptr) != compute)
                continue;
            try {
                if (compute) {
                    api_->destroy_compute_instance(it->compute_instance);
                } else {
                    api_->destroy_gpu_instance(it->gpu_instance);
                }
            } catch (const std::exception& e) {
                failures.push_back("could not destroy " + it->what + ": " + e.what() +
                                   "; by hand: " + it->by_hand);
            }
        }
    }
    nvml_reference_.reset();
    return failures;
}

namespace {

// Refuses to create instances on a GPU that runs compute processes: nobody else may be using it.
void require_no_processes(const MigInstancesApi& api, const nvml::Device& gpu) {
    std::vector<nvml::ComputeProcess> processes;
    try {
        processes = api.compute_processes();
    } catch (const nvml::CallError& e) {
        rethrow_nvml(e, gpu, "checking for other processes before creating MIG instances");
    }
    if (processes.empty())
        return;
    std::vector<std::string> pids;
    for (const nvml::ComputeProcess& p : processes)
        pids.push_back(std::to_string(p.pid));
    throw unavailable_error(gpu_label(gpu) + " runs " + std::to_string(processes.size()) +
                            " compute process" + (processes.size() == 1 ? "" : "es") + " (PID" +
                            (processes.size() == 1 ? " " : "s ") + join(pids) +
                            "): migscope creates MIG instances only on a GPU nobody else uses");
}

// The request's instances among those that exist (each with a compute instance), in the
// request's order; refuses a term none matches.
std::vector<MigInstance> match_existing(const nvml::Device& gpu,
                                        const std::vector<mig::LayoutTerm>& request,
                                        const std::vector<Found>& existing) {
    std::vector<mig::Instance> candidates = usable(existing);
    std::vector<std::optional<size_t>> match = match_terms(request, candidates);
    std::vector<std::string> missing;
    for (size_t t = 0; t < request.size(); ++t) {
        if (!match[t])
            missing.push_back(term_text(request[t]));
    }
    if (!missing.empty()) {
        throw input_error("MIG layout not found on " + gpu_label(gpu) + ": missing " +
                          join(missing) + "; existing: " + describe_all(existing) +
                          ". Create the layout with --apply (needs root) or ask for "
                          "instances that exist");
    }
    std::vector<MigInstance> instances(request.size());
    for (size_t t = 0; t < request.size(); ++t) {
        const mig::Instance& c = candidates[*match[t]];
        auto f = std::find_if(existing.begin(), existing.end(), [&](const Found& x) {
            return x.compute_instance && x.profile->name == c.profile &&
                   x.gpu_instance.placement.start == c.start;
        });
        instances[t] = MigInstance{
            c.profile, c.start, f->gpu_instance.id, f->compute_instance->id, "", f->sm_count, 0};
    }
    return instances;
}

// Each requested placement that overlaps an existing instance, with the memory slices they share.
std::vector<std::string> placement_conflicts(const mig::GpuModel& model,
                                             const std::vector<mig::LayoutTerm>& request,
                                             const std::vector<Found>& existing) {
    std::vector<std::string> conflicts;
    for (const mig::LayoutTerm& t : request) {
        if (!t.start)
            continue;
        const mig::Profile& p = model.require(t.profile);
        for (const Found& f : existing) {
            const nvml::api::GpuInstancePlacement& e = f.gpu_instance.placement;
            const unsigned first = std::max(*t.start, e.start);
            const unsigned end = std::min(*t.start + p.memory_slices, e.start + e.size);
            if (first < end) {
                conflicts.push_back(placed(t.profile, *t.start) + " overlaps existing " +
                                    describe(f) + " on memory slices " +
                                    slice_range(first, end - first));
            }
        }
    }
    return conflicts;
}

// The instances to create and each term's place among them.
struct CreationPlan {
    std::vector<mig::Instance> planned;
    std::vector<std::optional<size_t>> placement;  // per term: its index in `planned`
};

// Where the request's instances go on free memory slices: start-less terms are placed around the
// existing instances (which count against the limits). Refuses a requested placement that
// overlaps an existing instance, or a layout that does not fit beside them; either refusal says
// when the whole layout already exists (then it is used without --apply).
CreationPlan plan_creation(const nvml::Device& gpu, const mig::GpuModel& model,
                           const std::vector<mig::LayoutTerm>& request,
                           const std::vector<Found>& existing) {
    const std::vector<std::string> conflicts = placement_conflicts(model, request, existing);
    const bool already_there = [&] {
        std::vector<std::optional<size_t>> m = match_terms(request, usable(existing));
        return std::all_of(m.begin(), m.end(), [](const auto& x) { return x.has_value(); });
    }();
    const std::string use_them =
        already_there ? "; the layout already exists: run without --apply to use it" : "";
    if (!conflicts.empty()) {
        throw input_error("cannot create the MIG layout on " + gpu_label(gpu) + ": " +
                          join(conflicts, "; ") +
                          "; migscope creates instances on free memory slices only" + use_them);
    }
    std::vector<mig::LayoutTerm> everything;
    std::vector<mig::Instance> existing_placed;
    for (const Found& f : existing) {
        everything.push_back({f.profile->name, f.gpu_instance.placement.start});
        existing_placed.push_back({f.profile->name, f.gpu_instance.placement.start});
    }
    everything.insert(everything.end(), request.begin(), request.end());
    mig::LayoutCheck check = mig::check_layout(everything, model);
    if (!check.layout) {
        throw input_error(
            "cannot create the MIG layout on " + gpu_label(gpu) +
            (existing.empty() ? ""
                              : " beside its existing instances (" + describe_all(existing) + ")") +
            ": " + check.reason + use_them);
    }
    CreationPlan plan;
    plan.planned = check.layout->instances;
    for (const mig::Instance& e : existing_placed) {
        auto it = std::find(plan.planned.begin(), plan.planned.end(), e);
        if (it != plan.planned.end())
            plan.planned.erase(it);
    }
    plan.placement = match_terms(request, plan.planned);
    return plan;
}

}  // namespace

MigInstances realise_mig_layout(const nvml::Device& gpu, const mig::GpuModel& model,
                                const std::vector<mig::LayoutTerm>& request, ApplyMode mode) {
    if (request.empty())
        throw input_error("empty MIG layout: nothing to realise on " + gpu_label(gpu));
    require_mig_enabled(gpu);
    MigInstances owner(gpu);
    const MigInstancesApi& api = *owner.api_;
    const std::string gpu_index = std::to_string(gpu.index());
    if (mode == ApplyMode::kApply)
        require_no_processes(api, gpu);

    std::vector<Found> existing;
    try {
        existing = find_existing(api, model);
    } catch (const nvml::CallError& e) {
        rethrow_nvml(e, gpu, "listing MIG instances");
    }

    if (mode == ApplyMode::kUseExisting) {
        std::vector<MigInstance> instances = match_existing(gpu, request, existing);
        attach_mig_devices(api, gpu, model, instances);
        owner.instances_ = std::move(instances);
        return owner;
    }

    // kApply: requested placements must be free of existing instances.
    const CreationPlan plan = plan_creation(gpu, model, request, existing);
    const std::vector<mig::Instance>& planned = plan.planned;
    const std::vector<std::optional<size_t>>& placement = plan.placement;
    std::vector<MigInstance> instances(request.size());
    try {
        owner.nvml_reference_ = std::make_unique<nvml::Session>(nvml::Session::retain(gpu));
        for (size_t t = 0; t < request.size(); ++t) {
            if (!placement[t])
                throw runtime_error("internal: no placement planned for " + term_text(request[t]));
            const mig::Instance& at = planned[*placement[t]];
            const mig::Profile& p = model.require(at.profile);
            const std::string where = placed(p.name, at.start);
            try {
                nvml::GpuInstanceRecord gi =
                    api.create_gpu_instance(profile_id(model, p), {at.start, p.memory_slices});
                const std::string gi_text = "GPU instance " + std::to_string(gi.id);
                owner.created_.push_back(
                    {gi.handle, nullptr, gi_text + " (" + where + ")",
                     "nvidia-smi mig -i " + gpu_index + " -gi " + std::to_string(gi.id) + " -dgi"});
                const std::vector<nvml::ComputeInstanceProfile> ci_profiles =
                    api.compute_instance_profiles(gi.handle);
                const nvml::ComputeInstanceProfile* full =
                    full_size_profile(ci_profiles, p.compute_slices);
                if (full == nullptr) {
                    throw runtime_error(gi_text + " (" + where +
                                        ") offers no compute instance profile "
                                        "(nvmlGpuInstanceGetComputeInstanceProfileInfoV)");
                }
                nvml::ComputeInstanceRecord ci = api.create_compute_instance(gi.handle, full->id);
                owner.created_.push_back({nullptr, ci.handle,
                                          "compute instance " + std::to_string(ci.id) + " of " +
                                              gi_text + " (" + where + ")",
                                          "nvidia-smi mig -i " + gpu_index + " -gi " +
                                              std::to_string(gi.id) + " -ci " +
                                              std::to_string(ci.id) + " -dci"});
                instances[t] =
                    MigInstance{p.name, at.start, gi.id, ci.id, "", full->multiprocessor_count, 0};
            } catch (const nvml::CallError& e) {
                rethrow_nvml(e, gpu, "creating " + where);
            }
        }
        attach_mig_devices(api, gpu, model, instances);
    } catch (const Error& e) {
        std::vector<std::string> cleanup = owner.release();
        if (cleanup.empty())
            throw;
        throw Error(e.kind(),
                    std::string(e.what()) + "; cleaning up also failed: " + join(cleanup, "; "));
    }
    owner.instances_ = std::move(instances);
    return owner;
}

MigInstances realise_mig_layout(const nvml::Device& gpu, const mig::GpuModel& model,
                                const mig::Layout& layout, ApplyMode mode) {
    std::vector<mig::LayoutTerm> terms;
    for (const mig::Instance& i : layout.instances)
        terms.push_back({i.profile, i.start});
    return realise_mig_layout(gpu, model, terms, mode);
}

}  // namespace migscope::partition
