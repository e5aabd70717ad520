// Printers for stored runs: one field schema (run_json's names) for JSON, tables and CSV.
#include "report/record_output.h"

#include <fmt/format.h>


#include <cmath>
#include <functional>
#include <type_traits>
#include <variant>

#include "core/text.h"
#include "core/user_text.h"
#include "report/host_total.h"
#include "report/json_value.h"
#include "report/run_text.h"
#include "report/table.h"
#include "store/fields.h"
#include "telemetry/idle_baseline.h"

namespace migscope::report {
namespace {

using nlohmann::json;

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

json to_json(const store::FieldValue& value) {
    return std::visit(
        [](const auto& v) -> json {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
                return nullptr;
            else
                return v;
        },
        value);
}

// A CSV cell: empty for "not measured"; a list joined by spaces.
std::string csv_cell(const store::FieldValue& value) {
    return std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>)
                return "";
            else if constexpr (std::is_same_v<T, bool>)
                return v ? "true" : "false";
            else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                return cell(text::join(v, " "));
            else
                return cell(v);
        },
        value);
}

json job_json(const store::JobRecord& j) {
    json out;
    for (const store::Field<store::JobRecord>& f : store::job_fields())
        out[f.name] = to_json(f.get(j));
    return out;
}

// `results list --format csv`: the table's columns, stored fields but for two counted ones.
const std::vector<std::string> kRunListColumns = {"id",
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

std::string run_list_cell(const store::RunRecord& r, const std::string& column) {
    if (column == "jobs")
        return cell(static_cast<int64_t>(r.jobs.size()));
    if (column == "status")
        return cell(status_summary(r));
    return csv_cell(store::run_field(column).get(r));
}

void csv_line(const std::vector<std::string>& cells, std::ostream& out) {
    out << text::join(cells, ",") << '\n';
}

// A stored number in a table's unit: `factor` times the field, `decimals` places, or "-".
std::function<std::string(const store::JobRecord&)> number(const std::string& field, double factor,
                                                           int decimals, const std::string& unit) {
    const store::Field<store::JobRecord>& f = store::job_field(field);
    return [&f, factor, decimals, unit](const store::JobRecord& j) {
        const store::FieldValue v = f.get(j);
        std::optional<double> x;
        if (const auto* d = std::get_if<double>(&v))
            x = *d * factor;
        else if (const auto* i = std::get_if<int64_t>(&v))
            x = static_cast<double>(*i) * factor;
        return cell_number(x, decimals, unit);
    };
}

struct JobColumn {
    std::string header;
    Align align;
    std::function<std::string(const store::JobRecord&)> text;
};

// The job table's columns, each over the stored fields.
const std::vector<JobColumn>& job_columns() {
    using J = store::JobRecord;
    static const std::vector<JobColumn> columns = {
        {"job", Align::kLeft, [](const J& j) { return j.name; }},
        {"partition", Align::kLeft, [](const J& j) { return j.partition; }},
        {"SMs", Align::kRight,
         [](const J& j) {
             const std::optional<int64_t> sms = j.sms ? j.sms : j.sms_requested;
             return sms ? std::to_string(*sms) : std::string("-");
         }},
        {"status", Align::kLeft, [](const J& j) { return j.status; }},
        {"throughput", Align::kRight, [](const J& j) { return cell_si(j.items_per_s); }},
        {"±", Align::kRight, number("items_per_s_spread_pct", 1, 1, "%")},
        {"unit", Align::kLeft,
         [](const J& j) { return j.item_unit ? *j.item_unit + "/s" : std::string("-"); }},
        {"step p50", Align::kRight, number("step_time_p50_s", 1e3, 1, "ms")},
        {"p95", Align::kRight, number("step_time_p95_s", 1e3, 1, "ms")},
        {"MFU", Align::kRight, number("mfu", 100, 1, "%")},
        {"peak mem", Align::kRight, number("peak_memory_bytes", 1.0 / (1 << 30), 1, "GiB")},
        {"energy", Align::kRight, number("energy_j", 1e-3, 2, "kJ")},
        {"per item", Align::kRight, number("energy_per_item_j", 1e3, 2, "mJ")},
        {"norm.", Align::kRight, number("normalised_throughput", 1, 2, "")},
    };
    return columns;
}

}  // namespace

