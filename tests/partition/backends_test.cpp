// Backends: partitions from layouts, the processes each backend starts, the MPS daemon's life.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "mig/catalog.h"
#include "partition/backend.h"
#include "partition/mps_daemon.h"
#include "partition/partitions.h"

namespace migscope::partition {
namespace {

namespace fs = std::filesystem;

const mig::GpuModel& h200() {
    return mig::builtin_model("h200");
}

std::string env_of(const ChildOptions& c, const std::string& key) {
    for (const auto& [k, v] : c.env) {
        if (k == key)
            return v;
    }
    return "<unset>";
}

class BackendTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("migscope-backend-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
        // A stand-in for nvidia-cuda-mps-control: -d "starts" (a marker file, a line in
        // control.log), "quit" on stdin stops, "get_server_list" succeeds only while running.
        // Like the real one it fails, naming nothing but its socket, when the socket's path
        // ($CUDA_MPS_PIPE_DIRECTORY/control) is over the 107 bytes of a UNIX socket path.
        control_ = (dir_ / "fake-mps-control").string();
        std::ofstream(control_) << "#!/bin/sh\n"
                                   "pipe=\"$CUDA_MPS_PIPE_DIRECTORY\"\n"
                                   "if [ ${#pipe} -gt 99 ]; then echo \"$pipe/control\" >&2; "
                                   "exit 1; fi\n"
                                   "marker=\"$pipe/running\"\n"
                                   "if [ \"$1\" = -d ]; then echo \"$CUDA_VISIBLE_DEVICES\" > "
                                   "\"$marker\"; echo started > "
                                   "\"$CUDA_MPS_LOG_DIRECTORY/control.log\"; exit 0; fi\n"
                                   "read cmd\n"
                                   "case \"$cmd\" in quit) rm -f \"$marker\";;\n"
                                   "get_server_list) [ -f \"$marker\" ] || exit 1;; esac\n";
        fs::permissions(control_, fs::perms::owner_all);
    }
    void TearDown() override { fs::remove_all(dir_); }
    BackendOptions options() const {
        BackendOptions o;
        o.worker_path = "/opt/migscope-worker";
        o.run_dir = dir_.string();
        o.device_sms = 132;
        return o;
    }
    fs::path dir_;
    std::string control_;
};

// XDG_RUNTIME_DIR set to a short new directory for the test's life, then restored.
struct ScopedRuntimeDir {
    fs::path path;
    std::string saved;
    bool was_set;
    explicit ScopedRuntimeDir(const std::string& name)
        : path("/tmp/migscope-" + name + "-" + std::to_string(::getpid())) {
        const char* before = std::getenv("XDG_RUNTIME_DIR");
        was_set = before != nullptr;
        saved = before ? before : "";
        fs::create_directories(path);
        setenv("XDG_RUNTIME_DIR", path.c_str(), 1);
    }
    ~ScopedRuntimeDir() {
        if (was_set)
            setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
        else
            unsetenv("XDG_RUNTIME_DIR");
        fs::remove_all(path);
    }
};

std::vector<JobSpec> two_jobs() {
    return parse_job_list("resnet50,gpt2-medium:finetune:4");
}

TEST(Partitions, LayoutTermsBecomeSmPartitionsInJobOrder) {
    const auto parts =
        layout_partitions(Layout::parse("1g.18gb+3g.71gb", h200()), h200(), 2, "GPU-x");
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].label, "1g.18gb");
    EXPECT_EQ(parts[0].sms, 16u);
    EXPECT_EQ(parts[1].sms, 60u);
    EXPECT_NEAR(*parts[1].memory_gib, 69.75, 1e-9);
    EXPECT_EQ(parts[1].device, "GPU-x");
}

TEST(Partitions, LayoutMustFitAndMatchTheJobCount) {
    EXPECT_THROW(layout_partitions(Layout::parse("1g.18gb", h200()), h200(), 2, ""), Error);
    try {
        layout_partitions(Layout::parse("4g.71gb+4g.71gb", h200()), h200(), 2, "");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
    }
}

