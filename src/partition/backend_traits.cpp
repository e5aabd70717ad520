// The backends' table and the functions that read it.
#include "partition/backend_traits.h"

#include <stdexcept>

#include "core/error.h"
#include "core/text.h"
#include "core/user_text.h"

namespace migscope::partition {

// A new backend is one more row here (in BackendKind's order), its class in backends.cpp and
// its row in tests/partition/backend_traits_test.cpp.
const std::vector<BackendTraits>& backends() {
    static const std::vector<BackendTraits> table = {
        {.kind = BackendKind::kGreen,
         .name = "green",
         .partitions = PartitionSource::kSmShares,
         .needs_gpu = true,
         .takes_layout = true,
         .needs_mig_mode = false,
         .runs_commands = false,
         .one_job_at_a_time = false,
         .queues_in_worker = true,
         .rounds_sms = true,
         .plan_role = PlanRole::kPartitions,
         .energy = EnergyMeter::kGpuBoard},
        {.kind = BackendKind::kMps,
         .name = "mps",
         .partitions = PartitionSource::kSmShares,
         .needs_gpu = true,
         .takes_layout = true,
         .needs_mig_mode = false,
         .runs_commands = true,
         .one_job_at_a_time = false,
         .queues_in_worker = false,
         .rounds_sms = false,
         .plan_role = PlanRole::kPartitions,
         .energy = EnergyMeter::kGpuBoard},
        {.kind = BackendKind::kMig,
         .name = "mig",
         .partitions = PartitionSource::kMigInstances,
         .needs_gpu = true,
         .takes_layout = true,
         .needs_mig_mode = true,
         .runs_commands = true,
         .one_job_at_a_time = false,
         .queues_in_worker = false,
         .rounds_sms = false,
         .plan_role = PlanRole::kPartitions,
         .energy = EnergyMeter::kGpuBoard},
        {.kind = BackendKind::kTimeslice,
         .name = "timeslice",
         .partitions = PartitionSource::kWholeGpu,
         .needs_gpu = true,
         .takes_layout = false,
         .needs_mig_mode = false,
         .runs_commands = true,
         .one_job_at_a_time = false,
         .queues_in_worker = false,
         .rounds_sms = false,
         .plan_role = PlanRole::kNone,
         .energy = EnergyMeter::kGpuBoard},
        {.kind = BackendKind::kSequential,
         .name = "sequential",
         .partitions = PartitionSource::kWholeGpu,
         .needs_gpu = true,
         .takes_layout = false,
         .needs_mig_mode = false,
         .runs_commands = true,
         .one_job_at_a_time = true,
         .queues_in_worker = false,
         .rounds_sms = false,
         .plan_role = PlanRole::kBaseline,
         .energy = EnergyMeter::kGpuBoard},
        {.kind = BackendKind::kCpu,
         .name = "cpu",
         .partitions = PartitionSource::kCpuCores,
         .needs_gpu = false,
         .takes_layout = false,
         .needs_mig_mode = false,
         .runs_commands = true,
         .one_job_at_a_time = false,
         .queues_in_worker = false,
         .rounds_sms = false,
         .plan_role = PlanRole::kNone,
         .energy = EnergyMeter::kCpuPackage},
    };
    return table;
}

const BackendTraits& traits(BackendKind kind) {
    return backends().at(static_cast<size_t>(kind));
}

const BackendTraits* find_backend(std::string_view name) {
    for (const BackendTraits& b : backends()) {
        if (b.name == name)
            return &b;
    }
    return nullptr;
}

PlanRole plan_role_of(std::string_view name) {
    const BackendTraits* b = find_backend(name);
    return b ? b->plan_role : PlanRole::kNone;
}

BackendKind parse_backend(std::string_view name) {
    if (const BackendTraits* b = find_backend(text::lower(name)))
        return b->kind;
    std::vector<std::string> known;
    for (const BackendTraits& b : backends())
        known.emplace_back(b.name);
    throw input_error("unknown backend '" + user_text::shown(name) +
                      "' (known: " + text::join(known, ", ") + ")");
}

std::string to_string(BackendKind kind) {
    const size_t i = static_cast<size_t>(kind);
    return i < backends().size() ? std::string(backends()[i].name) : "?";
}

BackendKind baseline_backend() {
    for (const BackendTraits& b : backends()) {
        if (b.plan_role == PlanRole::kBaseline)
            return b.kind;
    }
    throw std::logic_error("no baseline backend in the table");
}

std::vector<std::string> backend_names(bool (*has)(const BackendTraits&)) {
    std::vector<std::string> out;
    for (const BackendTraits& b : backends()) {
        if (has(b))
            out.emplace_back(b.name);
    }
    return out;
}

std::string backend_names_text(bool (*has)(const BackendTraits&), std::string_view last) {
    const std::vector<std::string> names = backend_names(has);
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        if (i > 0)
            out += i + 1 == names.size() ? " " + std::string(last) + " " : ", ";
        out += names[i];
    }
    return out;
}

bool takes_layout(const BackendTraits& t) {
    return t.takes_layout;
}

bool plans_partitions(const BackendTraits& t) {
    return t.plan_role == PlanRole::kPartitions;
}

}  // namespace migscope::partition
