// End-to-end tests of `migscope run` with a stand-in worker: cpu, timeslice (+ sequential
// baseline), green and mig against the fake NVML, and bad input.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/child_process.h"
#include "core/user_text.h"
#include "run_process.h"
#include "store/store.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::map<std::string, std::string> env_for(const std::string& config) {
    std::map<std::string, std::string> env = {{"MIGSCOPE_WORKER", FAKE_WORKER},
                                              {"FAKE_STEP_S", "0.01"}};
    if (config.empty()) {
        env["MIGSCOPE_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1";
    } else {
        env["MIGSCOPE_NVML_LIBRARY"] = FAKE_NVML_LIBRARY;
        env["MIGSCOPE_FAKE_NVML_CONFIG"] = std::string(FAKE_NVML_DIR) + "/" + config;
    }
    return env;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class RunCommand : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ =
            fs::path(testing::TempDir()) /
            ("run-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir_);
    }
    ProcessResult run(std::vector<std::string> args, const std::string& config) {
        args.insert(args.begin(), {MIGSCOPE_BINARY, "run", "--run-dir", dir_.string()});
        return run_process(args, env_for(config));
    }
    fs::path dir_;
};

TEST_F(RunCommand, CpuBackendWithoutAGpuPrintsJsonAndKeepsEverythingInTheRunDirectory) {
    const ProcessResult r =
        run({"--jobs", "resnet-tiny,gpt2-tiny", "--duration", "0.5", "--format", "json"}, "");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["run"]["backend"], "cpu");
    ASSERT_EQ(doc["run"]["jobs"].size(), 2u);
    for (const json& j : doc["run"]["jobs"]) {
        EXPECT_EQ(j["status"], "ok");
        EXPECT_GT(j["items_per_s"].get<double>(), 0);
    }
    EXPECT_EQ(json::parse(read_file(dir_ / "result.json")), doc);
    EXPECT_NE(read_file(dir_ / "resnet-tiny.stderr").find("CUDA_VISIBLE_DEVICES="),
              std::string::npos);
}

TEST_F(RunCommand, JobsFromTheListAndTheFileRunTogetherListFirst) {
    fs::create_directories(dir_.parent_path());
    const fs::path file = dir_.string() + "-jobs.json";
    std::ofstream(file) << R"({"jobs": [{"workload": "resnet-tiny"}]})";
    const ProcessResult r = run({"--jobs", "resnet-tiny", "--jobs-file", file.string(),
                                 "--duration", "0.5", "--format", "json"},
                                "");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json jobs = json::parse(r.out)["run"]["jobs"];
    ASSERT_EQ(jobs.size(), 2u);  // the CPU backend wants a core per job: two here
    EXPECT_EQ(jobs[0]["name"], "resnet-tiny");
    EXPECT_EQ(jobs[1]["name"], "resnet-tiny#2");
    for (const json& j : jobs)
        EXPECT_EQ(j["status"], "ok") << j["name"];
}

TEST_F(RunCommand, TimesliceMeasuresBoardEnergyAndComparesWithTheSequentialBaseline) {
    const ProcessResult r = run({"--backend", "timeslice", "--jobs", "a,b", "--duration", "0.5",
                                 "--baseline", "sequential", "--idle-probe", "0.3"},
                                "h200.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Against the sequential baseline"), std::string::npos) << r.out;
    const json doc = json::parse(read_file(dir_ / "result.json"));
    EXPECT_GT(doc["run"]["energy"]["counter_energy_j"].get<double>(), 0);
    EXPECT_GT(doc["baseline"]["window_s"].get<double>(), 0.99);
    double sum = 0;
    for (const json& j : doc["run"]["jobs"])
        sum += j["energy_j"].get<double>();
    EXPECT_NEAR(sum, doc["run"]["energy"]["counter_energy_j"].get<double>(), 1e-6);
    // The window on the wall clock: as long as window_s, and within this test's lifetime.
    const json windows = doc["run"]["windows_unix_s"];
    ASSERT_EQ(windows.size(), 1u);
    const double open_s = windows[0][0].get<double>(), close_s = windows[0][1].get<double>();
    EXPECT_NEAR(close_s - open_s, doc["run"]["window_s"].get<double>(), 1e-3);
    const double now_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    EXPECT_LT(close_s, now_s);
    EXPECT_GT(open_s, now_s - 120);
    EXPECT_TRUE(fs::exists(dir_ / "trace.csv"));
    EXPECT_TRUE(fs::exists(dir_ / "baseline" / "a.stderr"));
}

