// The run loop with fake workers and a synthetic power source: windows, results, failures,
// attribution, fixed work, sequential runs, external commands, interruption.
#include "runner/run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "runner/comparison.h"
#include "runner/run_output.h"

#include "partition/partitions.h"

namespace migscope::runner {
namespace {

// Board power that follows what the run says it is doing (its progress lines): 100 W idle,
// 100 W plus each running job's dynamic power while jobs run (kDynamicW by job name, 100 W for
// others; side by side the jobs' powers add up). The counter is the exact integral.
class LevelPower : public telemetry::PowerSource {
  public:
    static constexpr double kIdleW = 100;
    static inline const std::map<std::string, double> kDynamicW = {{"fake#0", 150},
                                                                    {"fake#1", 50}};

    LevelPower() : last_(SteadyClock::now()) {}
    telemetry::Sample read(telemetry::SampleScope) override {
        std::lock_guard<std::mutex> lock(mutex_);
        telemetry::Sample s;
        s.time = advance();
        s.power_instant_w = level_w_;
        s.energy_j = energy_j_;
        return s;
    }
    // The run's progress hook: "marginal probe: the mix without NAME for ...", "starting A, B
    // (...)", "measuring idle power ...".
    void on_progress(const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex_);
        advance();
        if (line.rfind("measuring idle power", 0) == 0) {
            level_w_ = kIdleW;
        } else if (line.rfind("marginal probe: the mix without ", 0) == 0) {
            const std::string without = line.substr(32, line.rfind(" for ") - 32);
            level_w_ = kIdleW;
            for (const auto& [name, watts] : kDynamicW)
                level_w_ += name == without ? 0.0 : watts;
        } else if (line.rfind("starting ", 0) == 0) {
            const std::string names = line.substr(9, line.rfind(" (") - 9);
            level_w_ = kIdleW;
            for (size_t from = 0; from <= names.size();) {
                const size_t comma = std::min(names.find(", ", from), names.size());
                level_w_ += dynamic_w(names.substr(from, comma - from));
                from = comma + 2;
            }
        }
    }

