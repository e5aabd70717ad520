// The field description: it names every column of the store's tables, and every described field
// survives a write and a read (a value set through the description comes back through it).
#include "store/fields.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "store/sqlite.h"
#include "store/store.h"

namespace migscope::store {
namespace {

namespace fs = std::filesystem;

fs::path fresh_path(const std::string& name) {
    const fs::path dir = fs::path(testing::TempDir()) / "fields-test";
    fs::create_directories(dir);
    const fs::path path = dir / (name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"})
        fs::remove(path.string() + suffix);
    return path;
}

std::set<std::string> columns(const std::string& db_path, const std::string& table) {
    Database db = Database::open(db_path, OpenMode::kExisting);
    Statement s(db, "SELECT name FROM pragma_table_info('" + table + "')");
    std::set<std::string> out;
    while (s.step())
        out.insert(s.text_at(0));
    return out;
}

template <typename Record>
std::set<std::string> names(const std::vector<Field<Record>>& fields) {
    std::set<std::string> out;
    for (const Field<Record>& f : fields)
        out.insert(f.name);
    return out;
}

// A distinct, non-default value of the field's type, from its position.
FieldValue sample_value(const std::string& name, FieldType type, int position) {
    switch (type) {
        case FieldType::kText:
            return name == "role" ? std::string("baseline") : name + "-" + std::to_string(position);
        case FieldType::kInteger:
            return int64_t{1000 + position};
        case FieldType::kReal:
            return 0.5 + position;
        case FieldType::kBoolean:
            return true;
        case FieldType::kTextList:
            return std::vector<std::string>{name, "with, a comma"};
    }
    return {};
}

TEST(StoreFields, NameEveryColumnOfTheSchema) {
    const fs::path path = fresh_path("columns");
    Store::open(path.string());
    EXPECT_EQ(names(run_fields()), columns(path.string(), "runs"));
    std::set<std::string> job_columns = columns(path.string(), "jobs");
    job_columns.erase("run_id");  // the row's place, not a field of the job
    job_columns.erase("position");
    EXPECT_EQ(names(job_fields()), job_columns);
}

TEST(StoreFields, EveryFieldRoundTripsThroughTheStore) {
    RunRecord run;
    for (size_t i = 1; i < run_fields().size(); ++i) {  // the id is the store's
        const Field<RunRecord>& f = run_fields()[i];
        f.set(run, sample_value(f.name, f.type, static_cast<int>(i)));
    }
    run.parent_id.reset();  // a baseline's parent must exist
    JobRecord job;
    for (size_t i = 0; i < job_fields().size(); ++i)
        job_fields()[i].set(
            job, sample_value(job_fields()[i].name, job_fields()[i].type, static_cast<int>(i)));
    run.jobs = {job};

    Store store = Store::open(fresh_path("round-trip").string());
    const int64_t id = store.add_run(run);
    const std::optional<RunRecord> back = store.get_run(id);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->id, id);
    for (size_t i = 1; i < run_fields().size(); ++i)
        EXPECT_EQ(run_fields()[i].get(*back), run_fields()[i].get(run)) << run_fields()[i].name;
    ASSERT_EQ(back->jobs.size(), 1u);
    for (const Field<JobRecord>& f : job_fields())
        EXPECT_EQ(f.get(back->jobs[0]), f.get(job)) << f.name;
}

TEST(StoreFields, UnsetOptionalsStayEmpty) {
    Store store = Store::open(fresh_path("empty").string());
    RunRecord run;
    run.started_at = "2026-12-01T00:00:00Z";
    run.jobs = {JobRecord{}};
    const std::optional<RunRecord> back = store.get_run(store.add_run(run));
    ASSERT_TRUE(back);
    for (const char* name : {"items_per_s", "mfu", "energy_j", "step_mode", "batch"})
        EXPECT_TRUE(std::holds_alternative<std::monostate>(job_field(name).get(back->jobs[0])))
            << name;
    EXPECT_TRUE(std::holds_alternative<std::monostate>(run_field("counter_energy_j").get(*back)));
    EXPECT_THROW(run_field("no_such_field"), std::exception);
}

}  // namespace
}  // namespace migscope::store
