// End-to-end refusals of hostile text (issue 45): bytes that are not UTF-8 in argv and NUL from
// files are refused with exit 2 by every entry point, naming the option or field; messages echo
// long values cut and control characters escaped; damaged stores are exit 2 naming the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/report_fixture.h"
#include "run_process.h"
#include "store/sqlite.h"

namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::string> kEnv = {
    {"MIGSCOPE_WORKER", FAKE_WORKER},
    {"MIGSCOPE_NVML_LIBRARY", FAKE_NVML_LIBRARY},
    {"MIGSCOPE_FAKE_NVML_CONFIG", std::string(FAKE_NVML_DIR) + "/h200.json"}};

const std::string kNotUtf8 = "ok\xff";

class Refusals : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::path(testing::TempDir()) /
               ("refusals-" +
                std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    ProcessResult migscope(std::vector<std::string> args) {
        args.insert(args.begin(), MIGSCOPE_BINARY);
        return run_process(args, kEnv);
    }
    std::string write(const std::string& name, const std::string& text) {
        const std::string path = (dir_ / name).string();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    // Exit 2, `expected` in the message, one line of stderr, nothing on stdout, and no folder
    // made under the test's own (nothing ran).
    void expect_refused(const std::vector<std::string>& args, const std::string& expected) {
        std::string shown;
        for (const std::string& a : args)
            shown += a + " ";
        const ProcessResult r = migscope(args);
        EXPECT_EQ(r.exit_code, 2) << shown << "\n" << r.err;
        EXPECT_NE(r.err.find(expected), std::string::npos) << shown << "\n" << r.err;
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
        EXPECT_EQ(r.err.find('\xff'), std::string::npos) << "raw bytes echoed: " << r.err;
        EXPECT_EQ(r.out, "") << shown;
    }
    fs::path dir_;
};

// Text options of every subcommand: names, labels, images, job lists and a command's arguments.
TEST_F(Refusals, TextThatIsNotUtf8IsRefusedInArgvNamingTheOption) {
    const std::string problem = ": is not UTF-8 (byte 0xff at offset 2)";
    const std::string run_dir = (dir_ / "run").string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"run", "--backend", "cpu", "--jobs", "mlp-tiny", "--run-dir", run_dir, "--label",
          kNotUtf8},
         "--label"},
        {{"run", "--backend", "cpu", "--jobs", kNotUtf8, "--run-dir", run_dir}, "--jobs"},
        {{"run", "--backend", "green", "--layout", kNotUtf8, "--jobs", "a"}, "--layout"},
        {{"plan", "--jobs", "resnet18", "--work", "10", "--format", "k8s", "--image", kNotUtf8},
         "--image"},
        {{"plan", "--jobs", "resnet18", "--work", "10", "--format", "k8s", "--image", "x:1",
          "--namespace", kNotUtf8},
         "--namespace"},
        {{"plan", "--jobs", "resnet18", "--work", "10", "--format", "slurm", "-o",
          (dir_ / "slurm").string(), "--slurm-gres-type", kNotUtf8},
         "--slurm-gres-type"},
        {{"profile", "--backend", "green", "--jobs", "mlp-tiny", "--run-dir", run_dir, "--label",
          kNotUtf8},
         "--label"},
        {{"train", "--model", kNotUtf8}, "--model"},
        {{"layouts", "--gpu", "h200", "--check", kNotUtf8}, "--check"},
        {{"monitor", "--duration", "0.1", "--", "true", kNotUtf8}, "command"},
        {{"exporter", "--hostname", kNotUtf8}, "--hostname"},
    };
    for (const auto& [args, option] : cases)
        expect_refused(args, option + problem);
    EXPECT_FALSE(fs::exists(run_dir)) << "a refused run made its folder";
}

