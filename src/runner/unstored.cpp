// Storing a measured cell, or keeping it in a file of its own when the store cannot take it.
#include "runner/unstored.h"

#include "core/error.h"

namespace migscope::runner {
namespace {

std::vector<int64_t> add(store::Store& db, std::vector<store::RunRecord> rows, bool host,
                         std::optional<int64_t> parent_id, store::EarlierAttempts earlier) {
    for (store::RunRecord& row : rows)
        row.parent_id = parent_id;
    if (host)
        return db.add_host_run(rows, earlier);
    std::vector<int64_t> ids;
    for (const store::RunRecord& row : rows)
        ids.push_back(db.add_run(row, earlier));
    return ids;
}

// Fills `ids` as it goes: what was stored before a failure stays known.
void add_cell(store::Store& db, const CellRows& rows, store::EarlierAttempts earlier,
              StoredIds& ids) {
    ids.run = add(db, rows.run, rows.host, std::nullopt, earlier);
    if (!rows.baseline.empty() && !ids.run.empty())
        ids.baseline = add(db, rows.baseline, rows.host, ids.run.front(), earlier);
}

}  // namespace

std::string describe(const UnstoredRuns& u, const std::string& db_path,
                     const std::string& run_dir) {
    const std::string head =
        "the results store " + db_path + " could not take the run (" + u.store_problem + ")";
    if (!u.file_problem.empty())
        return head + ", and it could not be kept in " + u.file + " either (" + u.file_problem +
               "): the measured results are in " + run_dir + "/result.json";
    return head + "; it is kept in " + u.file + ": load it with `migscope results import " +
           u.file + " --db " + db_path + "`";
}

StoredIds store_cell(store::Store& db, const CellRows& rows, store::EarlierAttempts earlier,
                     const std::string& run_dir, std::optional<UnstoredRuns>& unstored) {
    StoredIds ids;
    try {
        add_cell(db, rows, earlier, ids);
        return ids;
    } catch (const Error& e) {
        unstored = UnstoredRuns{e.what(), run_dir + "/" + kUnstoredFile, ""};
    }
    try {
        store::Store file = store::Store::open(unstored->file, store::OpenMode::kCreate);
        StoredIds kept;
        add_cell(file, rows, store::EarlierAttempts::kKeep, kept);
    } catch (const Error& e) {
        unstored->file_problem = e.what();
    }
    return ids;
}

}  // namespace migscope::runner
