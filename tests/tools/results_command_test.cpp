// End-to-end tests of the results store from the CLI: `migscope run --db` with a stand-in worker
// and the fake NVML, then `migscope results list/show/export`, and bad input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/user_text.h"
#include "run_process.h"
#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::map<std::string, std::string> kEnv = {
    {"MIGSCOPE_WORKER", FAKE_WORKER},
    {"FAKE_STEP_S", "0.01"},
    {"MIGSCOPE_NVML_LIBRARY", FAKE_NVML_LIBRARY},
    {"MIGSCOPE_FAKE_NVML_CONFIG", std::string(FAKE_NVML_DIR) + "/h200.json"}};

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    for (std::string line; std::getline(s, line);)
        out.push_back(line);
    return out;
}

class ResultsCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(testing::TempDir()) /
               ("results-" +
                std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        db_ = (dir_ / "results.db").string();
    }
    ProcessResult migscope(std::vector<std::string> args) {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        return run_process(args, kEnv);
    }
    fs::path dir_;
    std::string db_;
};

TEST_F(ResultsCommand, StoresARunWithItsBaselineAndListsShowsAndExportsThem) {
    const ProcessResult run =
        migscope({"run", "--run-dir", (dir_ / "run").string(), "--backend", "timeslice", "--jobs",
                  "a,b", "--duration", "0.3", "--baseline", "sequential", "--idle-probe", "0.2",
                  "--db", db_, "--label", "first try", "--format", "json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("stored as run 1"), std::string::npos) << run.err;
    const json measured = json::parse(run.out);

    // show: the stored values are the measured ones, with provenance.
    const ProcessResult show = migscope({"results", "show", "1", "--db", db_, "--format", "json"});
    ASSERT_EQ(show.exit_code, 0) << show.err;
    const json stored = json::parse(show.out);
    EXPECT_EQ(stored["id"], 1);
    EXPECT_EQ(stored["role"], "run");
    EXPECT_TRUE(stored["parent_id"].is_null());
    EXPECT_EQ(stored["label"], "first try");
    EXPECT_EQ(stored["backend"], "timeslice");
    EXPECT_TRUE(stored["layout"].is_null());
    EXPECT_EQ(stored["window_s"], measured["run"]["window_s"]);
    EXPECT_EQ(stored["energy"]["counter_energy_j"], measured["run"]["energy"]["counter_energy_j"]);
    EXPECT_EQ(stored["attribution_method"], measured["run"]["attribution_method"]);
    EXPECT_EQ(stored["provenance"]["gpu_name"], "NVIDIA H200");
    EXPECT_EQ(stored["provenance"]["mig_mode"], "disabled");
    EXPECT_EQ(stored["provenance"]["power_limit_w"], 700.0);       // the fake NVML's h200.json
    EXPECT_EQ(stored["provenance"]["torch_version"], "0.0-fake");  // from the workers' ready
    EXPECT_FALSE(stored["provenance"]["migscope_version"].get<std::string>().empty());
    ASSERT_EQ(stored["jobs"].size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const json& m = measured["run"]["jobs"][i];
        const json& s = stored["jobs"][i];
        for (const char* key : {"name", "status", "items_per_s", "energy_j", "steps", "items",
                                "batch", "normalised_throughput", "sm_clock_mhz", "step_mode"})
            EXPECT_EQ(s[key], m[key]) << key;
    }
    EXPECT_FALSE(stored.contains("trace"));
    const ProcessResult traced =
        migscope({"results", "show", "1", "--db", db_, "--format", "json", "--trace"});
    EXPECT_GT(json::parse(traced.out)["trace"].size(), 0u);

    // The baseline belongs to its run.
    const json baseline =
        json::parse(migscope({"results", "show", "2", "--db", db_, "--format", "json"}).out);
    EXPECT_EQ(baseline["role"], "baseline");
    EXPECT_EQ(baseline["parent_id"], 1);
    EXPECT_EQ(baseline["backend"], "sequential");
    const ProcessResult shown = migscope({"results", "show", "1", "--db", db_});
    EXPECT_NE(shown.out.find("MIG disabled, power limit 700 W"), std::string::npos) << shown.out;

    // list: a table, JSON and CSV.
    const ProcessResult table = migscope({"results", "list", "--db", db_});
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("baseline of 1"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("2 ok"), std::string::npos) << table.out;
    const json listed =
        json::parse(migscope({"results", "list", "--db", db_, "--format", "json"}).out);
    ASSERT_EQ(listed.size(), 2u);
    EXPECT_EQ(listed[0]["id"], 1);
    EXPECT_EQ(listed[1]["id"], 2);
    const auto list_csv = lines(migscope({"results", "list", "--db", db_, "--format", "csv"}).out);
    ASSERT_EQ(list_csv.size(), 3u);
    EXPECT_EQ(list_csv[0].rfind("id,started_at,role,parent_id,label", 0), 0u);

    // export: one CSV row per job, to a file; JSON: the runs with their jobs.
    const fs::path csv_path = dir_ / "jobs.csv";
    ASSERT_EQ(
        migscope({"results", "export", "--db", db_, "--format", "csv", "-o", csv_path.string()})
            .exit_code,
        0);
    const auto rows = lines(read_file(csv_path));
    ASSERT_EQ(rows.size(), 5u);  // header + 2 jobs of the run + 2 of the baseline
    // CSV columns have the JSON names: every job field, and every run field but the warnings,
    // the run's prefixed run_ where a job field has the same name.
    const std::string header = "," + rows[0] + ",";
    for (const auto& item : stored["jobs"][0].items())
        EXPECT_NE(header.find("," + item.key() + ","), std::string::npos) << item.key();
    for (const char* run_key : {"run_id", "run_mode", "run_sm_clock_mhz", "backend", "layout",
                                "counter_energy_j", "gpu_name", "experiment", "cell_key"})
        EXPECT_NE(header.find(std::string(",") + run_key + ","), std::string::npos) << run_key;
    EXPECT_EQ(rows[1].rfind("1,", 0), 0u);
    EXPECT_EQ(rows[3].rfind("2,", 0), 0u);
    const json exported =
        json::parse(migscope({"results", "export", "--db", db_, "--format", "json"}).out);
    ASSERT_EQ(exported.size(), 2u);
    EXPECT_EQ(exported[1]["jobs"].size(), 2u);
}

// A store in a read-only folder: `results list`, `export` and `report` read it (they once took a
// write transaction and failed); `run --db` refuses it before measuring anything (it once
// measured the whole run, then could not store it). As root, whom no permission stops, migscope
// runs as `nobody` through util-linux's setpriv.
TEST_F(ResultsCommand, AReadOnlyStoreIsReadByReadersAndRefusedBeforeARun) {
    ASSERT_EQ(migscope({"run", "--run-dir", (dir_ / "run").string(), "--backend", "timeslice",
                        "--jobs", "a", "--duration", "0.2", "--idle-probe", "0", "--db", db_})
                  .exit_code,
              0);
    const fs::path folder = dir_ / "read-only";
    fs::create_directories(folder);
    fs::copy_file(db_, folder / "results.db");
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read |
                                fs::perms::others_exec);
    fs::permissions(dir_, fs::perms::all);  // the unprivileged user writes reports here
    const std::string store = (folder / "results.db").string();
    auto as_user = [](std::vector<std::string> args) {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        if (geteuid() == 0)
            args.insert(args.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                       "--clear-groups"});
        return run_process(args, kEnv);
    };
    ProcessResult r = as_user({"results", "list", "--db", store});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("timeslice"), std::string::npos) << r.out;
    r = as_user({"results", "export", "--db", store, "--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = as_user({"report", store, "-o", (dir_ / "report.html").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir_ / "report.html"));

    r = as_user({"run", "--run-dir", (dir_ / "refused").string(), "--backend", "timeslice",
                 "--jobs", "a", "--duration", "0.2", "--idle-probe", "0", "--db", store});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(store), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "refused")) << "the run started";
    EXPECT_EQ(r.err.find("starting"), std::string::npos) << r.err;
    fs::permissions(folder, fs::perms::owner_all, fs::perm_options::add);
}