// Integer options of every subcommand take decimal whole numbers that fit 64 bits: CLI11 alone
// read "-1" into an unsigned option as 2^64 - 1 (`plan --gpus -1` then died in an internal
// error), "0x10" as 16 and a number past 64 bits as the largest one.
TEST_F(Refusals, IntegerOptionsTakeDecimalWholeNumbersThatFit) {
    const std::vector<std::string> plan = {"plan", "--jobs", "resnet18:32,resnet50:32", "--work",
                                           "10"};
    const auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = plan;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    const std::string unsigned_problem = ": must be a whole number from 0";
    expect_refused(with({"--gpus", "-1"}), "--gpus" + unsigned_problem + ", not -1");
    expect_refused(with({"--top", "0x10"}), "--top" + unsigned_problem + ", not 0x10");
    expect_refused(with({"--gpus", "99999999999999999999"}),
                   "--gpus" + unsigned_problem + " that fits 64 bits");
    expect_refused(with({"--layout", "3g.71gb+2g.35gb", "--assign", "0,-1"}),
                   "--assign" + unsigned_problem + ", not -1");
    expect_refused(with({"--gpus", "5000"}), "--gpus must be 1 to 4096, not 5000");
    expect_refused({"stream", "trace", "--generate", "--count", "3", "--seed", "-1"},
                   "--seed" + unsigned_problem);
    // Leading zeros are decimal, not octal: 010 GPUs are ten.
    const ProcessResult ten = migscope(with({"--gpus", "010", "--format", "json"}));
    ASSERT_EQ(ten.exit_code, 0) << ten.err;
    EXPECT_EQ(nlohmann::json::parse(ten.out)["gpus"], 10) << ten.out.substr(0, 300);
}

// NUL cannot be in argv; it arrives through files: JSON jobs files ("\u0000"), TOML specs and
// plan files. Every entry point that reads them refuses it naming the file's field.
TEST_F(Refusals, NulFromFilesIsRefusedNamingTheField) {
    const std::string nul_argument = write(
        "nul-argument.json", R"({"jobs": [{"command": ["sh", "a\u0000b"], "name": "mine"}]})");
    const std::string nul_name =
        write("nul-name.json", R"({"jobs": [{"workload": "mlp-tiny", "name": "a\u0000"}]})");
    const std::string nul_data =
        write("nul-data.json", R"({"jobs": [{"workload": "mlp-tiny", "data": "/d\u0000x"}]})");
    const std::string run_dir = (dir_ / "run").string();
    for (const std::vector<std::string>& front :
         {std::vector<std::string>{"run", "--backend", "cpu", "--duration", "1", "--run-dir",
                                   run_dir},
          {"profile", "--backend", "green", "--run-dir", run_dir, "--db",
           (dir_ / "profile.db").string()},
          {"plan", "--work", "10"}}) {
        auto with = [&](const std::string& file) {
            std::vector<std::string> args = front;
            args.insert(args.end(), {"--jobs-file", file});
            return args;
        };
        expect_refused(with(nul_argument),
                       nul_argument + ": jobs[0].command[1]: holds a NUL byte (offset 1)");
        expect_refused(with(nul_name), nul_name + ": jobs[0].name: holds a NUL byte (offset 1)");
        expect_refused(with(nul_data), nul_data + ": jobs[0].data: holds a NUL byte (offset 2)");
    }
    EXPECT_FALSE(fs::exists(run_dir));

    // Bytes that are not UTF-8 in the file itself: named with the file and the offset, before
    // the JSON or TOML parser's own words.
    const std::string raw = write("raw.json", "{\"jobs\": [{\"command\": [\"sh\", \"a\xff\"]}]}");
    expect_refused({"plan", "--work", "10", "--jobs-file", raw},
                   raw + ": is not UTF-8 (byte 0xff at offset 31)");
    const std::string raw_spec = write("raw.toml", "version = 1\nname = \"n\xff\"\n");
    expect_refused({"run", raw_spec, "--dry-run"},
                   raw_spec + ": is not UTF-8 (byte 0xff at offset 21)");

    // An experiment spec (TOML): a job's command argument.
    const std::string spec = write("nul.toml", R"(version = 1
name = "nul"
[[mix]]
name = "m"
on = "cpu"
backends = ["cpu"]
jobs = [{command = ["sh", "-c", "x\u0000y"], name = "mine"}]
duration_s = 1
)");
    expect_refused({"run", spec, "--dry-run"}, "mix[0].jobs[0].command[2]");
    expect_refused({"run", spec, "--dry-run"}, "holds a NUL byte (offset 1)");

    // A plan file (run --plan): the plan of an own job, its argument given a NUL.
    const std::string jobs = (fs::path(EXAMPLES_DIR) / "own-job" / "jobs.json").string();
    const std::string profiles =
        (fs::path(MIGSCOPE_DATA_DIR) / "profiles-h200-own-jobs.json").string();
    const ProcessResult planned = migscope(
        {"plan", "--jobs-file", jobs, "--work", "1", "--profiles", profiles, "--format", "json"});
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    nlohmann::json plan = nlohmann::json::parse(planned.out);
    ASSERT_TRUE(plan.contains("jobs")) << planned.out.substr(0, 400);
    plan["jobs"][0]["command"][1] = std::string("train\0.py", 9);
    const std::string plan_file = write("plan.json", plan.dump());
    expect_refused({"run", "--plan", plan_file, "--run-dir", run_dir},
                   plan_file + ": jobs[0].command[1]: holds a NUL byte (offset 5)");
}