  private:
    static double dynamic_w(const std::string& name) {
        const auto it = kDynamicW.find(name);
        return it == kDynamicW.end() ? 100.0 : it->second;
    }
    SteadyTime advance() {
        const SteadyTime now = SteadyClock::now();
        energy_j_ += level_w_ * seconds_between(last_, now);
        last_ = now;
        return now;
    }
    std::mutex mutex_;
    SteadyTime last_;
    double level_w_ = kIdleW;
    double energy_j_ = 0;
};

class RunTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("migscope-run-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
        setenv("FAKE_STEP_S", "0.01", 1);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    RunSpec spec_for(const std::vector<std::string>& models) {
        RunSpec s;
        for (const std::string& m : models) {
            partition::JobSpec j;
            j.workload = m;
            j.name = m + "#" + std::to_string(s.jobs.size());
            s.jobs.push_back(j);
        }
        partition::Partition p;
        p.label = "16 SMs";
        p.sms = 16;
        s.partitions.assign(s.jobs.size(), p);
        s.partitions.back().sms = 48;  // unequal sizes, for attribution
        s.duration_s = 1.0;
        s.idle_probe_s = 0.15;
        s.idle_settle_s = 0;
        s.warmup_timeout_s = 10;
        s.sample_hz = 50;
        s.device_sms = 132;
        s.run_dir = dir_.string();
        return s;
    }

    RunResult run(const RunSpec& s,
                  partition::BackendKind kind = partition::BackendKind::kTimeslice,
                  const RunHooks& hooks = {}) {
        partition::BackendOptions o;
        o.worker_path = FAKE_WORKER;
        o.run_dir = dir_.string();
        auto backend = partition::make_backend(kind, o, "GPU-fake");
        RunHooks with_power = hooks;
        with_power.progress = [&](const std::string& line) {
            power_.on_progress(line);
            if (hooks.progress)
                hooks.progress(line);
        };
        return execute_run(s, *backend, &power_, with_power);
    }

    std::filesystem::path dir_;
    LevelPower power_;
};

double sum_energy(const RunResult& r) {
    double sum = 0;
    for (const JobResult& j : r.jobs)
        sum += j.energy_j.value_or(0);
    return sum;
}

TEST_F(RunTest, DurationWindowMeasuresEveryJobAndSplitsAllTheEnergy) {
    const RunResult r = run(spec_for({"fake", "fake"}));
    ASSERT_EQ(r.jobs.size(), 2u);
    EXPECT_GE(r.window_s, 1.0);
    EXPECT_LT(r.window_s, 1.5);
    for (const JobResult& j : r.jobs) {
        EXPECT_EQ(j.status, JobStatus::kOk) << j.message;
        EXPECT_GT(j.steps, 20u);
        ASSERT_TRUE(j.items_per_s);
        // 100 items per ~10 ms step (sleep overshoot makes it slower, never faster).
        EXPECT_LE(*j.items_per_s, 100 / 0.01 * 1.01);
        EXPECT_GT(*j.items_per_s, 100 / 0.01 * 0.5);
        // 1e12 FLOP per 100 items; the worker's 1e14 FLOP/s is for its 16 SMs of a 132-SM device
        // (device_sms 132), so the partition's peak is 1e14 again.
        ASSERT_TRUE(j.mfu);
        EXPECT_NEAR(*j.mfu, *j.items_per_s * 1e10 / 1e14, 1e-9);
        EXPECT_EQ(j.peak_memory_bytes, 1073741824);
        EXPECT_EQ(j.step_mode, "cuda-graph");  // as the worker reported
        EXPECT_TRUE(j.step_time_p50_s && j.step_time_p95_s);
        EXPECT_LE(*j.step_time_p50_s, *j.step_time_p95_s);
        EXPECT_EQ(j.sms, 16u);
    }
    ASSERT_TRUE(r.energy.counter_energy_j);
    // Both jobs run through the window: 100 W idle + 150 W + 50 W.
    EXPECT_NEAR(*r.energy.counter_energy_j, 300.0 * r.window_s, 0.5);
    ASSERT_TRUE(r.energy.disagreement_pct);
    EXPECT_LT(std::abs(*r.energy.disagreement_pct), 1.0);
    ASSERT_TRUE(r.idle_power_w);
    EXPECT_NEAR(*r.idle_power_w, 100.0, 1e-9);
    EXPECT_NEAR(sum_energy(r), *r.energy.counter_energy_j, 1e-6);
    // Idle energy by size (16 vs 48 SMs), dynamic by size × busy time: the bigger gets more.
    EXPECT_GT(*r.jobs[1].energy_j, 2.5 * *r.jobs[0].energy_j);
    EXPECT_NE(r.attribution_method.find("idle power"), std::string::npos);
    EXPECT_NE(r.attribution_method.find("partition size × busy seconds"), std::string::npos);
    ASSERT_TRUE(r.jobs[0].energy_per_item_j);
    EXPECT_GT(r.trace.size(), 20u);
    EXPECT_EQ(r.torch_version, "0.0-fake");  // from the workers' ready events
}

TEST_F(RunTest, MarginalProbesAttributeWhatEachJobAdds) {
    // fake#0 on 16 SMs adds 150 W above idle, fake#1 on 48 SMs 50 W: by partition size × busy
    // seconds fake#1 would get three times the dynamic energy; by what they add, a third of it.
    RunSpec s = spec_for({"fake", "fake"});
    s.marginal_probe_s = 0.3;
    const RunResult r = run(s);
    ASSERT_EQ(r.jobs.size(), 2u);
    ASSERT_TRUE(r.jobs[0].without_power_w && r.jobs[1].without_power_w);
    EXPECT_NEAR(*r.jobs[0].without_power_w, 150.0, 1.0);  // fake#1 alone
    EXPECT_NEAR(*r.jobs[1].without_power_w, 250.0, 1.0);  // fake#0 alone
    // Each probe names the speed of the job that ran in it, not of the one it left out; the fake
    // power source has no clock.
    ASSERT_EQ(r.jobs[0].without_items_per_s.size(), 2u);
    EXPECT_FALSE(r.jobs[0].without_items_per_s[0]);
    ASSERT_TRUE(r.jobs[0].without_items_per_s[1]);
    EXPECT_GT(*r.jobs[0].without_items_per_s[1], 0.0);
    ASSERT_TRUE(r.jobs[1].without_items_per_s[0]);
    EXPECT_FALSE(r.jobs[1].without_items_per_s[1]);
    EXPECT_FALSE(r.jobs[0].without_sm_clock_mhz);
    ASSERT_TRUE(r.idle_power_w);
    EXPECT_NEAR(*r.idle_power_w, 100.0, 1e-9);
    // The idle baseline has probes before and after the jobs; samples without a clock.
    ASSERT_TRUE(r.idle.no_clock);
    EXPECT_GT(r.idle.no_clock->samples, 8u);
    ASSERT_TRUE(r.energy.counter_energy_j);
    // Static 100 W by size (25 / 75 W); margins of 150 and 50 W while each is busy, and what is
    // left (nothing when both stepped all the window) by busy seconds.
    const double window_s = r.window_s, busy0 = r.jobs[0].busy_s, busy1 = r.jobs[1].busy_s;
    const double rest_j = 200.0 * window_s - 150.0 * busy0 - 50.0 * busy1;
    EXPECT_NEAR(*r.jobs[0].energy_j,
                25.0 * window_s + 150.0 * busy0 + rest_j * busy0 / (busy0 + busy1), 1.0);
    EXPECT_GT(*r.jobs[0].energy_j, 1.2 * *r.jobs[1].energy_j);
    EXPECT_NEAR(*r.jobs[0].energy_j + *r.jobs[1].energy_j, *r.energy.counter_energy_j, 1e-6);
    EXPECT_NE(r.attribution_method.find("marginal power"), std::string::npos);
}

TEST_F(RunTest, MfuIsAgainstTheWholeGpusPeakScaledToTheJobsSmsEvenUnderMps) {
    // Under MPS the worker sees a 16-SM device and scales nothing: its 1e14 FLOP/s is then the
    // whole device's peak by its own account; against 132 SMs the partition's peak is 16/132 of it.
    setenv("FAKE_MPS", "1", 1);
    RunSpec s = spec_for({"fake"});
    s.duration_s = 0.3;
    const RunResult r = run(s);
    unsetenv("FAKE_MPS");
    ASSERT_TRUE(r.jobs[0].mfu && r.jobs[0].items_per_s);
    EXPECT_NEAR(*r.jobs[0].mfu, *r.jobs[0].items_per_s * 1e10 / (1e14 * 16 / 132), 1e-9);
}

TEST_F(RunTest, ACrashedJobIsReportedAndTheOthersAreKept) {
    const RunResult r = run(spec_for({"fake", "fake-crash"}));
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOk);
    EXPECT_GT(r.jobs[0].steps, 0u);
    EXPECT_EQ(r.jobs[1].status, JobStatus::kCrashed);
    EXPECT_NE(r.jobs[1].message.find("signal 6"), std::string::npos) << r.jobs[1].message;
    EXPECT_TRUE(r.energy.counter_energy_j);
}