json record_json(const store::RunRecord& r) {
    json j;
    for (const store::Field<store::RunRecord>& f : store::run_fields()) {
        if (f.group.empty())
            j[f.name] = to_json(f.get(r));
        else
            j[f.group][f.name] = to_json(f.get(r));
    }
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
    TextTable t({{"id", Align::kRight},
                 {"time (UTC)"},
                 {"role"},
                 {"backend"},
                 {"layout"},
                 {"jobs", Align::kRight},
                 {"window", Align::kRight},
                 {"energy", Align::kRight},
                 {"status"},
                 {"label"}});
    const auto kj = [](const std::optional<double>& j) {
        return cell_number(j ? std::optional<double>(*j / 1e3) : std::nullopt, 2, "kJ");
    };
    // A host run's total follows its last GPU row.
    const HostRuns hosts = host_runs(runs);
    std::vector<std::string> notes;
    for (const store::RunRecord& r : runs) {
        t.add_row({std::to_string(r.id), r.started_at, role_text(r), r.backend,
                   r.layout.value_or("-"), std::to_string(r.jobs.size()),
                   cell_number(r.window_s, 2, "s"), kj(r.counter_energy_j), status_summary(r),
                   r.label});
        const auto* host = host_run_ending_at(hosts, r);
        if (!host)
            continue;
        const auto& [host_id, rows] = *host;
        const HostTotals total = host_totals(rows);
        t.add_row({"", "", host_total_role(host_id, total), "", "", std::to_string(total.jobs),
                   cell_number(total.window_s, 2, "s"), kj(total.energy_j), status_summary(rows),
                   ""});
        notes.push_back(host_total_role(host_id, total) + ": " + host_total_note(total));
    }
    t.print(out);
    for (const std::string& n : notes)
        out << n << '\n';
}

void print_runs_csv(const std::vector<store::RunRecord>& runs, std::ostream& out) {
    csv_line(kRunListColumns, out);
    for (const store::RunRecord& r : runs) {
        std::vector<std::string> cells;
        for (const std::string& column : kRunListColumns)
            cells.push_back(run_list_cell(r, column));
        csv_line(cells, out);
    }
}

void print_job_table(const std::vector<store::JobRecord>& jobs, std::ostream& out) {
    std::vector<TextTable::Column> header;
    for (const JobColumn& c : job_columns())
        header.push_back({c.header, c.align});
    TextTable t(header);
    for (const store::JobRecord& j : jobs) {
        std::vector<std::string> row;
        for (const JobColumn& c : job_columns())
            row.push_back(c.text(j));
        t.add_row(row);
    }
    t.print(out);
    for (const store::JobRecord& j : jobs) {
        if (!j.message.empty())
            out << "  " << user_text::escaped(j.name) << " (" << j.status
                << "): " << user_text::escaped(j.message) << '\n';
    }
}

