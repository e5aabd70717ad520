// The results store: one transaction per run; reads rebuild the plain records.
#include "store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include <type_traits>
#include <variant>

#include "core/error.h"
#include "core/user_text.h"
#include "store/fields.h"
#include "store/schema.h"

namespace migscope::store {
namespace {

// Lists (warnings, a command's argv) are kept as JSON arrays of strings; bytes of an item that
// begin no UTF-8 character (a warning naming a path) as \xNN, which JSON can hold.
std::string list_text(const std::vector<std::string>& items) {
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& item : items)
        list.push_back(user_text::as_utf8(item));
    return list.dump();
}

std::vector<std::string> parse_list(const std::string& text) {
    try {
        return nlohmann::json::parse(text).get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        throw input_error("results store: a list column is not a JSON list of strings: " + text);
    }
}

// "a, b, c" of the fields' names; `from` skips the first ones (the run's id, assigned here).
template <typename Record>
std::string column_list(const std::vector<Field<Record>>& fields, size_t from = 0) {
    std::string out;
    for (size_t i = from; i < fields.size(); ++i)
        out += (out.empty() ? "" : ", ") + fields[i].name;
    return out;
}

std::string placeholders(size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i)
        out += i ? ", ?" : "?";
    return out;
}

void add(Statement& s, const FieldValue& value) {
    std::visit(
        [&s](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>)
                s.add(std::nullopt);
            else if constexpr (std::is_same_v<T, bool>)
                s.add(int64_t{v ? 1 : 0});
            else if constexpr (std::is_same_v<T, std::vector<std::string>>)
                s.add(list_text(v));
            else
                s.add(v);
        },
        value);
}

FieldValue value_at(const Statement& s, int column, FieldType type) {
    if (s.is_null(column))
        return {};
    switch (type) {
        case FieldType::kText:
            return s.text_at(column);
        case FieldType::kInteger:
            return s.int64_at(column);
        case FieldType::kReal:
            return s.double_at(column);
        case FieldType::kBoolean:
            return s.int64_at(column) != 0;
        case FieldType::kTextList:
            return parse_list(s.text_at(column));
    }
    return {};
}

template <typename Record>
Record read_row(const Statement& s, const std::vector<Field<Record>>& fields) {
    Record r;
    for (size_t c = 0; c < fields.size(); ++c)
        fields[c].set(r, value_at(s, static_cast<int>(c), fields[c].type));
    return r;
}

void read_jobs(const Database& db, RunRecord& run) {
    Statement s(db, "SELECT " + column_list(job_fields()) +
                        " FROM jobs WHERE run_id = ? ORDER BY position");
    s.bind(1, run.id);
    while (s.step())
        run.jobs.push_back(read_row(s, job_fields()));
}

void read_trace(const Database& db, RunRecord& run) {
    Statement s(db,
                "SELECT t_s, power_instant_w, power_average_w, energy_j, sm_clock_mhz, "
                "memory_used_mib, gpu_utilization_pct, memory_utilization_pct FROM power_samples "
                "WHERE run_id = ? ORDER BY position");
    s.bind(1, run.id);
    while (s.step()) {
        run.trace.push_back({s.double_at(0), s.maybe_double_at(1), s.maybe_double_at(2),
                             s.maybe_double_at(3), s.maybe_double_at(4), s.maybe_double_at(5),
                             s.maybe_double_at(6), s.maybe_double_at(7)});
    }
}