TEST_F(RunTest, OutOfMemoryIsItsOwnStatus) {
    const RunResult r = run(spec_for({"fake-oom", "fake"}));
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOutOfMemory);
    EXPECT_NE(r.jobs[0].message.find("out of memory"), std::string::npos);
    EXPECT_EQ(r.jobs[1].status, JobStatus::kOk);
    // A CPU job whose allocation fails is out of memory too, not just failed.
    EXPECT_EQ(run(spec_for({"fake-cpu-oom"})).jobs[0].status, JobStatus::kOutOfMemory);
}

TEST_F(RunTest, AJobThatNeverSettlesOpensTheWindowAtTheTimeoutWithAWarning) {
    RunSpec s = spec_for({"fake-noisy"});
    s.warmup_timeout_s = 0.5;
    s.duration_s = 0.3;
    const RunResult r = run(s);
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOk);
    bool warned = false;
    for (const std::string& w : r.warnings)
        warned = warned || w.find("not steady") != std::string::npos;
    EXPECT_TRUE(warned);
}

TEST_F(RunTest, FixedWorkMeasuresTheMakespanFromACommonStart) {
    RunSpec s = spec_for({"fake", "fake-slow"});
    s.mode = RunMode::kWork;
    s.work_steps = 20;
    const RunResult r = run(s);
    for (const JobResult& j : r.jobs) {
        EXPECT_EQ(j.status, JobStatus::kOk) << j.message;
        EXPECT_EQ(j.steps, 20u);
        EXPECT_DOUBLE_EQ(j.items, 2000.0);
        ASSERT_TRUE(j.finish_s);
    }
    // The slow job (20 ms steps) ends the run; the fast one finished in about half the time.
    EXPECT_LT(*r.jobs[0].finish_s, *r.jobs[1].finish_s);
    EXPECT_NEAR(r.window_s, *r.jobs[1].finish_s, 0.1);
    EXPECT_GE(r.window_s, 20 * 0.02);
    EXPECT_NEAR(sum_energy(r), *r.energy.counter_energy_j, 1e-6);
}

