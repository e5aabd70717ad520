// Tests of reading one GPU's consumers on the fake NVML (tests/fake_nvml/exporter-mps.json): the
// MPS server recognised by its 15-byte /proc name and left out, processes without samples, and
// the activity probe's kernel time where every process sends it.
#include "exporter/consumers.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "exporter/activity_listener.h"
#include "nvml/fake_nvml_env.h"

using namespace migscope;
using namespace migscope::exporter;
namespace fs = std::filesystem;

namespace {

// A /proc holding each pid's comm, as the kernel writes it (at most 15 bytes and a newline).
struct CommProc {
    fs::path root =
        fs::temp_directory_path() / ("migscope-consumers-proc-" + std::to_string(::getpid()));
    explicit CommProc(const std::vector<std::pair<unsigned, std::string>>& comms) {
        for (const auto& [pid, comm] : comms) {
            fs::create_directories(root / std::to_string(pid));
            std::ofstream(root / std::to_string(pid) / "comm") << comm.substr(0, 15) << '\n';
        }
    }
    ~CommProc() { fs::remove_all(root); }
};

std::vector<std::string> pids_of(const ConsumerReading& r) {
    std::vector<std::string> out;
    for (const ConsumerActivity& c : r.consumers) {
        for (const auto& [name, value] : c.consumer.labels) {
            if (name == "pid")
                out.push_back(value);
        }
    }
    return out;
}

// Reports as the listener would hold them, sent now.
struct FixedReports : ActivityReports {
    std::map<std::pair<unsigned, std::string>, activity::ActivityReport> reports;
    void set(unsigned pid, const std::string& uuid, double busy_s, double age_s = 0,
             double since_start_s = 1, std::optional<double> sm_share = {}, uint64_t dropped = 0) {
        const double now_ns = static_cast<double>(activity::monotonic_ns());
        activity::ActivityReport r;
        r.gpu_uuid = uuid;
        r.sent_ns = static_cast<uint64_t>(now_ns - age_s * 1e9);
        r.started_ns = static_cast<uint64_t>(now_ns - (age_s + since_start_s) * 1e9);
        r.busy_ns = static_cast<uint64_t>(busy_s * 1e9);
        r.sm_share = sm_share;
        r.dropped = dropped;
        reports[{pid, uuid}] = r;
    }
    std::optional<activity::ActivityReport> latest(unsigned pid,
                                                   const std::string& uuid) const override {
        const auto it = reports.find({pid, uuid});
        if (it == reports.end())
            return std::nullopt;
        return it->second;
    }
    std::vector<unsigned> reported_since(const std::string& uuid,
                                         uint64_t since_ns) const override {
        std::vector<unsigned> pids;
        for (const auto& [key, report] : reports) {
            if (key.second == uuid && report.sent_ns > since_ns)
                pids.push_back(key.first);
        }
        return pids;
    }
};

constexpr const char* kMpsGpu = "GPU-00000000-fake-h200-0000-0000000f0000";
constexpr const char* kTimeSlicedGpu = "GPU-00000000-fake-h200-0000-0000000f0001";

}  // namespace

TEST(MpsServerCommand, TheKernelsCutNameAndTheFullName) {
    EXPECT_TRUE(is_mps_server_command("nvidia-cuda-mps"));  // /proc/PID/comm of the server
    EXPECT_TRUE(is_mps_server_command("nvidia-cuda-mps-server"));
    EXPECT_FALSE(is_mps_server_command("nvidia-cuda-mp"));
    EXPECT_FALSE(is_mps_server_command("nvidia-cuda-mps-serverd"));
    EXPECT_FALSE(is_mps_server_command("python3"));
    EXPECT_FALSE(is_mps_server_command(""));
}