TEST_F(RunCommand, GreenRunsEveryJobInOneWorkerWithTheLayoutsSmCounts) {
    const ProcessResult r = run({"--backend", "green", "--layout", "3g.71gb+1g.18gb", "--jobs",
                                 "a,b", "--duration", "0.3", "--format", "json"},
                                "h200.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json spec = json::parse(read_file(dir_ / "green-spec.json"));
    EXPECT_EQ(spec["jobs"][0]["sms"], 60);
    EXPECT_EQ(spec["jobs"][1]["sms"], 16);
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["run"]["jobs"][0]["sms"], 60);  // as the (stand-in) worker reported
    EXPECT_EQ(doc["run"]["jobs"][1]["partition"], "1g.18gb");
    EXPECT_EQ(doc["run"]["jobs"][0]["step_mode"], "cuda-graph");  // the workers' default
    EXPECT_FALSE(spec["jobs"][0].contains("cuda_graph"));
}

TEST_F(RunCommand, NoCudaGraphMakesEveryBuiltInJobStepEagerly) {
    const ProcessResult r = run({"--backend", "green", "--layout", "3g.71gb+1g.18gb", "--jobs",
                                 "a,b", "--duration", "0.3", "--format", "json", "--no-cuda-graph"},
                                "h200.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json spec = json::parse(read_file(dir_ / "green-spec.json"));
    EXPECT_EQ(spec["jobs"][1]["cuda_graph"], false);
    EXPECT_EQ(json::parse(r.out)["run"]["jobs"][1]["step_mode"], "eager");
}

TEST_F(RunCommand, AssignedJobsQueueOnTheirGreenPartition) {
    // b runs on the 3g.71gb after a; c has the 1g.18gb.
    const ProcessResult r = run({"--backend", "green", "--layout", "3g.71gb+1g.18gb", "--assign",
                                 "0,0,1", "--jobs", "a,b,c", "--work", "5", "--format", "json"},
                                "h200.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json spec = json::parse(read_file(dir_ / "green-spec.json"));
    EXPECT_EQ(spec["jobs"][1]["after"], 0);
    EXPECT_FALSE(spec["jobs"][1].contains("sms"));
    const json jobs = json::parse(r.out)["run"]["jobs"];
    EXPECT_EQ(jobs[1]["partition"], "3g.71gb");
    EXPECT_EQ(jobs[1]["after_job"], 0);
    // b started when a ended: it finishes at least its own busy time after a.
    EXPECT_GE(jobs[1]["finish_s"].get<double>(),
              jobs[0]["finish_s"].get<double>() + 0.9 * jobs[1]["busy_s"].get<double>());
    EXPECT_GT(jobs[1]["busy_s"].get<double>(), 0.0);
}

TEST_F(RunCommand, MigPinsEachJobToItsInstanceByUuid) {
    const ProcessResult r = run({"--backend", "mig", "--layout", "1g.18gb+4g.71gb", "--jobs", "a,b",
                                 "--duration", "0.3", "--format", "json"},
                                "h200-mig-existing.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["run"]["jobs"][0]["sms_requested"], 16);
    EXPECT_EQ(doc["run"]["jobs"][1]["sms_requested"], 64);
    const std::string a = read_file(dir_ / "a.stderr");
    const std::string b = read_file(dir_ / "b.stderr");
    EXPECT_NE(a.find("CUDA_VISIBLE_DEVICES=MIG-"), std::string::npos) << a;
    EXPECT_NE(b.find("CUDA_VISIBLE_DEVICES=MIG-"), std::string::npos) << b;
    EXPECT_NE(a, b);
}

TEST_F(RunCommand, JobsQueueOnTheirMigInstance) {
    // a then b on the 4g.71gb instance, c on the 1g.18gb; each process pinned to its instance.
    const ProcessResult r = run({"--backend", "mig", "--layout", "4g.71gb+1g.18gb", "--assign",
                                 "0,0,1", "--jobs", "a,b,c", "--work", "5", "--format", "json"},
                                "h200-mig-existing.json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json jobs = json::parse(r.out)["run"]["jobs"];
    EXPECT_EQ(jobs[1]["partition"], "4g.71gb");
    EXPECT_EQ(jobs[1]["after_job"], 0);
    EXPECT_EQ(jobs[2]["partition"], "1g.18gb");
    EXPECT_GE(jobs[1]["finish_s"].get<double>(),
              jobs[0]["finish_s"].get<double>() + 0.9 * jobs[1]["busy_s"].get<double>());
    const auto device = [&](const char* job) {
        const std::string log = read_file(dir_ / (std::string(job) + ".stderr"));
        const size_t at = log.find("CUDA_VISIBLE_DEVICES=MIG-");
        return at == std::string::npos ? std::string() : log.substr(at, log.find('\n', at) - at);
    };
    EXPECT_FALSE(device("a").empty());
    EXPECT_EQ(device("a"), device("b"));
    EXPECT_NE(device("a"), device("c"));
    EXPECT_NE(r.err.find("job b: starts after a"), std::string::npos) << r.err;
}

TEST_F(RunCommand, AFailedJobMakesExitCodeOneAndIsReported) {
    const ProcessResult r = run(
        {"--backend", "timeslice", "--jobs", "fake,fake-oom", "--duration", "0.3"}, "h200.json");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.out.find("out of memory"), std::string::npos) << r.out;
}

TEST_F(RunCommand, BadInputIsRejectedWithTheFieldNamed) {
    struct Case {
        std::vector<std::string> args;
        std::string config;
        int exit_code;
        std::string says;
    };
    const std::vector<Case> cases = {
        {{"--backend", "magic", "--jobs", "a", "--duration", "1"}, "h200.json", 2, "magic"},
        {{"--jobs", "a", "--duration", "1", "--work", "5"}, "h200.json", 2, "--work"},
        {{"--duration", "1"}, "h200.json", 2, "--jobs"},
        // Errors from checking a run name the request's fields, which specs share with the CLI.
        {{"--backend", "green", "--jobs", "a", "--duration", "1"},
         "h200.json",
         2,
         "needs a layout"},
        {{"--backend", "timeslice", "--layout", "1g", "--jobs", "a", "--duration", "1"},
         "h200.json",
         2,
         "a layout applies to the green, mps and mig backends"},
        {{"--backend", "green", "--layout", "1g+1g", "--jobs", "a", "--duration", "1"},
         "h200.json",
         2,
         "2 partitions for 1 jobs"},
        {{"--backend", "green", "--layout", "4g+4g", "--jobs", "a,b", "--duration", "1"},
         "h200.json",
         2,
         "4g"},
        {{"--jobs", "a:fast", "--duration", "1"}, "h200.json", 2, "fast"},
        {{"--backend", "green", "--layout", "1g", "--jobs", "a", "--duration", "1"},
         "",
         3,
         "needs a GPU"},
        {{"--backend", "green", "--layout", "3g+1g", "--jobs", "a,gpt2-xl", "--duration", "1"},
         "h200.json",
         2,
         "job 'gpt2-xl' needs 41.7 GiB"},
        {{"--backend", "mig", "--layout", "1g", "--jobs", "a", "--duration", "1"},
         "h200.json",
         3,
         "MIG"},
        {{"--backend", "green", "--layout", "1g+1g", "--assign", "0,0", "--jobs", "a,b", "--work",
          "5"},
         "h200.json",
         2,
         "partition 1 (1g.18gb) has no job"},
        {{"--backend", "green", "--layout", "2g", "--assign", "0,0", "--jobs", "a,b", "--duration",
          "1"},
         "h200.json",
         2,
         "needs fixed work"},
        {{"--backend", "mig", "--layout", "2g+1g", "--assign", "0,0", "--jobs", "a,b", "--work",
          "5"},
         "h200-mig-existing.json",
         2,
         "partition 1 (1g.18gb) has no job"},
        {{"--backend", "timeslice", "--assign", "0", "--jobs", "a", "--work", "5"},
         "h200.json",
         2,
         "it needs a layout"},
        // The library's field (`assign[1]: `, `layout: `) shown as the flag that gave it.
        {{"--backend", "green", "--layout", "2g+1g", "--assign", "0,5", "--jobs", "a,b", "--work",
          "5"},
         "h200.json",
         2,
         "--assign[1]: job 1 is on partition 5, but the layout's partitions are 0 to 1"},
        {{"--backend", "green", "--layout", "2g+1g", "--assign", "0,1,1", "--jobs", "a,b", "--work",
          "5"},
         "h200.json",
         2,
         "--assign: 3 entries for 2 jobs"},
        {{"--backend", "green", "--layout", "3g+9g", "--jobs", "a,b", "--duration", "1"},
         "h200.json",
         2,
         "--layout: unknown MIG profile '9g'"},
        // Numbers: "nan" and "inf" parse as numbers and passed range checks; -5 steps once said
        // only "give exactly one of --duration and --work".
        {{"--jobs", "a", "--duration", "1", "--hz", "nan"}, "", 2, "--hz: must be a finite number"},
        {{"--jobs", "a", "--work", "-5"}, "", 2, "--work: must be positive, not -5"},
        {{"--jobs", "a", "--duration", "inf"}, "", 2, "--duration: must be a finite number"},
        {{"--jobs", "a", "--duration", "1", "--steady-cv", "nan"}, "", 2, "--steady-cv"},
    };
    for (const Case& c : cases) {
        const ProcessResult r = run(c.args, c.config);
        EXPECT_EQ(r.exit_code, c.exit_code) << c.args[1] << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    }
}

// A run directory that cannot be made (here: a file is in the way) was an internal error.
// With migscope's own worker the workloads are known: a misspelt one is bad input before any
// worker starts (it once started one, which failed as the job). Another worker may know others.
TEST_F(RunCommand, AnUnknownWorkloadIsBadInputWithTheBuiltInWorker) {
    const ProcessResult r =
        run_process({MIGSCOPE_BINARY, "run", "--run-dir", dir_.string(), "--backend", "cpu",
                     "--jobs", "gpt2-tiny,resnt50", "--duration", "1"},
                    std::map<std::string, std::string>{
                        {"MIGSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"}});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(
        r.err.find("job 'resnt50': unknown workload 'resnt50' (did you mean 'resnet50'?) (known: "),
        std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir_));  // refused before the run directory was made
}

// migscope run ARGS with the file size limit `fsize_bytes` (RLIMIT_FSIZE, SIGXFSZ ignored: a
// write past it fails with EFBIG, as on a full disk) and no GPU; stdout thrown away.
ProcessResult run_with_file_limit(const std::vector<std::string>& args, rlim_t fsize_bytes) {
    int err[2];
    if (pipe(err) != 0)
        return {};
    const pid_t pid = fork();
    if (pid == 0) {
        close(err[0]);
        dup2(err[1], 2);
        const int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        for (const auto& [k, v] : env_for(""))
            setenv(k.c_str(), v.c_str(), 1);
        signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{fsize_bytes, fsize_bytes};
        setrlimit(RLIMIT_FSIZE, &limit);
        std::vector<char*> argv = {const_cast<char*>(MIGSCOPE_BINARY)};
        for (const std::string& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(126);
    }
    close(err[1]);
    ProcessResult r;
    char buffer[4096];
    for (ssize_t n; (n = read(err[0], buffer, sizeof buffer)) > 0;)
        r.err.append(buffer, static_cast<size_t>(n));
    close(err[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// A run directory where no byte can be written (a full disk, here a file size limit of 0): bad
// input before anything is measured, no job started.
TEST_F(RunCommand, ARunDirectoryThatCannotTakeAByteFailsBeforeMeasuring) {
    const ProcessResult r =
        run_with_file_limit({"run", "--run-dir", dir_.string(), "--backend", "cpu", "--jobs",
                             "resnet-tiny", "--duration", "0.3", "--idle-probe", "0"},
                            0);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("run directory " + dir_.string() + " cannot take a file: File too large"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "resnet-tiny.stderr"));  // no job started
    EXPECT_FALSE(fs::exists(dir_ / "result.json"));
}

// The run directory fills while the run is measured (a file size limit below result.json's
// size): exit 1 naming result.json, never exit 0 with a cut or empty file.
TEST_F(RunCommand, ARunDirectoryThatFillsDuringTheRunIsAFailureNamingTheFile) {
    const ProcessResult r =
        run_with_file_limit({"run", "--run-dir", dir_.string(), "--backend", "cpu", "--jobs",
                             "resnet-tiny,gpt2-tiny", "--duration", "0.3", "--idle-probe", "0"},
                            600);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write result.json " + (dir_ / "result.json").string() +
                         ": File too large"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    ASSERT_TRUE(fs::exists(dir_ / "result.json"));
    EXPECT_LE(fs::file_size(dir_ / "result.json"), 600u);
}

// A run directory whose path is not UTF-8 (legal on Linux): the run is measured, stored and
// written; result.json and the store's JSON show the bytes as \xNN (it was "internal error",
// exit 1, nothing stored and a 0-byte result.json).
TEST_F(RunCommand, ARunDirectoryThatIsNotUtf8IsMeasuredStoredAndShown) {
    fs::create_directories(dir_);
    const std::string run_dir = (dir_ / "r\xff\xfe").string();
    const std::string db = (dir_ / "results.db").string();
    ProcessResult r = run_process(
        {MIGSCOPE_BINARY, "run", "--run-dir", run_dir, "--backend", "cpu", "--jobs", "resnet-tiny",
         "--duration", "0.3", "--idle-probe", "0", "--db", db, "--format", "json"},
        env_for(""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(migscope::user_text::is_utf8(r.out));
    const std::string written = read_file(fs::path(run_dir) / "result.json");
    ASSERT_FALSE(written.empty());
    EXPECT_TRUE(migscope::user_text::is_utf8(written));
    EXPECT_EQ(json::parse(written), json::parse(r.out));
    EXPECT_EQ(migscope::store::Store::open(db, migscope::store::OpenMode::kRead).list_runs().size(),
              1u);
    // The current folder not UTF-8 either, with the default run directory under it.
    r = run_process({"/bin/sh", "-c",
                     "cd \"$0\" && exec \"$1\" run --backend cpu --jobs resnet-tiny --duration 0.3 "
                     "--idle-probe 0 --db \"$2\"",
                     run_dir, MIGSCOPE_BINARY, db},
                    env_for(""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(migscope::store::Store::open(db, migscope::store::OpenMode::kRead).list_runs().size(),
              2u);
}

TEST_F(RunCommand, AnUncreatableRunDirectoryIsBadInputNamingIt) {
    std::ofstream(dir_) << "a file";
    const ProcessResult r = run({"--jobs", "fake", "--duration", "1"}, "");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("cannot create run directory " + dir_.string()), std::string::npos)
        << r.err;
    fs::remove(dir_);
}

// A signal to `migscope run` once its stderr shows `after` (then `also`, if given): the run stops
// its jobs, what was measured is stored as interrupted, and the exit code says interrupted.
// Ctrl-C during the sequential baseline once exited 0; SIGHUP (a closed SSH session) once ended
// migscope without storing anything.
TEST_F(RunCommand, SignalsStopTheRunStoreItAsInterruptedAndExitInterrupted) {
    struct Case {
        int signal;
        std::string after;  // in stderr before the signal is sent
        bool in_baseline;
    };
    for (const Case& c : {Case{SIGINT, "baseline:", true}, Case{SIGHUP, "starting", false},
                          Case{SIGTERM, "starting", false}, Case{SIGHUP, "baseline:", true}}) {
        SCOPED_TRACE("signal " + std::to_string(c.signal) + " after '" + c.after + "'");
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        const std::string db = (dir_ / "results.db").string();
        migscope::ChildOptions o;
        // A run of 2 s lets the baseline start soon; either window is long enough to be
        // interrupted well inside it.
        o.argv = {MIGSCOPE_BINARY, "run",
                  "--run-dir",     (dir_ / "run").string(),
                  "--jobs",        "fake",
                  "--duration",    c.in_baseline ? "2" : "60",
                  "--baseline",    "sequential",
                  "--idle-probe",  "0",
                  "--db",          db};
        for (const auto& [key, value] : env_for(""))
            o.env.emplace_back(key, value);
        o.stderr_path = (dir_ / "stderr.txt").string();
        migscope::ChildProcess p = migscope::ChildProcess::start(o);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (;;) {
            const std::string err = read_file(dir_ / "stderr.txt");
            const size_t at = err.find(c.after);
            // The baseline starts its job after the line that announces it.
            if (at != std::string::npos &&
                (!c.in_baseline || err.find("starting", at) != std::string::npos))
                break;
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << err;
            ASSERT_FALSE(p.try_wait()) << err;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the job is stepping
        p.signal_group(c.signal);
        const migscope::ExitStatus status = p.wait();
        EXPECT_EQ(status.code, 130) << status.describe() << read_file(dir_ / "stderr.txt");

        migscope::store::Store store =
            migscope::store::Store::open(db, migscope::store::OpenMode::kRead);
        const std::vector<migscope::store::RunRecord> runs = store.list_runs();
        ASSERT_EQ(runs.size(), c.in_baseline ? 2u : 1u) << read_file(dir_ / "stderr.txt");
        EXPECT_EQ(runs.back().interrupted, true);
        EXPECT_EQ(runs.back().role, c.in_baseline ? migscope::store::RunRole::kBaseline
                                                  : migscope::store::RunRole::kRun);
    }
}

}  // namespace

namespace {

ProcessResult train(std::vector<std::string> args, const std::string& config = "") {
    args.insert(args.begin(), {MIGSCOPE_BINARY, "train"});
    return run_process(args, env_for(config));
}

TEST(TrainCommand, PrintsSettingsEveryStepAndASummary) {
    const ProcessResult r = train({"--model", "fake", "--steps", "4", "--warmup-steps", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("items_per_step"), std::string::npos) << r.out;
    size_t steps = 0;
    for (size_t at = r.out.find("\nstep "); at != std::string::npos;
         at = r.out.find("\nstep ", at + 1))
        ++steps;
    EXPECT_EQ(steps, 6u);  // two warm-up steps and four measured ones
    EXPECT_NE(r.out.find("(warm-up)"), std::string::npos);
    // 1e12 FLOP per 100-image step against a 1e14 FLOP/s peak: MFU printed per step.
    EXPECT_NE(r.out.find("MFU"), std::string::npos);
    EXPECT_NE(r.out.find("4 measured steps"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1.00 GiB"), std::string::npos);  // the peak memory it reported
    EXPECT_NE(r.err.find("training on the CPU"), std::string::npos) << r.err;  // no GPU here
}

TEST(TrainCommand, JsonlPrintsTheWorkersEventsOneObjectPerLine) {
    const ProcessResult r =
        train({"--model", "fake", "--steps", "4", "--warmup-steps", "2", "--format", "jsonl"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    std::vector<std::string> events;
    size_t measured_steps = 0;
    for (std::string line; std::getline(lines, line);) {
        const json e = json::parse(line);  // every line is one JSON object
        events.push_back(e.at("event").get<std::string>());
        if (events.back() == "step" && !e.value("warmup", false))
            ++measured_steps;
    }
    ASSERT_GE(events.size(), 3u) << r.out;
    EXPECT_EQ(events.front(), "ready");
    EXPECT_EQ(events.back(), "result");
    EXPECT_EQ(measured_steps, 4u) << r.out;
    EXPECT_EQ(std::count(events.begin(), events.end(), "step"), 6);
}

TEST(TrainCommand, JsonlWithAFailingJobExitsOneAndSaysWhy) {
    const ProcessResult r =
        train({"--model", "fake-oom", "--steps", "20", "--device", "cpu", "--format", "jsonl"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("\"event\":\"error\""), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("out of memory"), std::string::npos) << r.err;
}

TEST(TrainCommand, AFailingJobExitsWithTheWorkersCodeAndItsMessage) {
    const ProcessResult r = train({"--model", "fake-oom", "--steps", "20", "--device", "cpu"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("out of memory"), std::string::npos) << r.err;
}

TEST(TrainCommand, CudaWithoutAGpuIsUnavailable) {
    const ProcessResult r = train({"--model", "fake", "--device", "cuda"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
}

}  // namespace