TEST_F(RunTest, SequentialMeasuresEachJobAloneInItsOwnWindow) {
    RunSpec s = spec_for({"fake", "fake"});
    s.duration_s = 0.5;
    const RunResult r = run(s, partition::BackendKind::kSequential);
    ASSERT_EQ(r.windows_s.size(), 2u);
    EXPECT_LE(r.windows_s[0].second, r.windows_s[1].first);  // one after the other
    EXPECT_GE(r.window_s, 1.0);
    for (const JobResult& j : r.jobs)
        EXPECT_EQ(j.status, JobStatus::kOk) << j.message;
    EXPECT_NEAR(sum_energy(r), *r.energy.counter_energy_j, 1e-6);
    EXPECT_NE(r.attribution_method.find("alone"), std::string::npos);
}

TEST_F(RunTest, ExternalCommandsReportProgressOnFd3) {
    RunSpec s = spec_for({"fake"});
    partition::JobSpec ext;
    ext.name = "shell";
    // What it prints on stdout is its own (a log line here), not the protocol.
    ext.command = {"/bin/sh", "-c",
                   "while true; do echo '{\"event\":\"step\",\"items\":10}' >&3; "
                   "echo 'epoch 1 loss 2.3'; sleep 0.01; done"};
    s.jobs.push_back(ext);
    s.partitions.push_back(s.partitions.front());
    const RunResult r = run(s);
    EXPECT_EQ(r.jobs[1].status, JobStatus::kOk) << r.jobs[1].message;
    for (const std::string& w : r.warnings)
        EXPECT_EQ(w.find("not an event"), std::string::npos) << w;
    std::ifstream log(r.jobs[1].stderr_path);
    std::string first;
    std::getline(log, first);
    EXPECT_EQ(first, "epoch 1 loss 2.3");
    EXPECT_GT(r.jobs[1].steps, 10u);
    EXPECT_EQ(r.jobs[1].item_unit, "items");
    // A unit from the job spec names the items of lines that give none.
    s.jobs[1].item_unit = "samples";
    EXPECT_EQ(run(s).jobs[1].item_unit, "samples");
    ASSERT_TRUE(r.jobs[1].items_per_s);
    EXPECT_GT(*r.jobs[1].items_per_s, 100.0);
}

// A job's span runs from its first counted step's start to its last one's end: its steps' own
// time plus the time between them, which a rate over the steps' time leaves out.
TEST_F(RunTest, AJobsSpanIsItsStepsPlusTheTimeBetweenThem) {
    RunSpec s = spec_for({"fake"});
    s.mode = RunMode::kWork;
    s.work_steps = 5;
    partition::JobSpec gaps;
    gaps.name = "gaps";  // five steps of 10 ms, 100 ms apart
    gaps.command = {"/bin/sh", "-c",
                    "for i in 1 2 3 4 5; do sleep 0.1; "
                    "echo '{\"event\": \"step\", \"items\": 1, \"step_time_s\": 0.01}' >&3; done"};
    s.jobs.push_back(gaps);
    s.partitions.push_back(s.partitions.front());
    const RunResult r = run(s);
    const JobResult& j = r.jobs[1];
    ASSERT_EQ(j.status, JobStatus::kOk) << j.message;
    EXPECT_EQ(j.steps, 5u);
    EXPECT_NEAR(j.busy_s, 0.05, 1e-9);
    ASSERT_TRUE(j.span_s);
    EXPECT_GT(*j.span_s, 0.01 + 4 * 0.1 - 0.02);  // the first step's start to the last one's end
    EXPECT_LT(*j.span_s, 1.0);
    for (const JobResult& built_in : {r.jobs[0]}) {
        ASSERT_TRUE(built_in.span_s);
        EXPECT_GE(*built_in.span_s, built_in.busy_s);
        EXPECT_LE(*built_in.span_s, *built_in.finish_s + 1e-6);
    }
}