// The names are written as the kernel keeps them: "nvidia-cuda-mps-server" becomes
// "nvidia-cuda-mps". The server is no consumer; the clients are, without activity.
TEST(ConsumerReader, AnMpsServerIsLeftOutAndItsClientsHaveNoActivity) {
    CommProc proc({{5000, "nvidia-cuda-mps-server"},
                   {5001, "python3"},
                   {5002, "python3"},
                   {5101, "python3"},
                   {5102, "python3"},
                   {5301, "python3"}});
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();

    ConsumerReader mps(session.device(0), proc.root.string());
    const ConsumerReading r = mps.read();
    EXPECT_TRUE(r.mps_server);
    EXPECT_TRUE(r.has_compute_processes);
    EXPECT_FALSE(r.idle);
    EXPECT_EQ(pids_of(r), (std::vector<std::string>{"5001"}));  // 5002 comes at 0.6 s
    for (const ConsumerActivity& c : r.consumers)
        EXPECT_FALSE(c.activity_ratio) << c.consumer.key;
    EXPECT_FALSE(r.process_signal_missing);  // the cause is said as MPS, not as this
    const std::vector<std::string> warnings = mps.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("MPS server (nvidia-cuda-mps, pid 5000)"), std::string::npos)
        << warnings[0];

    // Time-sliced: each process with its own activity.
    ConsumerReader shared(session.device(1), proc.root.string());
    const ConsumerReading s = shared.read();
    EXPECT_FALSE(s.mps_server);
    ASSERT_EQ(pids_of(s), (std::vector<std::string>{"5101", "5102"}));
    EXPECT_DOUBLE_EQ(s.consumers[0].activity_ratio.value(), 0.6);
    EXPECT_DOUBLE_EQ(s.consumers[1].activity_ratio.value(), 0.2);

    // A process that never reports: measured 0, and the reading says no signal has come.
    ConsumerReader silent(session.device(3), proc.root.string());
    ConsumerReading q;
    for (int i = 0; i < 5; ++i)
        q = silent.read();
    EXPECT_TRUE(q.process_signal_missing);
    ASSERT_EQ(q.consumers.size(), 1u);
    EXPECT_EQ(q.consumers[0].activity_ratio, 0.0);
    EXPECT_EQ(silent.take_warnings().size(), 1u);  // after 5 intervals, once
    silent.read();
    EXPECT_TRUE(silent.take_warnings().empty());
}

// Under MPS the probe's kernel time is each client's activity (times its SM share); the server
// stays out and nothing is said about it.
TEST(ConsumerReader, TheProbesKernelTimeMeasuresEachMpsClient) {
    CommProc proc({{5000, "nvidia-cuda-mps-server"}, {5001, "python3"}});
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();
    FixedReports reports;
    reports.set(5001, kMpsGpu, 0.8, 0, 1, 0.5);  // 80 % busy on half the SMs
    ConsumerReader reader(session.device(0), proc.root.string(), &reports);
    const ConsumerReading r = reader.read();
    EXPECT_TRUE(r.mps_server);
    EXPECT_TRUE(r.kernel_time);
    ASSERT_EQ(pids_of(r), (std::vector<std::string>{"5001"}));
    EXPECT_NEAR(r.consumers[0].activity_ratio.value(), 0.4, 1e-6);
    EXPECT_TRUE(reader.take_warnings().empty());
}

// CUPTI dropped records (its buffers were full): the process's busy time reads low, which the
// split still uses, said once for that process.
TEST(ConsumerReader, AProbeThatLostRecordsIsSaidOnce) {
    CommProc proc({{5000, "nvidia-cuda-mps-server"}, {5001, "python3"}});
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();
    FixedReports reports;
    reports.set(5001, kMpsGpu, 0.8, 0, 1, 0.5, 17);
    ConsumerReader reader(session.device(0), proc.root.string(), &reports);
    EXPECT_TRUE(reader.read().kernel_time);
    const std::vector<std::string> warnings = reader.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("process 5001's activity probe lost 17 CUPTI activity records"),
              std::string::npos)
        << warnings[0];
    reports.set(5001, kMpsGpu, 1.6, 0, 2, 0.5, 20);
    EXPECT_TRUE(reader.read().kernel_time);
    EXPECT_TRUE(reader.take_warnings().empty());  // once
}