// WAL: readers do not block the writer; a killed writer leaves the last commit intact. Turning
// it on needs the file alone for a moment: while another connection reads it (a sweep's plan of
// a store being created) SQLite answers "database is locked" at once, without its busy timeout,
// so it is tried again for as long as that timeout (10 s).
void use_wal(Database& db) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        try {
            db.exec("PRAGMA journal_mode = WAL");
            return;
        } catch (const Error&) {
            if ((sqlite3_errcode(db.handle()) & 0xff) != SQLITE_BUSY ||
                std::chrono::steady_clock::now() > deadline)
                throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace

Store Store::open(const std::string& path, OpenMode mode) {
    Database db = Database::open(path, mode);
    db.exec("PRAGMA foreign_keys = ON");
    std::optional<SchemaUpgrade> upgrade = prepare_schema(db, mode);
    if (mode != OpenMode::kRead) {
        use_wal(db);
        db.exec("PRAGMA synchronous = FULL");  // a commit survives power loss too
    }
    return Store(std::move(db), std::move(upgrade));
}

int64_t Store::add_run(const RunRecord& run, EarlierAttempts earlier) {
    Transaction tx(db_);
    const int64_t id = insert_run(run);
    if (earlier == EarlierAttempts::kReplaceUnfinished)
        delete_unfinished_attempts(run,
                                   run.role == RunRole::kBaseline ? run.parent_id.value_or(0) : id);
    tx.commit();
    return id;
}

std::vector<int64_t> Store::add_host_run(const std::vector<RunRecord>& gpus,
                                         EarlierAttempts earlier) {
    Transaction tx(db_);
    std::vector<int64_t> ids;
    for (const RunRecord& gpu : gpus)
        ids.push_back(insert_run(gpu));
    for (const int64_t id : ids) {
        Statement link(db_, "UPDATE runs SET host_run_id = ? WHERE id = ?");
        link.bind(1, ids.front()).bind(2, id);
        link.run();
    }
    if (earlier == EarlierAttempts::kReplaceUnfinished && !gpus.empty()) {
        const RunRecord& first = gpus.front();
        delete_unfinished_attempts(
            first, first.role == RunRole::kBaseline ? first.parent_id.value_or(0) : ids.front());
    }
    tx.commit();
    return ids;
}

void Store::delete_unfinished_attempts(const RunRecord& finished, int64_t run_id) {
    // Only a finished row finishes its cell; rows outside an experiment's cell have no attempts.
    if (finished.interrupted || !finished.experiment || !finished.cell_key)
        return;
    const bool baseline = finished.role == RunRole::kBaseline;
    // The cell's other runs (a host run by its first row), unfinished: a row of it interrupted,
    // or no finished baseline where the cell has one. Their baselines go with them (ON DELETE
    // CASCADE on parent_id), and so do their jobs and traces.
    Statement unfinished(
        db_,
        "SELECT r.id FROM runs r WHERE r.experiment = ? AND r.cell_key = ? AND r.role = 'run' "
        "AND r.id <> ? AND (r.host_run_id IS NULL OR r.host_run_id = r.id) AND ("
        "EXISTS (SELECT 1 FROM runs g WHERE (g.id = r.id OR g.host_run_id = r.id) "
        "AND g.interrupted <> 0) OR (? AND NOT EXISTS (SELECT 1 FROM runs b WHERE "
        "b.parent_id = r.id AND b.role = 'baseline' AND b.interrupted = 0)))");
    unfinished.add(*finished.experiment)
        .add(*finished.cell_key)
        .add(run_id)
        .add(int64_t{baseline ? 1 : 0});
    std::vector<int64_t> ids;
    while (unfinished.step())
        ids.push_back(unfinished.int64_at(0));
    for (const int64_t id : ids) {
        Statement remove(db_, "DELETE FROM runs WHERE id = ? OR host_run_id = ?");
        remove.add(id).add(id);
        remove.run();
    }
}

int64_t Store::insert_run(const RunRecord& run) {
    Statement insert_run(db_, "INSERT INTO runs (" + column_list(run_fields(), 1) + ") VALUES (" +
                                  placeholders(run_fields().size() - 1) + ")");
    for (size_t i = 1; i < run_fields().size(); ++i)
        add(insert_run, run_fields()[i].get(run));
    insert_run.run();
    const int64_t id = db_.last_insert_rowid();

    Statement insert_job(db_, "INSERT INTO jobs (run_id, position, " + column_list(job_fields()) +
                                  ") VALUES (?, ?, " + placeholders(job_fields().size()) + ")");
    for (size_t i = 0; i < run.jobs.size(); ++i) {
        insert_job.add(id).add(static_cast<int64_t>(i));
        for (const Field<JobRecord>& f : job_fields())
            add(insert_job, f.get(run.jobs[i]));
        insert_job.run();
    }

    Statement insert_sample(db_,
                            "INSERT INTO power_samples (run_id, position, t_s, power_instant_w, "
                            "power_average_w, energy_j, sm_clock_mhz, memory_used_mib, "
                            "gpu_utilization_pct, memory_utilization_pct) VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < run.trace.size(); ++i) {
        const TraceSample& t = run.trace[i];
        insert_sample.bind(1, id)
            .bind(2, static_cast<int64_t>(i))
            .bind(3, t.t_s)
            .bind(4, t.power_instant_w)
            .bind(5, t.power_average_w)
            .bind(6, t.energy_j)
            .bind(7, t.sm_clock_mhz)
            .bind(8, t.memory_used_mib)
            .bind(9, t.gpu_utilization_pct)
            .bind(10, t.memory_utilization_pct);
        insert_sample.run();
    }
    return id;
}

std::vector<RunRecord> Store::list_runs() {
    std::vector<RunRecord> runs;
    Statement s(db_, "SELECT " + column_list(run_fields()) + " FROM runs ORDER BY id");
    while (s.step())
        runs.push_back(read_row(s, run_fields()));
    for (RunRecord& r : runs)
        read_jobs(db_, r);
    return runs;
}

std::vector<RunRecord> Store::host_run(int64_t host_run_id) {
    std::vector<RunRecord> runs;
    Statement s(db_, "SELECT " + column_list(run_fields()) +
                         " FROM runs WHERE host_run_id = ? ORDER BY id");
    s.bind(1, host_run_id);
    while (s.step())
        runs.push_back(read_row(s, run_fields()));
    for (RunRecord& r : runs)
        read_jobs(db_, r);
    return runs;
}

std::vector<StoredCell> Store::stored_cells(const std::string& experiment) {
    std::vector<StoredCell> cells;
    Statement s(
        db_,
        "SELECT r.cell_key, EXISTS (SELECT 1 FROM runs b WHERE b.parent_id = r.id AND "
        "b.role = 'baseline' AND b.interrupted = 0), "
        "(SELECT COUNT(*) FROM runs g WHERE g.host_run_id = r.id), "
        "EXISTS (SELECT 1 FROM jobs j JOIN runs g ON j.run_id = g.id WHERE g.host_run_id = r.id "
        "AND j.status = 'gpu failed') FROM runs r WHERE r.experiment = ? "
        "AND r.cell_key IS NOT NULL AND r.role = 'run' AND r.interrupted = 0 "
        "AND (r.host_run_id IS NULL OR r.host_run_id = r.id) ORDER BY r.id");
    s.bind(1, experiment);
    while (s.step())
        cells.push_back({s.text_at(0), s.int64_at(1) != 0, std::max<int64_t>(1, s.int64_at(2)),
                         s.int64_at(3) != 0});
    return cells;
}

bool is_empty_database(const std::string& path) {
    try {
        const Database db = Database::open(path, OpenMode::kRead);
        Statement any(db, "SELECT count(*) FROM sqlite_master");
        return any.step() && any.int64_at(0) == 0;
    } catch (const Error&) {
        return false;
    }
}

std::optional<RunRecord> Store::get_run(int64_t id, TraceLoad trace) {
    Statement s(db_, "SELECT " + column_list(run_fields()) + " FROM runs WHERE id = ?");
    s.bind(1, id);
    if (!s.step())
        return std::nullopt;
    RunRecord run = read_row(s, run_fields());
    read_jobs(db_, run);
    if (trace == TraceLoad::kWith)
        read_trace(db_, run);
    return run;
}

}  // namespace migscope::store
