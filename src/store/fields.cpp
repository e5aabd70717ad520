// The stored records' fields, in the store's column order.
#include "store/fields.h"

#include <optional>
#include <type_traits>

#include "core/error.h"

namespace migscope::store {
namespace {

template <typename T>
struct TypeOf;
template <>
struct TypeOf<std::string> {
    static constexpr FieldType value = FieldType::kText;
};
template <>
struct TypeOf<int64_t> {
    static constexpr FieldType value = FieldType::kInteger;
};
template <>
struct TypeOf<double> {
    static constexpr FieldType value = FieldType::kReal;
};
template <>
struct TypeOf<bool> {
    static constexpr FieldType value = FieldType::kBoolean;
};
template <>
struct TypeOf<std::vector<std::string>> {
    static constexpr FieldType value = FieldType::kTextList;
};
template <typename T>
struct TypeOf<std::optional<T>> : TypeOf<T> {};

template <typename T>
FieldValue to_value(const T& v) {
    return v;
}
template <typename T>
FieldValue to_value(const std::optional<T>& v) {
    return v ? FieldValue(*v) : FieldValue();
}

// A value of the wrong type is a bug in this file, not bad input: std::get throws.
template <typename T>
void from_value(const FieldValue& v, T& out) {
    if (!std::holds_alternative<std::monostate>(v))
        out = std::get<T>(v);
}
template <typename T>
void from_value(const FieldValue& v, std::optional<T>& out) {
    if (std::holds_alternative<std::monostate>(v))
        out.reset();
    else
        out = std::get<T>(v);
}

// A field over a member that `access(record)` returns by reference.
template <typename Record, typename Access>
Field<Record> field(std::string name, Access access, std::string group = "") {
    using T = std::remove_cvref_t<decltype(access(std::declval<Record&>()))>;
    return {std::move(name), TypeOf<T>::value, std::move(group),
            [access](const Record& r) { return to_value(access(r)); },
            [access](Record& r, const FieldValue& v) { from_value(v, access(r)); }};
}

#define MIGSCOPE_MEMBER(path) \
    [](auto& r) -> auto& {    \
        return r.path;        \
    }

template <typename Record>
const Field<Record>& find(const std::vector<Field<Record>>& fields, const std::string& name) {
    for (const Field<Record>& f : fields) {
        if (f.name == name)
            return f;
    }
    throw runtime_error("no stored field '" + name + "'");
}

}  // namespace

const std::vector<Field<RunRecord>>& run_fields() {
    using R = RunRecord;
    static const std::vector<Field<R>> fields = {
        field<R>("id", MIGSCOPE_MEMBER(id)),
        field<R>("started_at", MIGSCOPE_MEMBER(started_at)),
        Field<R>{
            "role", FieldType::kText, "", [](const R& r) { return FieldValue(to_string(r.role)); },
            [](R& r, const FieldValue& v) {
                // NULL only in a damaged file: the column is NOT NULL in every schema version
                const auto* text = std::get_if<std::string>(&v);
                r.role = parse_run_role(text ? *text : "(none)");
            }},
        field<R>("parent_id", MIGSCOPE_MEMBER(parent_id)),
        field<R>("label", MIGSCOPE_MEMBER(label)),
        field<R>("backend", MIGSCOPE_MEMBER(backend)),
        field<R>("mode", MIGSCOPE_MEMBER(mode)),
        field<R>("layout", MIGSCOPE_MEMBER(layout)),
        field<R>("window_s", MIGSCOPE_MEMBER(window_s)),
        field<R>("counter_energy_j", MIGSCOPE_MEMBER(counter_energy_j), "energy"),
        field<R>("trace_energy_j", MIGSCOPE_MEMBER(trace_energy_j), "energy"),
        field<R>("disagreement_pct", MIGSCOPE_MEMBER(disagreement_pct), "energy"),
        field<R>("average_power_w", MIGSCOPE_MEMBER(average_power_w), "energy"),
        field<R>("peak_power_w", MIGSCOPE_MEMBER(peak_power_w), "energy"),
        field<R>("power_samples", MIGSCOPE_MEMBER(power_samples), "energy"),
        field<R>("max_gap_s", MIGSCOPE_MEMBER(max_gap_s), "energy"),
        field<R>("idle_power_w", MIGSCOPE_MEMBER(idle_power_w)),
        field<R>("idle_state", MIGSCOPE_MEMBER(idle_state)),
        field<R>("deep_idle_power_w", MIGSCOPE_MEMBER(deep_idle_power_w)),
        field<R>("sm_clock_mhz", MIGSCOPE_MEMBER(sm_clock_mhz)),
        field<R>("attribution_method", MIGSCOPE_MEMBER(attribution_method)),
        field<R>("aggregate_normalised_throughput",
                 MIGSCOPE_MEMBER(aggregate_normalised_throughput)),
        field<R>("interrupted", MIGSCOPE_MEMBER(interrupted)),
        field<R>("warnings", MIGSCOPE_MEMBER(warnings)),
        field<R>("migscope_version", MIGSCOPE_MEMBER(provenance.migscope_version), "provenance"),
        field<R>("migscope_commit", MIGSCOPE_MEMBER(provenance.migscope_commit), "provenance"),
        field<R>("gpu_name", MIGSCOPE_MEMBER(provenance.gpu_name), "provenance"),
        field<R>("gpu_uuid", MIGSCOPE_MEMBER(provenance.gpu_uuid), "provenance"),
        field<R>("driver_version", MIGSCOPE_MEMBER(provenance.driver_version), "provenance"),
        field<R>("cuda_driver_version", MIGSCOPE_MEMBER(provenance.cuda_driver_version),
                 "provenance"),
        field<R>("torch_version", MIGSCOPE_MEMBER(provenance.torch_version), "provenance"),
        field<R>("mig_mode", MIGSCOPE_MEMBER(provenance.mig_mode), "provenance"),
        field<R>("power_limit_w", MIGSCOPE_MEMBER(provenance.power_limit_w), "provenance"),
        field<R>("cuda_injection", MIGSCOPE_MEMBER(provenance.cuda_injection), "provenance"),
        field<R>("experiment", MIGSCOPE_MEMBER(experiment)),
        field<R>("cell_key", MIGSCOPE_MEMBER(cell_key)),
        field<R>("gpu_index", MIGSCOPE_MEMBER(gpu_index)),
        field<R>("host_run_id", MIGSCOPE_MEMBER(host_run_id)),
    };
    return fields;
}

const std::vector<Field<JobRecord>>& job_fields() {
    using J = JobRecord;
    static const std::vector<Field<J>> fields = {
        field<J>("name", MIGSCOPE_MEMBER(name)),
        field<J>("workload", MIGSCOPE_MEMBER(workload)),
        field<J>("command", MIGSCOPE_MEMBER(command)),
        field<J>("mode", MIGSCOPE_MEMBER(mode)),
        field<J>("batch", MIGSCOPE_MEMBER(batch)),
        field<J>("partition", MIGSCOPE_MEMBER(partition)),
        field<J>("sms_requested", MIGSCOPE_MEMBER(sms_requested)),
        field<J>("sms", MIGSCOPE_MEMBER(sms)),
        field<J>("memory_limit_gib", MIGSCOPE_MEMBER(memory_limit_gib)),
        field<J>("status", MIGSCOPE_MEMBER(status)),
        field<J>("message", MIGSCOPE_MEMBER(message)),
        field<J>("item_unit", MIGSCOPE_MEMBER(item_unit)),
        field<J>("steps", MIGSCOPE_MEMBER(steps)),
        field<J>("items", MIGSCOPE_MEMBER(items)),
        field<J>("busy_s", MIGSCOPE_MEMBER(busy_s)),
        field<J>("items_per_s", MIGSCOPE_MEMBER(items_per_s)),
        field<J>("step_time_p50_s", MIGSCOPE_MEMBER(step_time_p50_s)),
        field<J>("step_time_p95_s", MIGSCOPE_MEMBER(step_time_p95_s)),
        field<J>("mfu", MIGSCOPE_MEMBER(mfu)),
        field<J>("peak_memory_bytes", MIGSCOPE_MEMBER(peak_memory_bytes)),
        field<J>("finish_s", MIGSCOPE_MEMBER(finish_s)),
        field<J>("energy_j", MIGSCOPE_MEMBER(energy_j)),
        field<J>("energy_per_item_j", MIGSCOPE_MEMBER(energy_per_item_j)),
        field<J>("normalised_throughput", MIGSCOPE_MEMBER(normalised_throughput)),
        field<J>("sm_clock_mhz", MIGSCOPE_MEMBER(sm_clock_mhz)),
        field<J>("step_mode", MIGSCOPE_MEMBER(step_mode)),
        field<J>("memory_utilization_pct", MIGSCOPE_MEMBER(memory_utilization_pct)),
        field<J>("span_s", MIGSCOPE_MEMBER(span_s)),
        field<J>("items_per_s_spread_pct", MIGSCOPE_MEMBER(items_per_s_spread_pct)),
    };
    return fields;
}

const Field<RunRecord>& run_field(const std::string& name) {
    return find(run_fields(), name);
}

const Field<JobRecord>& job_field(const std::string& name) {
    return find(job_fields(), name);
}

}  // namespace migscope::store