// Own commands that misbehave each get a clear status; every other job's results are kept.
TEST_F(RunTest, OwnCommandsThatMisbehaveGetAClearStatusAndTheOthersAreKept) {
    RunSpec s = spec_for({"fake"});
    s.mode = RunMode::kWork;
    s.work_steps = 10;
    s.job_timeout_s = 1.0;
    const std::vector<std::pair<std::string, std::string>> commands = {
        {"silent", "sleep 0.3"},
        {"garbage", "sleep 0.3; echo garbage >&3; echo '{\"event\": \"step\", \"items\": \"x\"}' >&3; "
                    "echo '{\"event\": \"step\", \"items\": 5}' >&3; sleep 0.2"},
        {"fails", "exit 3"},
        {"hangs", "sleep 30"}};
    for (const auto& [name, script] : commands) {
        partition::JobSpec ext;
        ext.name = name;
        ext.command = {"/bin/sh", "-c", script};
        s.jobs.push_back(ext);
    }
    s.partitions.assign(s.jobs.size(), s.partitions.front());
    const RunResult r = run(s);
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOk) << r.jobs[0].message;
    EXPECT_EQ(r.jobs[0].steps, 10u);
    EXPECT_EQ(r.jobs[1].status, JobStatus::kOk) << r.jobs[1].message;
    EXPECT_FALSE(r.jobs[1].items_per_s);
    EXPECT_EQ(r.jobs[2].status, JobStatus::kOk) << r.jobs[2].message;
    EXPECT_EQ(r.jobs[2].steps, 1u);  // the one good line of three (after the window opened)
    EXPECT_EQ(r.jobs[3].status, JobStatus::kCrashed);
    EXPECT_NE(r.jobs[3].message.find("3"), std::string::npos) << r.jobs[3].message;
    EXPECT_EQ(r.jobs[4].status, JobStatus::kTimedOut) << r.jobs[4].message;
    std::string warnings;
    for (const std::string& w : r.warnings)
        warnings += w + "\n";
    EXPECT_NE(warnings.find("job silent reported no progress"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("job garbage: ignored a progress line"), std::string::npos)
        << warnings;
}

// With fixed work a command starts with the work, when the built-in jobs are warm: its whole run,
// start-up included, lies in the makespan, as when it was profiled alone. (It once started with
// the workers and ran its start-up before the window opened, outside the makespan and energy.)
TEST_F(RunTest, FixedWorkStartsACommandWhenTheBuiltInJobsAreWarm) {
    RunSpec s = spec_for({"fake"});
    s.mode = RunMode::kWork;
    s.work_steps = 5;
    s.warmup_steps = 40;  // 0.4 s of warm-up
    partition::JobSpec mine;
    mine.name = "mine";
    mine.command = {"/bin/sh", "-c", "sleep 0.3; echo '{\"event\": \"step\", \"items\": 1}' >&3"};
    s.jobs.push_back(mine);
    s.partitions.push_back(s.partitions.front());
    const RunResult r = run(s);
    ASSERT_EQ(r.jobs[1].status, JobStatus::kOk) << r.jobs[1].message;
    ASSERT_TRUE(r.jobs[1].finish_s);
    EXPECT_GE(*r.jobs[1].finish_s, 0.29);
    EXPECT_GE(r.window_s, 0.29);
    EXPECT_EQ(r.jobs[1].steps, 1u);
}

// A process per job (mps, here timeslice): a queued command starts when the job before it ends,
// and a queued built-in job warms up with the others and is told to start then.
TEST_F(RunTest, QueuedProcessesStartWhenTheJobBeforeThemEnds) {
    RunSpec s = spec_for({"fake"});
    s.mode = RunMode::kWork;
    s.work_steps = 10;
    const std::string stamps = (dir_ / "stamps").string();
    partition::JobSpec first, second;
    first.name = "first";
    first.command = {"/bin/sh", "-c", "sleep 0.4; echo first >> " + stamps};
    second.name = "second";
    second.command = {"/bin/sh", "-c", "echo second >> " + stamps + "; sleep 0.2"};
    second.item_unit = "samples";
    s.jobs = {first, second, s.jobs[0]};
    s.partitions.assign(3, s.partitions.front());
    s.partitions[1].after_job = 0;  // second after first
    s.partitions[2].after_job = 1;  // the built-in job after second
    const RunResult r = run(s);
    for (const JobResult& j : r.jobs)
        EXPECT_EQ(j.status, JobStatus::kOk) << j.spec.name << ": " << j.message;
    std::ifstream in(stamps);
    std::string a, b;
    in >> a >> b;
    EXPECT_EQ(a + " " + b, "first second");  // second started after first ended
    ASSERT_TRUE(r.jobs[0].finish_s && r.jobs[1].finish_s && r.jobs[2].finish_s);
    EXPECT_GE(*r.jobs[1].finish_s, *r.jobs[0].finish_s + 0.19);
    EXPECT_GE(*r.jobs[2].finish_s, *r.jobs[1].finish_s + 10 * 0.01 - 0.005);
    EXPECT_EQ(r.jobs[2].steps, 10u);
    EXPECT_NEAR(r.window_s, *r.jobs[2].finish_s, 0.1);
}

