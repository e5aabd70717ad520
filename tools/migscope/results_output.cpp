// Printers for stored runs: one field schema (run_json's names) for JSON, tables and CSV.
#include "results_output.h"

#include <fmt/format.h>

#include <map>

#include "json_value.h"
#include "report/run_text.h"
#include "report/table.h"

namespace migscope::cli {
namespace {

using nlohmann::json;
using report::Align;
using report::role_text;
using report::status_summary;

// CSV cells: empty for NULL; numbers in their shortest exact form; text quoted when needed.
std::string cell(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}
std::string cell(double v) {
    return fmt::format("{}", v);
}
std::string cell(int64_t v) {
    return std::to_string(v);
}
template <typename T>
std::string cell(const std::optional<T>& v) {
    return v ? cell(*v) : std::string();
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string text;
    for (const std::string& item : items)
        text += (text.empty() ? "" : separator) + item;
    return text;
}

std::string num(const std::optional<double>& v, int decimals, const std::string& unit = "") {
    if (!v)
        return "-";
    return fmt::format("{:.{}f}", *v, decimals) + (unit.empty() ? "" : " " + unit);
}

json job_json(const store::JobRecord& j) {
    return {{"name", j.name},
            {"workload", maybe(j.workload)},
            {"command", j.command},
            {"mode", j.mode},
            {"batch", maybe(j.batch)},
            {"partition", j.partition},
            {"sms_requested", maybe(j.sms_requested)},
            {"sms", maybe(j.sms)},
            {"memory_limit_gib", maybe(j.memory_limit_gib)},
            {"status", j.status},
            {"message", j.message},
            {"item_unit", maybe(j.item_unit)},
            {"steps", j.steps},
            {"items", j.items},
            {"busy_s", j.busy_s},
            {"items_per_s", maybe(j.items_per_s)},
            {"step_time_p50_s", maybe(j.step_time_p50_s)},
            {"step_time_p95_s", maybe(j.step_time_p95_s)},
            {"mfu", maybe(j.mfu)},
            {"peak_memory_bytes", maybe(j.peak_memory_bytes)},
            {"finish_s", maybe(j.finish_s)},
            {"energy_j", maybe(j.energy_j)},
            {"energy_per_item_j", maybe(j.energy_per_item_j)},
            {"normalised_throughput", maybe(j.normalised_throughput)},
            {"sm_clock_mhz_median", maybe(j.sm_clock_mhz)},
            {"step_mode", maybe(j.step_mode)}};
}

const std::vector<std::string> kRunCsvColumns = {"run_id",
                                                 "started_at",
                                                 "role",
                                                 "parent_id",
                                                 "label",
                                                 "backend",
                                                 "mode",
                                                 "layout",
                                                 "jobs",
                                                 "window_s",
                                                 "counter_energy_j",
                                                 "status",
                                                 "gpu_name",
                                                 "migscope_version"};

std::vector<std::string> run_csv_cells(const store::RunRecord& r) {
    return {cell(r.id),
            cell(r.started_at),
            cell(to_string(r.role)),
            cell(r.parent_id),
            cell(r.label),
            cell(r.backend),
            cell(r.mode),
            cell(r.layout),
            cell(static_cast<int64_t>(r.jobs.size())),
            cell(r.window_s),
            cell(r.counter_energy_j),
            cell(status_summary(r)),
            cell(r.provenance.gpu_name),
            cell(r.provenance.migscope_version)};
}

void csv_line(const std::vector<std::string>& cells, std::ostream& out) {
    out << join(cells, ",") << '\n';
}

}  // namespace

json record_json(const store::RunRecord& r) {
    const store::Provenance& p = r.provenance;
    json j;
    j["id"] = r.id;
    j["started_at"] = r.started_at;
    j["role"] = to_string(r.role);
    j["parent_id"] = maybe(r.parent_id);
    j["label"] = r.label;
    j["experiment"] = maybe(r.experiment);
    j["cell_key"] = maybe(r.cell_key);
    j["provenance"] = {{"migscope_version", p.migscope_version},
                       {"migscope_commit", p.migscope_commit},
                       {"gpu_name", maybe(p.gpu_name)},
                       {"gpu_uuid", maybe(p.gpu_uuid)},
                       {"driver_version", maybe(p.driver_version)},
                       {"cuda_driver_version", maybe(p.cuda_driver_version)},
                       {"torch_version", maybe(p.torch_version)},
                       {"mig_mode", maybe(p.mig_mode)}};
    j["backend"] = r.backend;
    j["mode"] = r.mode;
    j["layout"] = maybe(r.layout);
    j["window_s"] = r.window_s;
    j["energy"] = {{"counter_energy_j", maybe(r.counter_energy_j)},
                   {"trace_energy_j", maybe(r.trace_energy_j)},
                   {"disagreement_pct", maybe(r.disagreement_pct)},
                   {"average_power_w", maybe(r.average_power_w)},
                   {"peak_power_w", maybe(r.peak_power_w)},
                   {"power_samples", r.power_samples},
                   {"max_gap_s", maybe(r.max_gap_s)}};
    j["idle_power_w"] = maybe(r.idle_power_w);
    j["sm_clock_mhz_median"] = maybe(r.sm_clock_mhz);
    j["attribution_method"] = r.attribution_method;
    j["aggregate_normalised_throughput"] = maybe(r.aggregate_normalised_throughput);
    j["interrupted"] = r.interrupted;
    j["warnings"] = r.warnings;
    j["jobs"] = json::array();
    for (const store::JobRecord& job : r.jobs)
        j["jobs"].push_back(job_json(job));
    if (!r.trace.empty()) {
        j["trace"] = json::array();
        for (const store::TraceSample& s : r.trace) {
            j["trace"].push_back({{"t_s", s.t_s},
                                  {"power_instant_w", maybe(s.power_instant_w)},
                                  {"power_average_w", maybe(s.power_average_w)},
                                  {"energy_j", maybe(s.energy_j)},
                                  {"sm_clock_mhz", maybe(s.sm_clock_mhz)},
                                  {"memory_used_mib", maybe(s.memory_used_mib)}});
        }
    }
    return j;
}

void print_runs_table(const std::vector<store::RunRecord>& runs, std::ostream& out) {
    report::TextTable t({{"id", Align::kRight},
                         {"time (UTC)"},
                         {"role"},
                         {"backend"},
                         {"layout"},
                         {"jobs", Align::kRight},
                         {"window", Align::kRight},
                         {"energy", Align::kRight},
                         {"status"},
                         {"label"}});
    for (const store::RunRecord& r : runs) {
        t.add_row({std::to_string(r.id), r.started_at, role_text(r), r.backend,
                   r.layout.value_or("-"), std::to_string(r.jobs.size()), num(r.window_s, 2, "s"),
                   num(r.counter_energy_j ? std::optional<double>(*r.counter_energy_j / 1e3)
                                          : std::nullopt,
                       2, "kJ"),
                   status_summary(r), r.label});
    }
    t.print(out);
}

void print_runs_csv(const std::vector<store::RunRecord>& runs, std::ostream& out) {
    csv_line(kRunCsvColumns, out);
    for (const store::RunRecord& r : runs)
        csv_line(run_csv_cells(r), out);
}

void print_run_record(const store::RunRecord& r, std::ostream& out) {
    const store::Provenance& p = r.provenance;
    out << "run " << r.id << " (" << role_text(r) << "), " << r.started_at << ", " << r.backend
        << (r.layout ? " " + *r.layout : "") << (r.label.empty() ? "" : ", label: " + r.label)
        << '\n';
    out << "  migscope " << p.migscope_version << " (" << p.migscope_commit << "); GPU "
        << p.gpu_name.value_or("-") << " " << p.gpu_uuid.value_or("") << ", driver "
        << p.driver_version.value_or("-") << ", CUDA " << p.cuda_driver_version.value_or("-")
        << ", torch " << p.torch_version.value_or("-") << ", MIG " << p.mig_mode.value_or("-")
        << '\n';
    report::TextTable t({{"job"},
                         {"partition"},
                         {"SMs", Align::kRight},
                         {"status"},
                         {"throughput", Align::kRight},
                         {"unit"},
                         {"step p50", Align::kRight},
                         {"MFU", Align::kRight},
                         {"energy", Align::kRight},
                         {"norm.", Align::kRight}});
    for (const store::JobRecord& j : r.jobs) {
        const std::optional<int64_t> sms = j.sms ? j.sms : j.sms_requested;
        t.add_row(
            {j.name, j.partition, sms ? std::to_string(*sms) : "-",
             j.status + (j.message.empty() ? "" : ": " + j.message), num(j.items_per_s, 1),
             j.item_unit ? *j.item_unit + "/s" : "-",
             num(j.step_time_p50_s ? std::optional<double>(*j.step_time_p50_s * 1e3) : std::nullopt,
                 1, "ms"),
             num(j.mfu ? std::optional<double>(*j.mfu * 100) : std::nullopt, 1, "%"),
             num(j.energy_j, 0, "J"), num(j.normalised_throughput, 2)});
    }
    t.print(out);
    out << "  " << (r.mode == "duration" ? "window" : "makespan") << " " << num(r.window_s, 2, "s")
        << "; energy " << num(r.counter_energy_j, 0, "J") << " (board counter), trace "
        << num(r.trace_energy_j, 0, "J") << " (" << r.power_samples << " samples)\n";
    out << "  power " << num(r.average_power_w, 0, "W") << " average, "
        << num(r.peak_power_w, 0, "W") << " peak, idle " << num(r.idle_power_w, 0, "W")
        << "; SM clock " << num(r.sm_clock_mhz, 0, "MHz") << '\n';
    if (!r.attribution_method.empty())
        out << "  attribution " << r.attribution_method << '\n';
    for (const std::string& w : r.warnings)
        out << "  warning: " << w << '\n';
    if (r.interrupted)
        out << "  interrupted: partial results\n";
}

void print_jobs_csv(const std::vector<store::RunRecord>& runs, std::ostream& out) {
    std::vector<std::string> header = {"run_id",
                                       "started_at",
                                       "role",
                                       "parent_id",
                                       "label",
                                       "backend",
                                       "run_mode",
                                       "layout",
                                       "window_s",
                                       "counter_energy_j",
                                       "trace_energy_j",
                                       "disagreement_pct",
                                       "average_power_w",
                                       "peak_power_w",
                                       "power_samples",
                                       "max_gap_s",
                                       "idle_power_w",
                                       "run_sm_clock_mhz_median",
                                       "attribution_method",
                                       "aggregate_normalised_throughput",
                                       "interrupted",
                                       "migscope_version",
                                       "migscope_commit",
                                       "gpu_name",
                                       "gpu_uuid",
                                       "driver_version",
                                       "cuda_driver_version",
                                       "torch_version",
                                       "mig_mode",
                                       "job",
                                       "workload",
                                       "command",
                                       "job_mode",
                                       "batch",
                                       "partition",
                                       "sms_requested",
                                       "sms",
                                       "memory_limit_gib",
                                       "status",
                                       "message",
                                       "item_unit",
                                       "steps",
                                       "items",
                                       "busy_s",
                                       "items_per_s",
                                       "step_time_p50_s",
                                       "step_time_p95_s",
                                       "mfu",
                                       "peak_memory_bytes",
                                       "finish_s",
                                       "energy_j",
                                       "energy_per_item_j",
                                       "normalised_throughput",
                                       "sm_clock_mhz_median",
                                       "step_mode"};
    csv_line(header, out);
    for (const store::RunRecord& r : runs) {
        const store::Provenance& p = r.provenance;
        const std::vector<std::string> run_cells = {
            cell(r.id),
            cell(r.started_at),
            cell(to_string(r.role)),
            cell(r.parent_id),
            cell(r.label),
            cell(r.backend),
            cell(r.mode),
            cell(r.layout),
            cell(r.window_s),
            cell(r.counter_energy_j),
            cell(r.trace_energy_j),
            cell(r.disagreement_pct),
            cell(r.average_power_w),
            cell(r.peak_power_w),
            cell(r.power_samples),
            cell(r.max_gap_s),
            cell(r.idle_power_w),
            cell(r.sm_clock_mhz),
            cell(r.attribution_method),
            cell(r.aggregate_normalised_throughput),
            cell(std::string(r.interrupted ? "true" : "false")),
            cell(p.migscope_version),
            cell(p.migscope_commit),
            cell(p.gpu_name),
            cell(p.gpu_uuid),
            cell(p.driver_version),
            cell(p.cuda_driver_version),
            cell(p.torch_version),
            cell(p.mig_mode)};
        if (r.jobs.empty()) {
            std::vector<std::string> cells = run_cells;
            cells.resize(header.size());
            csv_line(cells, out);
            continue;
        }
        for (const store::JobRecord& j : r.jobs) {
            std::vector<std::string> cells = run_cells;
            for (std::string c : {cell(j.name),
                                  cell(j.workload),
                                  cell(join(j.command, " ")),
                                  cell(j.mode),
                                  cell(j.batch),
                                  cell(j.partition),
                                  cell(j.sms_requested),
                                  cell(j.sms),
                                  cell(j.memory_limit_gib),
                                  cell(j.status),
                                  cell(j.message),
                                  cell(j.item_unit),
                                  cell(j.steps),
                                  cell(j.items),
                                  cell(j.busy_s),
                                  cell(j.items_per_s),
                                  cell(j.step_time_p50_s),
                                  cell(j.step_time_p95_s),
                                  cell(j.mfu),
                                  cell(j.peak_memory_bytes),
                                  cell(j.finish_s),
                                  cell(j.energy_j),
                                  cell(j.energy_per_item_j),
                                  cell(j.normalised_throughput),
                                  cell(j.sm_clock_mhz),
                                  cell(j.step_mode)})
                cells.push_back(std::move(c));
            csv_line(cells, out);
        }
    }
}

}  // namespace migscope::cli