TEST(Partitions, AssignedJobsQueueOnTheirPartitionInJobOrder) {
    // Jobs 0, 2, 3 on the 2g; job 1 on the 1g.
    const auto parts = layout_partitions(Layout::parse("2g.35gb+1g.18gb", h200()), h200(), 4,
                                         "GPU-x", {0, 1, 0, 0});
    ASSERT_EQ(parts.size(), 4u);
    EXPECT_EQ(parts[0].label, "2g.35gb");
    EXPECT_FALSE(parts[0].after_job);
    EXPECT_EQ(parts[1].label, "1g.18gb");
    EXPECT_FALSE(parts[1].after_job);
    EXPECT_EQ(parts[2].after_job, 0u);
    EXPECT_EQ(parts[3].after_job, 2u);
    EXPECT_EQ(parts[3].sms, 32u);

    const auto error_of = [](const std::vector<size_t>& assign) {
        try {
            layout_partitions(Layout::parse("2g.35gb+1g.18gb", h200()), h200(), 3, "", assign);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error_of({0, 1}).find("assign: 2 entries for 3 jobs"), std::string::npos);
    EXPECT_NE(error_of({0, 2, 1}).find("job 1 is on partition 2, but the layout's partitions are "
                                       "0 to 1"),
              std::string::npos);
    EXPECT_NE(error_of({0, 0, 0}).find("partition 1 (1g.18gb) has no job"), std::string::npos);
}

TEST(Partitions, CpuCoresAreSplitIntoDisjointShares) {
    const auto parts = cpu_partitions({0, 1, 2, 3, 4}, 2);
    EXPECT_EQ(parts[0].cpu_cores, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(parts[1].cpu_cores, (std::vector<unsigned>{2, 3}));
    EXPECT_EQ(parts[1].label, "cores 2-3");
    EXPECT_THROW(cpu_partitions({0, 1}, 3), Error);
    EXPECT_EQ(whole_gpu_partitions(h200(), 3, "GPU-x")[2].sms, 132u);
}

TEST(Backends, NamesRoundTripAndUnknownNamesListTheKnown) {
    for (const char* n : {"green", "mps", "mig", "timeslice", "sequential", "cpu"})
        EXPECT_EQ(to_string(parse_backend(n)), n);
    try {
        parse_backend("magic");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("timeslice"), std::string::npos);
    }
}

TEST(Backends, WorkerArgumentsFollowTheJobAndTheControl) {
    JobSpec j = two_jobs()[1];
    JobControl c;
    c.steps = 50;
    c.hold_after_warmup = true;
    const auto argv = worker_train_argv("w", j, "cuda:0", c);
    const std::vector<std::string> expected = {"w",           "train",   "--model",
                                               "gpt2-medium", "--mode",  "finetune",
                                               "--device",    "cuda:0",  "--warmup-steps",
                                               "3",           "--batch", "4",
                                               "--steps",     "50",      "--hold-after-warmup"};
    EXPECT_EQ(argv, expected);
    EXPECT_EQ(worker_train_argv("w", j, "cpu", {}).back(), "--until-stopped");
    JobControl eager;  // the worker's default is a CUDA graph: only eager is said
    eager.cuda_graph = false;
    EXPECT_EQ(worker_train_argv("w", j, "cuda:0", eager).back(), "--no-cuda-graph");
    // A job's own fixed work replaces the run's; it means nothing in a run until stopped.
    j.steps = 7;
    const auto own = worker_train_argv("w", j, "cuda:0", c);
    EXPECT_EQ(own[own.size() - 2], "7");
    EXPECT_EQ(worker_train_argv("w", j, "cpu", {}).back(), "--until-stopped");
    j.checkpoint = "base.safetensors";
    const auto with_checkpoint = worker_train_argv("w", j, "cpu", {});
    const auto it = std::find(with_checkpoint.begin(), with_checkpoint.end(), "--checkpoint");
    ASSERT_NE(it, with_checkpoint.end());
    EXPECT_EQ(*(it + 1), "base.safetensors");
}

TEST_F(BackendTest, TimesliceStartsOneWorkerPerJobOnTheWholeGpu) {
    auto b = make_backend(BackendKind::kTimeslice, options(), "GPU-1");
    const auto jobs = two_jobs();
    const auto launches = b->launches(jobs, whole_gpu_partitions(h200(), 2, "GPU-1"), {});
    ASSERT_EQ(launches.size(), 2u);
    EXPECT_EQ(launches[1].jobs, std::vector<size_t>{1});
    EXPECT_EQ(env_of(launches[1].child, "CUDA_VISIBLE_DEVICES"), "GPU-1");
    EXPECT_NE(launches[1].child.stderr_path.find("gpt2-medium"), std::string::npos);
    // Each worker names its job to its activity probe as profiles name it (the exporter finds
    // its power alone by it): without a batch, workload and mode.
    EXPECT_EQ(env_of(launches[0].child, "MIGSCOPE_JOB"), "resnet50:train");
    EXPECT_EQ(env_of(launches[1].child, "MIGSCOPE_JOB"), "gpt2-medium:finetune:4");
}

// A command's job name is its probe's job when it is a valid one; otherwise none is set.
TEST_F(BackendTest, ACommandsJobNameIsItsProbesJobWhenValid) {
    auto b = make_backend(BackendKind::kTimeslice, options(), "GPU-1");
    std::vector<JobSpec> jobs(2);
    jobs[0].name = "my-trainer_2";
    jobs[0].command = {"/bin/true"};
    jobs[1].name = "../evil name";
    jobs[1].command = {"/bin/true"};
    const auto launches = b->launches(jobs, whole_gpu_partitions(h200(), 2, "GPU-1"), {});
    ASSERT_EQ(launches.size(), 2u);
    EXPECT_EQ(env_of(launches[0].child, "MIGSCOPE_JOB"), "my-trainer_2");
    EXPECT_EQ(env_of(launches[1].child, "MIGSCOPE_JOB"), "<unset>");
}

// A job's name is data, not a path: its log stays in the run directory under a safe name.
TEST_F(BackendTest, JobLogsStayInTheRunDirectoryWhateverTheJobIsCalled) {
    auto b = make_backend(BackendKind::kSequential, options(), "GPU-1");
    std::vector<JobSpec> jobs(5);
    jobs[0].name = "../../x";
    jobs[0].command = {"/bin/true"};
    jobs[1].name = "/bin/true";
    jobs[1].command = {"/bin/true"};
    jobs[2].name = "resnet18#2";
    jobs[2].workload = "resnet18";
    jobs[3].name = "evil\nname";
    jobs[3].command = {"/bin/true"};
    // The longest name a job may have (kMaxJobNameBytes), which slugs to as many characters:
    // its log's file name once exceeded the 255 bytes a file name may have.
    for (size_t i = 0; jobs[4].name.size() < kMaxJobNameBytes; ++i)
        jobs[4].name += i % 2 ? ' ' : 'a';
    jobs[4].command = {"/bin/true"};
    const auto launches = b->launches(jobs, whole_gpu_partitions(h200(), 5, "GPU-1"), {});
    ASSERT_EQ(launches.size(), 5u);
    std::string long_slug;
    while (long_slug.size() < 100)
        long_slug += long_slug.size() % 2 ? '-' : 'a';
    const std::vector<std::string> expected = {"job-0-x.stderr", "job-1-bin-true.stderr",
                                               "resnet18#2.stderr", "job-3-evil-name.stderr",
                                               "job-4-" + long_slug + ".stderr"};
    for (size_t i = 0; i < 5; ++i) {
        const fs::path log = launches[i].child.stderr_path;
        EXPECT_EQ(log.parent_path(), dir_) << log;
        EXPECT_EQ(log.filename(), expected[i]) << log;
    }
}

TEST_F(BackendTest, GreenRunsAllJobsInOneWorkerFromASpecFile) {
    auto b = make_backend(BackendKind::kGreen, options(), "GPU-1");
    const auto parts =
        layout_partitions(Layout::parse("3g.71gb+1g.18gb", h200()), h200(), 2, "GPU-1");
    const auto launches = b->launches(two_jobs(), parts, {});
    ASSERT_EQ(launches.size(), 1u);
    EXPECT_EQ(launches[0].jobs, (std::vector<size_t>{0, 1}));
    ASSERT_EQ(launches[0].child.argv.size(), 4u);
    EXPECT_EQ(launches[0].child.argv[1], "group");
    std::ifstream in(launches[0].child.argv[3]);
    const auto spec = nlohmann::json::parse(in);
    EXPECT_EQ(spec["jobs"][0]["sms"], 60);
    EXPECT_EQ(spec["jobs"][1]["sms"], 16);
    EXPECT_EQ(spec["jobs"][1]["memory_limit_gib"], 16.0);
    EXPECT_EQ(spec["jobs"][1]["batch"], 4);
    EXPECT_EQ(spec["jobs"][1]["until_stopped"], true);
}

TEST_F(BackendTest, GreenQueuesAJobOnTheSmsOfTheJobItFollows) {
    auto b = make_backend(BackendKind::kGreen, options(), "GPU-1");
    const auto parts =
        layout_partitions(Layout::parse("3g.71gb", h200()), h200(), 2, "GPU-1", {0, 0});
    partition::JobControl control;
    control.steps = 50;
    control.hold_after_warmup = true;
    const auto launches = b->launches(two_jobs(), parts, control);
    std::ifstream in(launches.at(0).child.argv.at(3));
    const auto spec = nlohmann::json::parse(in);
    EXPECT_EQ(spec["jobs"][0]["sms"], 60);
    EXPECT_FALSE(spec["jobs"][0].contains("after"));
    EXPECT_EQ(spec["jobs"][1]["after"], 0);
    EXPECT_FALSE(spec["jobs"][1].contains("sms"));
    EXPECT_EQ(spec["jobs"][1]["steps"], 50);
    EXPECT_FALSE(spec["jobs"][0].contains("cuda_graph"));  // the worker's default
    control.cuda_graph = false;
    std::ifstream eager_in(b->launches(two_jobs(), parts, control).at(0).child.argv.at(3));
    EXPECT_EQ(nlohmann::json::parse(eager_in)["jobs"][1]["cuda_graph"], false);
}

TEST_F(BackendTest, GreenRefusesExternalCommands) {
    auto b = make_backend(BackendKind::kGreen, options(), "GPU-1");
    JobSpec ext;
    ext.name = "mine";
    ext.command = {"python3"};
    const auto parts = layout_partitions(Layout::parse("1g.18gb", h200()), h200(), 1, "");
    EXPECT_THROW(b->launches({ext}, parts, {}), Error);
}

TEST_F(BackendTest, CpuPinsCoresAndSetsThreads) {
    auto b = make_backend(BackendKind::kCpu, options(), "");
    const auto launches = b->launches(two_jobs(), cpu_partitions({0, 1, 2, 3}, 2), {});
    EXPECT_EQ(launches[1].child.cpu_cores, (std::vector<unsigned>{2, 3}));
    EXPECT_EQ(env_of(launches[1].child, "OMP_NUM_THREADS"), "2");
    EXPECT_EQ(launches[1].child.argv[7], "cpu");  // --device cpu
}

TEST_F(BackendTest, MpsDaemonIsPrivateAndAlwaysStopped) {
    const std::string mps_dir = (dir_ / "mps").string();
    std::string pipe_dir;
    {
        MpsDaemon daemon(mps_dir, "GPU-1", control_);
        const auto env = daemon.client_env();
        ASSERT_EQ(env[0].first, "CUDA_MPS_PIPE_DIRECTORY");
        pipe_dir = env[0].second;
        EXPECT_TRUE(fs::exists(pipe_dir + "/running"));
        EXPECT_EQ(env[1].second, fs::path(pipe_dir).parent_path().string() + "/log");
        // Private: its own directory, mode 0700; its path kept in the run for a kill -9.
        EXPECT_EQ(fs::status(fs::path(pipe_dir).parent_path()).permissions() & fs::perms::all,
                  fs::perms::owner_all);
        std::ifstream recorded(mps_dir + "/pipe-directory");
        std::string line;
        std::getline(recorded, line);
        EXPECT_EQ(line, pipe_dir);
    }                                                            // destructor: quit
    EXPECT_FALSE(fs::exists(fs::path(pipe_dir).parent_path()));  // removed
    EXPECT_TRUE(fs::exists(mps_dir + "/control.log"));           // the daemon's log kept
    EXPECT_FALSE(fs::exists(mps_dir + "/pipe-directory"));
    EXPECT_THROW(MpsDaemon(mps_dir, "GPU-1", (dir_ / "no-such-control").string()), Error);
}

// FACTS.md: the real daemon failed from a run directory of 90 characters. Its pipes now live in a
// short private directory whatever the run directory's length.
TEST_F(BackendTest, MpsStartsFromARunDirectoryOf200Characters) {
    fs::path run = dir_;
    while (run.string().size() < 200)
        run /= "a-long-run-directory-name";
    run = run.string().substr(0, 200);
    ASSERT_EQ(run.string().size(), 200u);
    BackendOptions o = options();
    o.run_dir = run.string();
    o.mps_control = control_;
    auto b = make_backend(BackendKind::kMps, o, "GPU-1");
    const auto parts =
        layout_partitions(Layout::parse("1g.18gb+4g.71gb", h200()), h200(), 2, "GPU-1");
    const std::string pipe_dir =
        env_of(b->launches(two_jobs(), parts, {})[0].child, "CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_LE(pipe_dir.size(), kMpsPipeDirMaxBytes) << pipe_dir;
    EXPECT_EQ(pipe_dir.rfind("/tmp/migscope-mps-", 0), 0u) << pipe_dir;  // no XDG_RUNTIME_DIR here
    EXPECT_TRUE(fs::exists(pipe_dir + "/running"));
    EXPECT_TRUE(b->release().empty());
    EXPECT_FALSE(fs::exists(fs::path(pipe_dir).parent_path()));
    EXPECT_TRUE(fs::exists(run / "mps" / "control.log"));
}

TEST_F(BackendTest, MpsPipesGoUnderXdgRuntimeDirWhenItIsShort) {
    ScopedRuntimeDir runtime("xdg");
    std::string short_pipe;
    {
        MpsDaemon daemon((dir_ / "mps").string(), "", control_);
        short_pipe = daemon.client_env()[0].second;
    }
    EXPECT_EQ(short_pipe.rfind(runtime.path.string() + "/migscope-mps-", 0), 0u) << short_pipe;
    EXPECT_TRUE(fs::is_empty(runtime.path));  // removed after
    // One too long for the daemon's sockets is passed over for /tmp.
    const fs::path long_runtime = dir_ / std::string(80, 'x');
    fs::create_directories(long_runtime);
    setenv("XDG_RUNTIME_DIR", long_runtime.c_str(), 1);
    MpsDaemon daemon((dir_ / "mps").string(), "", control_);
    EXPECT_EQ(daemon.client_env()[0].second.rfind("/tmp/migscope-mps-", 0), 0u);
}

TEST_F(BackendTest, TwoMpsDaemonsGetTheirOwnPipes) {
    MpsDaemon first((dir_ / "a").string(), "GPU-1", control_);
    MpsDaemon second((dir_ / "b").string(), "GPU-2", control_);
    EXPECT_NE(first.client_env()[0].second, second.client_env()[0].second);
}

// A daemon that does not come up: its output and log in the error, the private directory gone.
TEST_F(BackendTest, AFailedMpsStartQuotesTheDaemonsLogAndRemovesItsPipes) {
    const std::string failing = (dir_ / "failing-mps-control").string();
    std::ofstream(failing) << "#!/bin/sh\n"
                              "echo \"$CUDA_MPS_PIPE_DIRECTORY\" > "
                           << (dir_ / "seen").string()
                           << "\n"
                              "echo 'cannot bind the control socket' > "
                              "\"$CUDA_MPS_LOG_DIRECTORY/control.log\"\n"
                              "echo 'mps: failed' >&2; exit 1\n";
    fs::permissions(failing, fs::perms::owner_all);
    try {
        MpsDaemon daemon((dir_ / "mps").string(), "GPU-1", failing);
        FAIL() << "a daemon that exits 1 was taken as started";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
        const std::string what = e.what();
        EXPECT_NE(what.find("-d failed (exit 1)"), std::string::npos) << what;
        EXPECT_NE(what.find("start.stderr: 'mps: failed'"), std::string::npos) << what;
        EXPECT_NE(what.find("control.log: 'cannot bind the control socket'"), std::string::npos)
            << what;
    }
    std::ifstream seen(dir_ / "seen");
    std::string pipe_dir;
    std::getline(seen, pipe_dir);
    ASSERT_FALSE(pipe_dir.empty());
    EXPECT_FALSE(fs::exists(fs::path(pipe_dir).parent_path()));
    EXPECT_TRUE(fs::exists(dir_ / "mps" / "control.log"));  // kept for the user
    // A binary that is not there: unavailable, and nothing left behind either.
    ScopedRuntimeDir runtime("xdg-missing");
    try {
        MpsDaemon daemon((dir_ / "mps").string(), "GPU-1", (dir_ / "missing").string());
        FAIL() << "a missing control binary was taken as started";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable) << e.what();
    }
    EXPECT_TRUE(fs::is_empty(runtime.path));
}

TEST_F(BackendTest, MpsClientsGetTheirSmShareAndMemoryLimit) {
    BackendOptions o = options();
    o.mps_control = control_;
    auto b = make_backend(BackendKind::kMps, o, "GPU-1");
    const auto parts =
        layout_partitions(Layout::parse("1g.18gb+4g.71gb", h200()), h200(), 2, "GPU-1");
    const auto launches = b->launches(two_jobs(), parts, {});
    ASSERT_EQ(launches.size(), 2u);
    EXPECT_EQ(env_of(launches[0].child, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "12");  // 16/132
    EXPECT_EQ(env_of(launches[1].child, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "48");  // 64/132
    EXPECT_EQ(env_of(launches[0].child, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=16384M");
    const std::string pipe_dir = env_of(launches[0].child, "CUDA_MPS_PIPE_DIRECTORY");
    EXPECT_EQ(env_of(launches[1].child, "CUDA_MPS_PIPE_DIRECTORY"), pipe_dir);
    EXPECT_TRUE(fs::exists(pipe_dir + "/running"));
    EXPECT_TRUE(b->release().empty());
    EXPECT_FALSE(fs::exists(pipe_dir));
}

TEST_F(BackendTest, MpsStopReturnsNoProblemsWhenTheDaemonQuits) {
    MpsDaemon daemon((dir_ / "mps").string(), "GPU-1", control_);
    EXPECT_TRUE(daemon.stop().empty());
    EXPECT_FALSE(daemon.running());
    EXPECT_TRUE(daemon.stop().empty());  // idempotent
}

}  // namespace
}  // namespace migscope::partition