// A job with a later start (a stream replay's arrival) starts its work no earlier than that
// after the common start: the runner releases a process of its own (timeslice, as mps and cpu),
// the worker's group waits itself (green); with a queue, after both.
TEST_F(RunTest, AJobStartsItsWorkNoEarlierThanItsStartTime) {
    for (const partition::BackendKind kind :
         {partition::BackendKind::kTimeslice, partition::BackendKind::kGreen}) {
        SCOPED_TRACE(partition::to_string(kind));
        RunSpec s = spec_for({"fake", "fake", "fake"});
        s.mode = RunMode::kWork;
        s.work_steps = 5;
        s.partitions[1].start_after_s = 0.3;
        s.partitions[2].after_job = 0;
        s.partitions[2].sms.reset();
        s.partitions[2].start_after_s = 0.2;  // its predecessor ends before: waits for this
        const RunResult r = run(s, kind);
        for (const JobResult& j : r.jobs) {
            EXPECT_EQ(j.status, JobStatus::kOk) << j.spec.name << ": " << j.message;
            ASSERT_TRUE(j.start_s && j.finish_s) << j.spec.name;
            EXPECT_EQ(j.steps, 5u);
        }
        EXPECT_LT(*r.jobs[0].start_s, 0.1);
        EXPECT_GE(*r.jobs[1].start_s, 0.3);
        EXPECT_GE(*r.jobs[2].start_s, 0.2);
        EXPECT_GE(*r.jobs[2].start_s, *r.jobs[0].finish_s - 0.005);
        EXPECT_GE(*r.jobs[1].finish_s, 0.3 + 5 * 0.01);
    }
    RunSpec bad = spec_for({"fake"});
    bad.partitions[0].start_after_s = 1;  // a duration window has no start for it
    EXPECT_ANY_THROW(run(bad));
}

// An external command that ignores SIGTERM at the window's end is killed, and that is a failed
// job, not an ok one (the runner waits drain_timeout_s, then SIGTERM, then SIGKILL after 5 s).
TEST_F(RunTest, ACommandKilledAfterIgnoringSigtermIsNotOk) {
    RunSpec s = spec_for({"fake"});
    s.duration_s = 0.3;
    s.drain_timeout_s = 0.2;
    partition::JobSpec ext;
    ext.name = "stubborn";
    ext.command = {"/bin/sh", "-c", "trap '' TERM; while true; do sleep 0.05; done"};
    s.jobs.push_back(ext);
    s.partitions.push_back(s.partitions.front());
    const RunResult r = run(s);
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOk) << r.jobs[0].message;
    EXPECT_EQ(r.jobs[1].status, JobStatus::kFailed);
    EXPECT_NE(r.jobs[1].message.find("did not stop on SIGTERM"), std::string::npos)
        << r.jobs[1].message;
}

TEST_F(RunTest, ACommandThatCannotStartIsAFailedJobNotAFailedRun) {
    RunSpec s = spec_for({"fake"});
    partition::JobSpec ext;
    ext.name = "missing";
    ext.command = {"/nonexistent/trainer"};
    s.jobs.push_back(ext);
    s.partitions.push_back(s.partitions.front());
    const RunResult r = run(s);
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOk);
    EXPECT_EQ(r.jobs[1].status, JobStatus::kFailed);
    EXPECT_NE(r.jobs[1].message.find("/nonexistent/trainer"), std::string::npos);
}