// Kernel time is used only when every process sends it: one without falls back to NVML's
// utilization for all, said once, naming it.
TEST(ConsumerReader, AProcessWithoutTheProbeFallsBackToNvmlForAll) {
    CommProc proc({{5101, "python3"}, {5102, "python3"}});
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();
    FixedReports reports;
    reports.set(5101, kTimeSlicedGpu, 0.9);
    ConsumerReader reader(session.device(1), proc.root.string(), &reports);
    ConsumerReading r;
    for (int i = 0; i < 5; ++i)
        r = reader.read();
    EXPECT_FALSE(r.kernel_time);
    ASSERT_EQ(pids_of(r), (std::vector<std::string>{"5101", "5102"}));
    EXPECT_DOUBLE_EQ(r.consumers[0].activity_ratio.value(), 0.6);  // NVML's
    const std::vector<std::string> warnings = reader.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("process(es) 5102 send no fresh activity report"), std::string::npos)
        << warnings[0];

    // With both sending, both are the probe's.
    reports.set(5102, kTimeSlicedGpu, 0.05);
    const ConsumerReading both = reader.read();
    EXPECT_TRUE(both.kernel_time);
    EXPECT_NEAR(both.consumers[0].activity_ratio.value(), 0.9, 1e-6);
    EXPECT_NEAR(both.consumers[1].activity_ratio.value(), 0.05, 1e-6);
}

// A process that exited in the interval is no longer listed, but its last report (the probe sends
// one at exit) came after the previous reading: it is charged for its part of the interval, once.
// On the H200 (2026-12-05) each exit interval's dynamic energy, 40-440 W over 1 s, went to
// `unattributed` instead.
TEST(ConsumerReader, AProcessThatExitedInTheIntervalIsChargedByItsLastReport) {
    CommProc proc({{5101, "python3"}, {5102, "python3"}});
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();
    FixedReports reports;
    reports.set(5101, kTimeSlicedGpu, 0.5);
    reports.set(5102, kTimeSlicedGpu, 0.2);
    reports.set(5199, kTimeSlicedGpu, 0.7, 0.1);  // its report at exit, 0.1 s ago
    reports.set(5198, kTimeSlicedGpu, 0.7, 5.0);  // exited 5 s ago: stale, not charged
    reports.set(5197, kMpsGpu, 0.7);              // another GPU's
    ConsumerReader reader(session.device(1), proc.root.string(), &reports);
    const ConsumerReading exit_interval = reader.read();
    EXPECT_TRUE(exit_interval.kernel_time);
    ASSERT_EQ(pids_of(exit_interval), (std::vector<std::string>{"5101", "5102", "5199"}));
    EXPECT_NEAR(exit_interval.consumers[2].activity_ratio.value(), 0.7, 1e-6);
    EXPECT_FALSE(exit_interval.idle);
    // The next interval: no report of 5199's since, so it is gone.
    const ConsumerReading next = reader.read();
    EXPECT_EQ(pids_of(next), (std::vector<std::string>{"5101", "5102"}));
    EXPECT_TRUE(next.kernel_time);
}

// A client whose probe stopped sending: its report goes stale and, under MPS, the dynamic
// energy is unattributed again (never the server's), with the MPS warning.
TEST(ConsumerReader, AProbeThatStopsSendingIsNoLongerUsed) {
    CommProc proc({{5000, "nvidia-cuda-mps"}, {5001, "python3"}});
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();
    FixedReports reports;
    reports.set(5001, kMpsGpu, 0.5, 10.0);  // sent 10 s ago
    ConsumerReader reader(session.device(0), proc.root.string(), &reports);
    ConsumerReading r = reader.read();
    // Not said at once: a client's first report may trail its first listing.
    EXPECT_TRUE(reader.take_warnings().empty());
    for (int i = 0; i < 4; ++i)
        r = reader.read();
    EXPECT_FALSE(r.kernel_time);
    EXPECT_TRUE(r.mps_server);
    ASSERT_EQ(r.consumers.size(), 1u);
    EXPECT_FALSE(r.consumers[0].activity_ratio);
    const std::vector<std::string> warnings = reader.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("activity probe"), std::string::npos) << warnings[0];
}