// Values are echoed at most 64 characters long, cut with "…"; control characters escaped.
TEST_F(Refusals, MessagesAreShortAndOneLine) {
    const std::string huge(18000, '9');
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"plan", "--jobs", "resnet18:32", "--work", huge},
          {"plan", "--jobs", "resnet18:32", "--work", "10", "--gpus", huge},
          {"run", "--backend", "cpu", "--duration", "1", "--jobs", "mlp-tiny:" + huge},
          {"run", "--backend", "cpu", "--jobs", "mlp-tiny", "--duration", huge},
          {"results", "show", "--db", (dir_ / "none.db").string(), huge},
          {"plan", "--jobs-file",
           write("huge.json", R"({"jobs": [{"workload": "resnet18", "batch": )" + huge + "}]}"),
           "--work", "10"}}) {
        const ProcessResult r = migscope(args);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err.substr(0, 300);
        EXPECT_LT(r.err.size(), 400u) << r.err.substr(0, 400);
        EXPECT_NE(r.err.find(std::string(60, '9')), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("…"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find(std::string(65, '9')), std::string::npos) << r.err;
    }
    // A newline, an escape sequence and a byte that is no UTF-8 stay on one line, escaped.
    const ProcessResult r = migscope(
        {"run", "--backend", "cpu", "--duration", "1", "--jobs", "mlp-tiny,evil\n\x1b[2J!touch X"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("job 'evil\\n\\x1b[2J!touch X'"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    const ProcessResult path = migscope({"report", (dir_ / "no\nstore\xff.db").string()});
    EXPECT_EQ(path.exit_code, 2) << path.err;
    EXPECT_NE(path.err.find("no\\nstore\\xff.db"), std::string::npos) << path.err;
}

// A store without one of its tables or columns, or with a damaged page: every command that reads
// it exits 2 naming the table.
TEST_F(Refusals, DamagedStoresAreExitTwoNamingTheTable) {
    using migscope::store::Database;
    using migscope::store::OpenMode;
    const std::string no_table = (dir_ / "no-table.db").string();
    migscope::test::write_report_fixture(no_table);
    Database::open(no_table, OpenMode::kExisting).exec("DROP TABLE jobs");
    const std::string no_column = (dir_ / "no-column.db").string();
    migscope::test::write_report_fixture(no_column);
    Database::open(no_column, OpenMode::kExisting).exec("ALTER TABLE runs DROP COLUMN label");
    for (const auto& [db, expected] :
         {std::pair{no_table, no_table + " is damaged: it has no table jobs"},
          std::pair{no_column, no_column + " is damaged: table runs has no column label"}}) {
        expect_refused({"results", "list", "--db", db}, expected);
        expect_refused({"results", "export", "--db", db, "--format", "json"}, expected);
        expect_refused({"results", "show", "--db", db, "1"}, expected);
        expect_refused({"report", db, "-o", (dir_ / "report.html").string()}, expected);
        expect_refused({"profile", "export", "--db", db}, expected);
        expect_refused({"results", "merge", "--db", (dir_ / "merged.db").string(), db}, expected);
    }

    // A damaged page under the runs table.
    const std::string damaged = (dir_ / "damaged.db").string();
    migscope::test::write_report_fixture(damaged);
    int64_t root_page = 0, page_size = 0;
    {
        Database db = Database::open(damaged, OpenMode::kExisting);
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        migscope::store::Statement root(db,
                                        "SELECT rootpage FROM sqlite_master WHERE name = 'runs'");
        ASSERT_TRUE(root.step());
        root_page = root.int64_at(0);
        migscope::store::Statement size(db, "PRAGMA page_size");
        ASSERT_TRUE(size.step());
        page_size = size.int64_at(0);
    }
    {
        std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp((root_page - 1) * page_size);
        const std::string garbage(static_cast<size_t>(page_size), '\xee');
        file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    expect_refused({"results", "list", "--db", damaged}, damaged + " is damaged (table runs");
    expect_refused({"results", "export", "--db", damaged, "--format", "json"},
                   damaged + " is damaged (table runs");
}

}  // namespace