void print_run_record(const store::RunRecord& r, const std::vector<store::RunRecord>& host_rows,
                      std::ostream& out) {
    const store::Provenance& p = r.provenance;
    out << "run " << r.id << " (" << role_text(r) << "), " << r.started_at << ", " << r.backend
        << (r.layout ? " " + *r.layout : "")
        << (r.label.empty() ? "" : ", label: " + user_text::escaped(r.label)) << '\n';
    out << "  migscope " << p.migscope_version << " (" << p.migscope_commit << "); GPU "
        << p.gpu_name.value_or("-") << " " << p.gpu_uuid.value_or("") << ", driver "
        << p.driver_version.value_or("-") << ", CUDA " << p.cuda_driver_version.value_or("-")
        << ", torch " << p.torch_version.value_or("-") << ", MIG " << p.mig_mode.value_or("-")
        << ", power limit " << cell_number(p.power_limit_w, 0, "W") << '\n';
    print_job_table(r.jobs, out);
    out << "  " << (r.mode == "duration" ? "window" : "makespan") << " "
        << cell_number(r.window_s, 2, "s") << "; energy " << cell_number(r.counter_energy_j, 0, "J")
        << " (board counter), trace " << cell_number(r.trace_energy_j, 0, "J") << " ("
        << r.power_samples << " samples)\n";
    out << "  power " << cell_number(r.average_power_w, 0, "W") << " average, "
        << cell_number(r.peak_power_w, 0, "W") << " peak, idle "
        << cell_number(r.idle_power_w, 0, "W");
    if (r.idle_power_w)
        out << " (" << telemetry::state_text(r.idle_state.value_or("")) << ")";
    if (r.deep_idle_power_w)
        out << ", deep idle " << cell_number(r.deep_idle_power_w, 0, "W");
    out << "; SM clock " << cell_number(r.sm_clock_mhz, 0, "MHz") << '\n';
    if (!r.attribution_method.empty())
        out << "  attribution " << r.attribution_method << '\n';
    for (const std::string& w : r.warnings)
        out << "  warning: " << w << '\n';
    if (r.interrupted)
        out << "  interrupted: partial results\n";
    if (!r.host_run_id || host_rows.empty())
        return;
    const HostTotals total = host_totals(host_rows);
    std::vector<std::string> ids;
    for (const store::RunRecord& row : host_rows)
        ids.push_back(std::to_string(row.id) + " (GPU " +
                      std::to_string(row.gpu_index.value_or(0)) + ")");
    out << host_total_role(*r.host_run_id, total) << " (runs " << text::join(ids, ", ")
        << "): " << (total.mode == HostMode::kWork ? "makespan " : "window ")
        << cell_number(total.window_s, 2, "s") << ", energy " << cell_number(total.energy_j, 0, "J")
        << ", " << total.jobs << " jobs (" << status_summary(host_rows) << ")\n  "
        << host_total_note(total) << '\n';
}

void print_jobs_csv(const std::vector<store::RunRecord>& runs, std::ostream& out) {
    // The JSON names; a run field that a job field shares its name with (and the run's id) is
    // run_NAME. The warnings are left out: a list of sentences is no CSV cell.
    std::vector<std::string> header;
    std::vector<const store::Field<store::RunRecord>*> run_columns;
    for (const store::Field<store::RunRecord>& f : store::run_fields()) {
        if (f.name == "warnings")
            continue;
        bool shared = f.name == "id";
        for (const store::Field<store::JobRecord>& jf : store::job_fields())
            shared = shared || jf.name == f.name;
        header.push_back(shared ? "run_" + f.name : f.name);
        run_columns.push_back(&f);
    }
    for (const store::Field<store::JobRecord>& f : store::job_fields())
        header.push_back(f.name);
    csv_line(header, out);
    for (const store::RunRecord& r : runs) {
        std::vector<std::string> run_cells;
        for (const store::Field<store::RunRecord>* f : run_columns)
            run_cells.push_back(csv_cell(f->get(r)));
        if (r.jobs.empty()) {
            run_cells.resize(header.size());
            csv_line(run_cells, out);
            continue;
        }
        for (const store::JobRecord& j : r.jobs) {
            std::vector<std::string> cells = run_cells;
            for (const store::Field<store::JobRecord>& f : store::job_fields())
                cells.push_back(csv_cell(f.get(j)));
            csv_line(cells, out);
        }
    }
}

void print_runs_json(const std::vector<store::RunRecord>& runs, std::ostream& out) {
    nlohmann::json doc = nlohmann::json::array();
    for (const store::RunRecord& r : runs)
        doc.push_back(record_json(r));
    out << utf8_dump(doc, 2) << '\n';
}

const Printers<std::vector<store::RunRecord>>& runs_list_printers() {
    static const Printers<std::vector<store::RunRecord>> printers(
        "results list",
        {{"table", print_runs_table}, {"json", print_runs_json}, {"csv", print_runs_csv}});
    return printers;
}

const Printers<std::vector<store::RunRecord>>& runs_export_printers() {
    static const Printers<std::vector<store::RunRecord>> printers(
        "results export", {{"csv", print_jobs_csv}, {"json", print_runs_json}});
    return printers;
}

const Printers<StoredRun>& stored_run_printers() {
    static const Printers<StoredRun> printers(
        "results show",
        {{"table",
          [](const StoredRun& r, std::ostream& out) { print_run_record(r.run, r.host_rows, out); }},
         {"json", [](const StoredRun& r, std::ostream& out) {
              out << utf8_dump(record_json(r.run), 2) << '\n';
          }}});
    return printers;
}

}  // namespace migscope::report