TEST_F(ResultsCommand, BadInputExitsTwoNamingIt) {
    ProcessResult r = migscope({"results", "list", "--db", db_});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(db_), std::string::npos) << r.err;

    ASSERT_EQ(migscope({"run", "--run-dir", (dir_ / "run").string(), "--backend", "timeslice",
                        "--jobs", "a", "--duration", "0.2", "--idle-probe", "0", "--db", db_})
                  .exit_code,
              0);
    r = migscope({"results", "show", "42", "--db", db_});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("no run 42"), std::string::npos) << r.err;

    // An id beyond 64 bits was once read as 9223372036854775807.
    r = migscope({"results", "show", "99999999999999999999", "--db", db_});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("id: must be a whole number that fits 64 bits"), std::string::npos)
        << r.err;

    r = migscope({"results", "show", "0", "--db", db_});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not in range 1 to 9223372036854775807"), std::string::npos) << r.err;

    r = migscope({"results", "list"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;

    r = migscope({"results", "export", "--db", db_, "--format", "xml"});
    EXPECT_EQ(r.exit_code, 2);

    // A file that is not a results store is refused before a run starts.
    std::ofstream(dir_ / "not-a-db.txt") << "hello, this is not SQLite\n";
    r = migscope({"run", "--run-dir", (dir_ / "run2").string(), "--backend", "timeslice", "--jobs",
                  "a", "--duration", "0.2", "--db", (dir_ / "not-a-db.txt").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("not-a-db.txt"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "run2"));

    // merge: a source that is not a store is refused, naming it; the target keeps its run.
    r = migscope({"results", "merge", "--db", db_, (dir_ / "not-a-db.txt").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("not-a-db.txt"), std::string::npos) << r.err;
    r = migscope({"results", "merge", "--db", db_, (dir_ / "missing.db").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(migscope({"results", "list", "--db", db_, "--format", "csv"}).out).size(), 2u);
}

TEST_F(ResultsCommand, MergeBringsTwoStoresRunsTogetherOnceEach) {
    // Two machines start from one carried store, then each measures a run of its own.
    auto run_into = [&](const std::string& db, const std::string& label) {
        const ProcessResult r = migscope(
            {"run", "--run-dir", (dir_ / label).string(), "--backend", "timeslice", "--jobs", "a",
             "--duration", "0.2", "--baseline", "sequential", "--idle-probe", "0", "--db", db,
             "--label", label});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    };
    run_into(db_, "shared");
    const std::string other = (dir_ / "other.db").string();
    fs::copy_file(db_, other);
    run_into(db_, "here");
    run_into(other, "there");

    const ProcessResult merged = migscope({"results", "merge", "--db", db_, other});
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_NE(merged.out.find("2 runs added, 2 held already"), std::string::npos) << merged.out;
    EXPECT_NE(merged.out.find(": 6 runs"), std::string::npos) << merged.out;

    const json runs =
        json::parse(migscope({"results", "list", "--db", db_, "--format", "json"}).out);
    ASSERT_EQ(runs.size(), 6u);
    EXPECT_EQ(runs[4]["label"], "there");
    EXPECT_EQ(runs[5]["role"], "baseline");
    EXPECT_EQ(runs[5]["parent_id"], runs[4]["id"]);

    // Again: nothing new. Into a new file: everything, in the source's order.
    EXPECT_NE(migscope({"results", "merge", "--db", db_, other}).out.find("0 runs added"),
              std::string::npos);
    const std::string fresh = (dir_ / "fresh.db").string();
    const ProcessResult into_new = migscope({"results", "merge", "--db", fresh, db_});
    ASSERT_EQ(into_new.exit_code, 0) << into_new.err;
    EXPECT_NE(into_new.out.find("6 runs added, 0 held already"), std::string::npos)
        << into_new.out;
}

// A store locked past the busy timeout (another program's write transaction) when the measured
// run is stored: the run is kept in RUN_DIR/unstored-runs.db, the exit code is 1 and the
// message names the file and the import; `results import` loads it once the store is free, and
// importing it again adds nothing.
TEST_F(ResultsCommand, ALockedStoreKeepsTheRunInItsDirectoryAndImportLoadsIt) {
    migscope::store::Store::open(db_);  // a store that passes the pre-run check
    const fs::path run_dir = dir_ / "run";
    const std::string err_path = (dir_ / "stderr.txt").string();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(err, 2);
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        for (const auto& [k, v] : kEnv)
            setenv(k.c_str(), v.c_str(), 1);
        execl(MIGSCOPE_BINARY, MIGSCOPE_BINARY, "run", "--run-dir", run_dir.c_str(), "--backend",
              "timeslice", "--jobs", "a", "--duration", "0.5", "--baseline", "sequential",
              "--idle-probe", "0", "--db", db_.c_str(), "--label", "locked out",
              static_cast<char*>(nullptr));
        _exit(126);
    }
    // Once its job runs, the store is opened and checked: lock it until migscope ends.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(run_dir / "a.stderr") && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(fs::exists(run_dir / "a.stderr"));
    {
        migscope::store::Database lock =
            migscope::store::Database::open(db_, migscope::store::OpenMode::kExisting);
        lock.exec("BEGIN IMMEDIATE");
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 1);
        lock.exec("ROLLBACK");
    }
    const std::string err = read_file(err_path);
    const std::string file = (run_dir / "unstored-runs.db").string();
    EXPECT_NE(err.find("the results store " + db_ + " could not take the run ("), std::string::npos)
        << err;
    EXPECT_NE(err.find("database is locked"), std::string::npos) << err;
    EXPECT_NE(err.find("it is kept in " + file + ": load it with `migscope results import " + file +
                       " --db " + db_ + "`"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
    ASSERT_TRUE(fs::exists(file));
    EXPECT_GT(fs::file_size(run_dir / "result.json"), 0u);
    EXPECT_EQ(
        json::parse(migscope({"results", "list", "--db", db_, "--format", "json"}).out).size(), 0u);

    const ProcessResult imported = migscope({"results", "import", file, "--db", db_});
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_NE(imported.out.find(file + ": 2 runs imported, 0 held already"), std::string::npos)
        << imported.out;
    const json runs =
        json::parse(migscope({"results", "list", "--db", db_, "--format", "json"}).out);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0]["label"], "locked out");
    EXPECT_EQ(runs[0]["role"], "run");
    EXPECT_EQ(runs[1]["role"], "baseline");
    EXPECT_EQ(runs[1]["parent_id"], runs[0]["id"]);
    // The imported run is the one result.json describes.
    const json result = json::parse(read_file(run_dir / "result.json"));
    EXPECT_EQ(runs[0]["started_at"], result["run"]["started_at"]);
    const ProcessResult again = migscope({"results", "import", file, "--db", db_});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.out.find("0 runs imported, 2 held already"), std::string::npos) << again.out;
    EXPECT_NE(migscope({"results", "import", (dir_ / "none.db").string(), "--db", db_}).exit_code,
              0);
}

// Text that is not UTF-8 in a store (written by an older migscope, or another program): the
// JSON export and the report are valid UTF-8 with the bytes shown as \xNN, not an internal error.
TEST_F(ResultsCommand, StoredTextThatIsNotUtf8IsExportedAndReportedAsValidUtf8) {
    {
        migscope::store::Store db = migscope::store::Store::open(db_);
        migscope::store::RunRecord r;
        r.started_at = "2026-12-04T10:00:00Z";
        r.label = "caf\xe9 \xff";
        r.backend = "timeslice";
        r.mode = "duration";
        r.window_s = 1;
        r.attribution_method = "by \xfe";
        r.warnings = {"warned \xc3"};
        r.provenance.migscope_version = "v";
        r.provenance.migscope_commit = "c";
        migscope::store::JobRecord j;
        j.name = "job\xff";
        j.mode = "train";
        j.partition = "whole GPU";
        j.status = "ok";
        j.message = "said \x80";
        r.jobs = {j};
        const int64_t id = db.add_run(r);
        r.role = migscope::store::RunRole::kBaseline;
        r.parent_id = id;
        db.add_run(r);
    }
    const ProcessResult exported = migscope({"results", "export", "--db", db_, "--format", "json"});
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_TRUE(migscope::user_text::is_utf8(exported.out));
    const json doc = json::parse(exported.out);
    ASSERT_EQ(doc.size(), 2u);
    EXPECT_EQ(doc[0]["label"], "caf\\xe9 \\xff");
    EXPECT_EQ(doc[0]["jobs"][0]["name"], "job\\xff");
    EXPECT_EQ(doc[0]["jobs"][0]["message"], "said \\x80");
    for (const char* format : {"table", "csv"}) {
        const ProcessResult listed = migscope({"results", "list", "--db", db_, "--format", format});
        EXPECT_EQ(listed.exit_code, 0) << format << ": " << listed.err;
    }
    const ProcessResult shown = migscope({"results", "show", "1", "--db", db_, "--format", "json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_TRUE(migscope::user_text::is_utf8(shown.out));

    const std::string page = (dir_ / "report.html").string();
    const ProcessResult report = migscope({"report", db_, "-o", page});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const std::string html = read_file(page);
    EXPECT_TRUE(migscope::user_text::is_utf8(html));
    EXPECT_NE(html.find("\\xff"), std::string::npos);
}

}  // namespace