TEST_F(RunTest, InterruptionStopsCleanlyAndKeepsPartialResults) {
    RunSpec s = spec_for({"fake", "fake"});
    s.duration_s = 30;
    std::atomic<bool> stop{false}, open{false};
    RunHooks hooks;
    hooks.interrupt = &stop;
    hooks.progress = [&](const std::string& line) {
        open = open || line.find("all jobs steady") != std::string::npos;
    };
    std::thread t([&] {  // interrupt 0.3 s after the window opened (or after 8 s)
        const auto deadline = SteadyClock::now() + std::chrono::seconds(8);
        while (!open && SteadyClock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        stop = true;
    });
    const auto t0 = SteadyClock::now();
    const RunResult r = run(s, partition::BackendKind::kTimeslice, hooks);
    t.join();
    EXPECT_LT(seconds_between(t0, SteadyClock::now()), 10.0);
    EXPECT_TRUE(r.interrupted);
    for (const JobResult& j : r.jobs)
        EXPECT_GT(j.steps, 0u);  // the window was open: what it saw is kept
    EXPECT_TRUE(r.energy.counter_energy_j);
}

TEST_F(RunTest, AnInterruptionBeforeTheWindowSaysSoRatherThanBlameSteadyState) {
    RunSpec s = spec_for({"fake", "fake"});
    s.duration_s = 30;
    std::atomic<bool> stop{false};
    RunHooks hooks;
    hooks.interrupt = &stop;
    hooks.progress = [&](const std::string& line) {  // as soon as the jobs are started
        if (line.find("starting") != std::string::npos)
            stop = true;
    };
    const RunResult r = run(s, partition::BackendKind::kTimeslice, hooks);
    EXPECT_TRUE(r.interrupted);
    EXPECT_EQ(r.window_s, 0);
    const auto said = [&](const std::string& text) {
        return std::any_of(r.warnings.begin(), r.warnings.end(), [&](const std::string& w) {
            return w.find(text) != std::string::npos;
        });
    };
    EXPECT_TRUE(said("interrupted before it opened"));
    EXPECT_FALSE(said("no job reached steady state"));
}

TEST_F(RunTest, NoPowerSourceLeavesEnergyEmptyWithAWarning) {
    partition::BackendOptions o;
    o.worker_path = FAKE_WORKER;
    o.run_dir = dir_.string();
    auto backend = partition::make_backend(partition::BackendKind::kTimeslice, o, "");
    RunSpec s = spec_for({"fake"});
    s.duration_s = 0.3;
    const RunResult r = execute_run(s, *backend, nullptr, {});
    EXPECT_EQ(r.jobs[0].status, JobStatus::kOk);
    EXPECT_FALSE(r.energy.counter_energy_j);
    EXPECT_FALSE(r.jobs[0].energy_j);
    EXPECT_FALSE(r.warnings.empty());
}

TEST_F(RunTest, AJobThatSteppedEagerlyAfterAskingForACudaGraphIsAWarning) {
    RunSpec s = spec_for({"fake-eager", "fake"});
    s.duration_s = 0.3;
    const RunResult r = run(s);
    EXPECT_EQ(r.jobs[0].step_mode, "eager");
    EXPECT_EQ(r.jobs[1].step_mode, "cuda-graph");
    const auto warned = std::find_if(r.warnings.begin(), r.warnings.end(), [](const auto& w) {
        return w.find("stepped eagerly") != std::string::npos &&
               w.find("capture failed: fake") != std::string::npos;
    });
    EXPECT_NE(warned, r.warnings.end());
}

TEST_F(RunTest, AGpuSizedStepOnTheCpuIsSaidAtReadyWithTheBatchToShrink) {
    RunSpec s = spec_for({"fake-cpu-huge", "fake"});
    s.duration_s = 0.3;
    std::vector<std::string> said;
    RunHooks hooks;
    hooks.progress = [&](const std::string& line) { said.push_back(line); };
    run(s, partition::BackendKind::kTimeslice, hooks);
    const auto about = [&](const std::string& job) {
        return std::count_if(said.begin(), said.end(), [&](const std::string& l) {
            return l.find("job " + job + ": a training step is") != std::string::npos;
        });
    };
    EXPECT_EQ(about("fake-cpu-huge#0"), 1);
    EXPECT_EQ(about("fake#1"), 0);  // 1 TFLOP, but on the GPU
    const auto line = std::find_if(said.begin(), said.end(), [](const std::string& l) {
        return l.find("fake-cpu-huge#0: a training step") != std::string::npos;
    });
    ASSERT_NE(line, said.end());
    EXPECT_NE(line->find("30.0 TFLOP"), std::string::npos) << *line;
    EXPECT_NE(line->find("fake-cpu-huge:B"), std::string::npos) << *line;
}

TEST(FailedJobsText, NamesEachJobThatDidNotEndOk) {
    RunResult r;
    r.jobs.resize(3);
    r.jobs[1].status = JobStatus::kCrashed;
    r.jobs[1].message = "exit 3";
    r.jobs[2].status = JobStatus::kTimedOut;
    EXPECT_EQ(failed_jobs_text(r), to_string(JobStatus::kCrashed) + ": exit 3; " +
                                       to_string(JobStatus::kTimedOut));
    r.jobs.resize(1);
    EXPECT_EQ(failed_jobs_text(r), "");
}

// Two jobs, a at 50 and b at 30 items/s in `run`, 100 and 60 alone on the whole GPU.
RunResult two_jobs(partition::BackendKind backend, RunMode mode, double window_s) {
    RunResult run;
    run.backend = backend;
    run.mode = mode;
    run.window_s = window_s;
    JobResult a, b;
    a.spec.name = "a";
    a.items_per_s = 50;
    b.spec.name = "b";
    b.items_per_s = 30;
    run.jobs = {a, b};
    return run;
}

std::vector<JobResult> alone_rates() {
    JobResult wa, wb;
    wa.spec.name = "a";
    wa.items_per_s = 100;
    wb.spec.name = "b";
    wb.items_per_s = 60;
    return {wa, wb};
}

TEST(NormaliseThroughput, SideBySideForADurationTheSumOfTheJobsShares) {
    RunResult run = two_jobs(partition::BackendKind::kGreen, RunMode::kDuration, 10);
    normalise_throughput(run, alone_rates());
    EXPECT_DOUBLE_EQ(*run.jobs[0].normalised_throughput, 0.5);
    EXPECT_DOUBLE_EQ(*run.jobs[1].normalised_throughput, 0.5);
    EXPECT_DOUBLE_EQ(*run.aggregate_normalised_throughput, 1.0);
}

TEST(NormaliseThroughput, TheSequentialBaselineAgainstItselfIsOne) {
    // Each job ran alone for half the summed window: the sum of its shares (2.00) said twice
    // the baseline's work, beside the comparison's "1.00 by definition".
    RunResult base = two_jobs(partition::BackendKind::kSequential, RunMode::kDuration, 6);
    normalise_throughput(base, base.jobs);
    EXPECT_DOUBLE_EQ(*base.jobs[0].normalised_throughput, 1.0);
    EXPECT_DOUBLE_EQ(*base.aggregate_normalised_throughput, 1.0);
}

TEST(NormaliseThroughput, FixedWorkCountsAJobOnlyWhileItRan) {
    // a did 500 items in 10 s, b 900 in 30 s: 5 + 15 whole-GPU seconds over a 30 s makespan,
    // what compare_with_baseline calls the speedup, not the sum of their shares (1.00).
    RunResult run = two_jobs(partition::BackendKind::kGreen, RunMode::kWork, 30);
    run.jobs[0].items = 500;
    run.jobs[1].items = 900;
    const std::vector<JobResult> alone = alone_rates();
    normalise_throughput(run, alone);
    EXPECT_DOUBLE_EQ(*run.aggregate_normalised_throughput, 20.0 / 30.0);
    RunResult base = two_jobs(partition::BackendKind::kSequential, RunMode::kWork, 20);
    base.jobs[0].items_per_s = 100;
    base.jobs[1].items_per_s = 60;
    EXPECT_NEAR(*compare_with_baseline(run, base).speedup, *run.aggregate_normalised_throughput,
                1e-12);
}

TEST(NormaliseThroughput, AJobWithoutAThroughputAddsNothingAndNoWindowGivesNone) {
    RunResult run = two_jobs(partition::BackendKind::kGreen, RunMode::kDuration, 10);
    run.jobs[1].items_per_s.reset();  // it crashed
    normalise_throughput(run, alone_rates());
    EXPECT_FALSE(run.jobs[1].normalised_throughput);
    EXPECT_DOUBLE_EQ(*run.aggregate_normalised_throughput, 0.5);
    RunResult empty = two_jobs(partition::BackendKind::kGreen, RunMode::kDuration, 0);
    normalise_throughput(empty, alone_rates());
    EXPECT_FALSE(empty.aggregate_normalised_throughput);
}

}  // namespace
}  // namespace migscope::runner
