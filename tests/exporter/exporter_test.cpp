// Tests of the exporter on the fake NVML: MIG instances with GPM activity and processes with SM
// utilization scripted, counters that sum to the board's, consumer churn and a GPU that fails.
#include "exporter/exporter.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "activity/report.h"
#include "fake_kubelet.h"
#include "nvml/fake_nvml_env.h"
#include "nvml/mig_instances_api.h"
#include "plan/profile.h"

using namespace migscope;
using namespace migscope::exporter;
namespace fs = std::filesystem;

namespace {

// A /proc with the command and cgroup of scripted pids.
struct FakeProc {
    fs::path root =
        fs::temp_directory_path() / ("migscope-exporter-proc-" + std::to_string(::getpid()));
    FakeProc() {
        add(4001, "trainer",
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f0c2d3e_4a5b_"
            "6c7d_8e9f_a0b1c2d3e4f5.slice/cri-containerd-"
            "3b2e6f9a0c1d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789ab.scope\n");
        add(4002, "evil\"name\\",
            "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n");
    }
    ~FakeProc() { fs::remove_all(root); }
    void add(unsigned pid, const std::string& comm, const std::string& cgroup) {
        const fs::path dir = root / std::to_string(pid);
        fs::create_directories(dir);
        std::ofstream(dir / "comm") << comm << '\n';
        std::ofstream(dir / "cgroup") << cgroup;
    }
};

const MetricFamily& family(const std::vector<MetricFamily>& families, const std::string& name) {
    for (const MetricFamily& f : families) {
        if (f.name == name)
            return f;
    }
    throw std::runtime_error("no family " + name);
}

std::string label(const Labels& labels, const std::string& name) {
    for (const auto& [n, v] : labels) {
        if (n == name)
            return v;
    }
    return "";
}

// The one sample of `name` whose labels include every pair of `match`; fails the test if none.
std::optional<MetricSample> find(const std::vector<MetricFamily>& families, const std::string& name,
                                 const Labels& match) {
    for (const MetricSample& s : family(families, name).samples) {
        bool all = true;
        for (const auto& [n, v] : match)
            all = all && label(s.labels, n) == v;
        if (all)
            return s;
    }
    return std::nullopt;
}

double attributed_sum(const std::vector<MetricFamily>& families, const std::string& gpu) {
    double total = 0;
    for (const MetricSample& s : family(families, "migscope_energy_joules_total").samples) {
        if (label(s.labels, "gpu") == gpu)
            total += s.value;
    }
    return total;
}

double board(const std::vector<MetricFamily>& families, const std::string& gpu) {
    return find(families, "migscope_gpu_energy_joules_total", {{"gpu", gpu}}).value().value;
}

void sleep_s(double s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

}  // namespace

TEST(Exporter, MigInstancesAndProcessesOnTheFakeNvml) {
    FakeNvmlEnv env("exporter-fleet.json");
    FakeProc proc;
    nvml::Session session = nvml::Session::open();
    ExporterOptions options;
    options.idle_power_w = 100;
    options.hostname = "node-1";
    options.proc_root = proc.root.string();
    Exporter exporter(session, options);
    ASSERT_EQ(exporter.gpu_count(), 2u);
    exporter.sample_once();
    const auto start = exporter.metric_families();
    for (int i = 0; i < 3; ++i) {
        sleep_s(0.3);
        exporter.sample_once();
    }
    const auto f = exporter.metric_families();

    for (const std::string gpu : {"0", "1"}) {
        EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", gpu}})->value, 1);
        EXPECT_EQ(label(find(f, "migscope_gpu_up", {{"gpu", gpu}})->labels, "Hostname"), "node-1");
        const double increase_j = board(f, gpu) - board(start, gpu);
        EXPECT_GT(increase_j, 0);
        EXPECT_NEAR(attributed_sum(f, gpu), increase_j, 1e-6 * increase_j) << "GPU " << gpu;
    }
    EXPECT_EQ(find(f, "migscope_gpu_power_watts", {{"gpu", "0"}})->value, 500);

    // GPU 0, MIG: 4g at 80 %, 2g at 40 %, one of 7 slices unused; 500 W with 100 W static. The
    // first interval has no GPM pair yet (dynamic unattributed); from the second the shares are
    // (400/7 + 320) / 500 and (200/7 + 80) / 500.
    const auto g4 = find(f, "migscope_energy_joules_total",
                         {{"gpu", "0"}, {"GPU_I_PROFILE", "4g.71gb"}, {"GPU_I_ID", "1"}});
    const auto g2 = find(f, "migscope_energy_joules_total",
                         {{"gpu", "0"}, {"GPU_I_PROFILE", "2g.35gb"}, {"GPU_I_ID", "2"}});
    const auto idle0 =
        find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"consumer", "idle"}});
    ASSERT_TRUE(g4 && g2 && idle0);
    EXPECT_EQ(label(g4->labels, "consumer"), "mig_instance");
    const double total0 = board(f, "0") - board(start, "0");
    EXPECT_NEAR(idle0->value / total0, 100.0 / 7 / 500, 1e-3);
    EXPECT_GT(g4->value / g2->value, 3.0);  // 377 : 109 once GPM pairs exist
    EXPECT_NEAR(find(f, "migscope_sm_activity_ratio", {{"gpu", "0"}, {"GPU_I_ID", "1"}})->value,
                0.8, 1e-12);
    EXPECT_EQ(label(find(f, "migscope_attribution_info", {{"gpu", "0"}})->labels, "method"),
              "mig_slices_static_gpm_sm_activity_dynamic");

    // GPU 1, time-sliced: static 100 W to idle; dynamic 200 W split 60 : 20. (Within 1e-4: the
    // static part uses the exporter's clock, the counter the fake's, read microseconds apart.)
    const auto p1 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4001"}});
    const auto p2 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4002"}});
    const auto idle1 =
        find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"consumer", "idle"}});
    ASSERT_TRUE(p1 && p2 && idle1);
    const double total1 = board(f, "1") - board(start, "1");
    EXPECT_NEAR(p1->value / total1, 150.0 / 300, 1e-4);
    EXPECT_NEAR(p2->value / total1, 50.0 / 300, 1e-4);
    EXPECT_NEAR(idle1->value / total1, 100.0 / 300, 1e-4);
    EXPECT_EQ(label(p1->labels, "command"), "trainer");
    EXPECT_EQ(label(p1->labels, "pod_uid"), "1f0c2d3e-4a5b-6c7d-8e9f-a0b1c2d3e4f5");
    EXPECT_EQ(label(p1->labels, "container_id").size(), 64u);
    EXPECT_EQ(label(p1->labels, "pod"), "");                  // names come from the kubelet only
    EXPECT_EQ(label(p2->labels, "command"), "evil\"name\\");  // escaped on the wire
    EXPECT_EQ(label(p2->labels, "pod_uid"), "");
    EXPECT_EQ(label(p2->labels, "slurm_job_id"), "4242");  // its Slurm job, by its cgroup
    EXPECT_EQ(label(p1->labels, "slurm_job_id"), "");
    const auto info1 = find(f, "migscope_attribution_info", {{"gpu", "1"}});
    EXPECT_EQ(label(info1->labels, "method"), "shared_idle_static_process_sm_util_dynamic");
    EXPECT_EQ(label(info1->labels, "idle_power_source"), "option");

    const std::string text = exporter.metrics_text();
    EXPECT_NE(text.find(R"(command="evil\"name\\")"), std::string::npos) << text;
}

TEST(Exporter, WithoutAHostnameTheHostsNameLabelsTheSeries) {
    FakeNvmlEnv env("exporter-fleet.json");
    nvml::Session session = nvml::Session::open();
    char name[256] = {};
    ASSERT_EQ(gethostname(name, sizeof(name) - 1), 0);
    Exporter exporter(session, ExporterOptions{});
    exporter.sample_once();
    EXPECT_EQ(label(find(exporter.metric_families(), "migscope_gpu_up", {{"gpu", "0"}})->labels,
                    "Hostname"),
              name);
}

// The dashboard filters every query by Hostname (deploy/grafana-dashboard.json; Deploy.python
// checks the queries): every series of every family carries it, on every fake fleet, a GPU that
// fails and MPS included.
TEST(Exporter, EverySeriesCarriesTheHostname) {
    for (const std::string config :
         {"exporter-fleet.json", "exporter-faults.json", "exporter-mps.json"}) {
        FakeNvmlEnv env(config);
        nvml::Session session = nvml::Session::open();
        ExporterOptions options;
        options.hostname = "node-7";
        Exporter exporter(session, options);
        exporter.sample_once();
        sleep_s(0.2);
        exporter.sample_once();
        size_t series = 0;
        for (const MetricFamily& f : exporter.metric_families()) {
            for (const MetricSample& s : f.samples) {
                ++series;
                EXPECT_EQ(label(s.labels, "Hostname"), "node-7") << config << ": " << f.name;
            }
        }
        EXPECT_GT(series, 4u) << config;
    }
}

TEST(Exporter, ConsumerChurnFailingGpuAndMissingProcessUtilization) {
    FakeNvmlEnv env("exporter-faults.json");
    nvml::Session session = nvml::Session::open();
    ExporterOptions options;
    options.hostname = "node-2";
    options.proc_root = "/nonexistent-proc";
    Exporter exporter(session, options);
    exporter.sample_once();
    const auto start = exporter.metric_families();
    std::map<std::string, double> last;  // counter values seen so far, by gpu + consumer labels
    std::vector<std::string> warnings;
    for (int i = 0; i < 10; ++i) {  // 0.3 s apart: to about 3 s
        sleep_s(0.3);
        exporter.sample_once();
        for (std::string& w : exporter.take_warnings())
            warnings.push_back(std::move(w));
        const auto f = exporter.metric_families();
        // GPU 0's passing process-utilization failure leaves it up.
        EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", "0"}})->value, 1) << "sample " << i;
        for (const MetricSample& s : family(f, "migscope_energy_joules_total").samples) {
            std::string key;
            for (const auto& [n, v] : s.labels)
                key += n + "=" + v + ",";
            EXPECT_GE(s.value, last[key]) << key << " went down";
            last[key] = s.value;
        }
        for (const std::string gpu : {"0", "1", "2", "3"}) {
            const double increase_j = board(f, gpu) - board(start, gpu);
            EXPECT_NEAR(attributed_sum(f, gpu), increase_j, 1e-6 * increase_j + 1e-9);
        }
    }
    const auto f = exporter.metric_families();
    // GPU 1 fell off the bus at 2 s: up 0, no power, counters kept; the others still served.
    EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", "1"}})->value, 0);
    EXPECT_FALSE(find(f, "migscope_gpu_power_watts", {{"gpu", "1"}}));
    EXPECT_TRUE(find(f, "migscope_gpu_energy_joules_total", {{"gpu", "1"}}));
    EXPECT_GT(
        find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"consumer", "idle"}})->value +
            find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"consumer", "unattributed"}})
                ->value,
        0);
    EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", "0"}})->value, 1);
    EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", "2"}})->value, 1);
    // Process 4002 left at 2 s, 4003 came at 1 s: both keep counters; only live ones have activity.
    const auto gone = find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"pid", "4002"}});
    ASSERT_TRUE(gone);
    EXPECT_GT(gone->value, 0);
    EXPECT_FALSE(find(f, "migscope_sm_activity_ratio", {{"gpu", "0"}, {"pid", "4002"}}));
    EXPECT_NEAR(find(f, "migscope_sm_activity_ratio", {{"gpu", "0"}, {"pid", "4003"}})->value, 0.3,
                1e-12);
    EXPECT_EQ(
        label(find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"pid", "4001"}})->labels,
              "command"),
        "");  // no /proc entry: the label is left out
    // Without --idle-power-w: GPU 1 (no processes) learned its idle power, with the SM clock at
    // the highest seen (clocks up, as `run` prefers); GPU 0 never idle; GPU 3 runs no compute
    // process but its utilization is 100 %: not idle, so nothing is learned.
    EXPECT_EQ(
        label(find(f, "migscope_attribution_info", {{"gpu", "3"}})->labels, "idle_power_source"),
        "unknown");
    EXPECT_EQ(find(f, "migscope_energy_joules_total", {{"gpu", "3"}, {"consumer", "idle"}})->value,
              0);
    EXPECT_EQ(
        label(find(f, "migscope_attribution_info", {{"gpu", "1"}})->labels, "idle_power_source"),
        "learned_clocks_up");
    EXPECT_EQ(
        label(find(f, "migscope_attribution_info", {{"gpu", "0"}})->labels, "idle_power_source"),
        "unknown");
    // GPU 2's driver gives no per-process utilization: said once, in the method and on stderr.
    EXPECT_EQ(label(find(f, "migscope_attribution_info", {{"gpu", "2"}})->labels, "method"),
              "shared_idle_static_dynamic_unattributed_no_process_util");
    int util_warnings = 0, down_warnings = 0, passing_warnings = 0;
    for (const std::string& w : warnings) {
        passing_warnings += w.find("GPU 0: nvmlDeviceGetProcessUtilization failed") == 0;
        util_warnings += w.find("GPU 2: the driver gives no per-process SM utilization") == 0;
        down_warnings +=
            w.find("GPU 1 is down") == 0 && w.find("nvmlDeviceGetTotalEnergy") != std::string::npos;
    }
    EXPECT_EQ(util_warnings, 1);
    EXPECT_EQ(passing_warnings, 1);
    // While it failed, GPU 0's dynamic energy went to `unattributed`; its method did not change.
    EXPECT_GT(find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"consumer", "unattributed"}})
                  ->value,
              0);
    EXPECT_EQ(label(find(f, "migscope_attribution_info", {{"gpu", "0"}})->labels, "method"),
              "shared_idle_static_process_sm_util_dynamic");
    EXPECT_EQ(down_warnings, 1);
    EXPECT_FALSE(find(f, "migscope_sm_activity_ratio", {{"gpu", "2"}}));
    EXPECT_GT(find(f, "migscope_energy_joules_total", {{"gpu", "2"}, {"consumer", "unattributed"}})
                  ->value,
              0);
}

// The idle power is learned from intervals idle at both ends. On the H200 (2026-12-05) the
// interval in which jobs exited ended with no process but began with them at work; taken as idle it
// raised the learned clocks-up power from 130 W to 252 W, and every later interval charged that as
// static. Here: 600 W until process 4201 exits at 1 s, 130 W until 4202 starts at 2.6 s.
TEST(Exporter, LearnsIdlePowerOnlyFromIntervalsIdleAtBothEnds) {
    FakeNvmlEnv env("exporter-idle-after-work.json");
    nvml::Session session = nvml::Session::open();
    ExporterOptions options;
    options.proc_root = "/nonexistent-proc";
    Exporter exporter(session, options);
    exporter.sample_once();
    std::vector<MetricFamily> running_from;  // the first reading with 4202 at work
    double running_from_s = 0;
    const auto start = std::chrono::steady_clock::now();
    const auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    for (int i = 0; i < 12; ++i) {  // 0.3 s apart: to about 3.6 s
        sleep_s(0.3);
        exporter.sample_once();
        if (running_from.empty() && seconds() > 2.9) {
            running_from = exporter.metric_families();
            running_from_s = seconds();
        }
    }
    ASSERT_FALSE(running_from.empty());
    const auto f = exporter.metric_families();
    const double elapsed_s = seconds() - running_from_s;
    EXPECT_EQ(
        label(find(f, "migscope_attribution_info", {{"gpu", "0"}})->labels, "idle_power_source"),
        "learned_clocks_up");
    // While 4202 works, `idle` grows by the static power: the idle intervals' 130 W, not the
    // ~290 W of the interval in which 4201 exited.
    const auto idle_j = [](const std::vector<MetricFamily>& families) {
        return find(families, "migscope_energy_joules_total", {{"gpu", "0"}, {"consumer", "idle"}})
            ->value;
    };
    EXPECT_NEAR((idle_j(f) - idle_j(running_from)) / elapsed_s, 130.0, 6.0);
}

// Scrapes while the sampler runs and consumers come and go: every scrape is a complete snapshot
// (parseable, the sum equal to the board's increase), never a half-updated one.
TEST(Exporter, ScrapesDuringSamplingAndConsumerExitSeeWholeSnapshots) {
    FakeNvmlEnv env("exporter-faults.json");
    nvml::Session session = nvml::Session::open();
    ExporterOptions options;
    options.idle_power_w = 50;
    options.proc_root = "/nonexistent-proc";
    Exporter exporter(session, options);
    exporter.sample_once();
    const double start0 = board(exporter.metric_families(), "0");
    std::atomic<bool> stop{false};
    std::thread sampler([&] {
        while (!stop) {
            exporter.sample_once();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    int scrapes = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
    while (std::chrono::steady_clock::now() < until) {  // process 4002 exits at 2 s
        const auto f = exporter.metric_families();
        const double increase_j = board(f, "0") - start0;
        ASSERT_NEAR(attributed_sum(f, "0"), increase_j, 1e-6 * increase_j + 1e-9);
        ASSERT_FALSE(exporter.metrics_text().empty());
        ++scrapes;
    }
    stop = true;
    sampler.join();
    EXPECT_GT(scrapes, 10);
}

// Listing MIG instances can need root: without it the GPU stays up, its energy goes to `idle` and
// `unattributed`, and the method and a warning say why.
TEST(Exporter, MigInstancesThatCannotBeListedLeaveTheGpuUp) {
    std::ifstream in(std::string(FAKE_NVML_DIR) + "/exporter-fleet.json");
    std::stringstream text;
    text << in.rdbuf();
    std::string config = text.str();
    const std::string key = "\"mig_current\": 1,";
    const size_t at = config.find(key);
    ASSERT_NE(at, std::string::npos);
    config.insert(at + key.size(), " \"mig_list_no_permission\": true,");
    const fs::path path =
        fs::temp_directory_path() / ("migscope-exporter-noperm-" + std::to_string(::getpid()));
    std::ofstream(path) << config;
    FakeNvmlEnv env(path.string());
    nvml::Session session = nvml::Session::open();
    ExporterOptions options;
    options.idle_power_w = 100;
    Exporter exporter(session, options);
    exporter.sample_once();
    sleep_s(0.2);
    exporter.sample_once();
    const auto f = exporter.metric_families();
    fs::remove(path);
    EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", "0"}})->value, 1);
    EXPECT_FALSE(
        find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"consumer", "mig_instance"}}));
    EXPECT_GT(find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"consumer", "unattributed"}})
                  ->value,
              0);
    EXPECT_EQ(label(find(f, "migscope_attribution_info", {{"gpu", "0"}})->labels, "method"),
              "mig_unlisted_static_idle_dynamic_unattributed_no_permission");
    const std::vector<std::string> warnings = exporter.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("nvmlDeviceGetGpuInstances"), std::string::npos) << warnings[0];
}

namespace {

using migscope::testing::FakeKubelet;
using migscope::testing::ScriptedContainer;

const std::string kGpu1Uuid = "GPU-00000000-fake-h200-0000-0000000e0001";
const std::string kPodUid = "1f0c2d3e-4a5b-6c7d-8e9f-a0b1c2d3e4f5";

// The UUID of the MIG device of GPU 0's GPU instance `gi_id` (the fake makes them).
std::string mig_device_uuid(const nvml::Session& session, unsigned gi_id) {
    for (const nvml::MigDevice& d : nvml::MigInstancesApi(session.device(0)).mig_devices()) {
        if (d.gpu_instance_id == gi_id)
            return d.uuid;
    }
    throw std::runtime_error("no MIG device on GPU instance " + std::to_string(gi_id));
}

ExporterOptions kubelet_options(const FakeProc& proc, const std::string& socket) {
    ExporterOptions options;
    options.idle_power_w = 100;
    options.proc_root = proc.root.string();
    options.pod_resources_socket = socket;
    options.pod_resources_refresh_s = 0.05;
    options.pod_resources_deadline_s = 0.3;
    return options;
}

Labels names_of(const Labels& labels) {
    return {{"namespace", label(labels, "namespace")},
            {"pod", label(labels, "pod")},
            {"container", label(labels, "container")}};
}

const Labels kNoNames = {{"namespace", ""}, {"pod", ""}, {"container", ""}};

void expect_sums_whole(const std::vector<MetricFamily>& start, const std::vector<MetricFamily>& f) {
    for (const std::string gpu : {"0", "1"}) {
        const double increase_j = board(f, gpu) - board(start, gpu);
        EXPECT_NEAR(attributed_sum(f, gpu), increase_j, 1e-6 * increase_j + 1e-9) << "GPU " << gpu;
    }
}

}  // namespace

// The kubelet names the containers holding GPU 1 (a time-slicing replica) and GPU instance 1's
// MIG device: the process in a pod and the instance carry namespace, pod and container; the
// process outside any pod and the unheld instance do not.
TEST(ExporterKubernetes, NamesOnMigInstancesAndProcessesWhenOneContainerHoldsTheDevice) {
    FakeNvmlEnv env("exporter-fleet.json");
    FakeProc proc;
    nvml::Session session = nvml::Session::open();
    FakeKubelet kubelet({{"ml", "trainer-0", "main", {kGpu1Uuid + "::0"}},
                         {"ml", "llm-0", "worker", {mig_device_uuid(session, 1)}},
                         {"web", "frontend", "nginx", {}}});
    Exporter exporter(session, kubelet_options(proc, kubelet.socket_path()));
    exporter.sample_once();
    const auto start = exporter.metric_families();
    for (int i = 0; i < 3; ++i) {
        sleep_s(0.2);
        exporter.sample_once();
    }
    const auto f = exporter.metric_families();
    EXPECT_TRUE(exporter.take_warnings().empty());
    expect_sums_whole(start, f);

    const auto p1 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4001"}});
    ASSERT_TRUE(p1);
    EXPECT_EQ(names_of(p1->labels),
              (Labels{{"namespace", "ml"}, {"pod", "trainer-0"}, {"container", "main"}}));
    EXPECT_EQ(label(p1->labels, "pod_uid"), kPodUid);
    EXPECT_EQ(label(p1->labels, "container_id").size(), 64u);
    EXPECT_GT(p1->value, 0);
    // 4002 runs on the same GPU but outside any pod (its cgroup): not the container's.
    const auto p2 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4002"}});
    ASSERT_TRUE(p2);
    EXPECT_EQ(names_of(p2->labels), kNoNames);
    EXPECT_TRUE(find(f, "migscope_sm_activity_ratio", {{"pid", "4001"}, {"pod", "trainer-0"}}));

    const auto g4 = find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"GPU_I_ID", "1"}});
    const auto g2 = find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"GPU_I_ID", "2"}});
    ASSERT_TRUE(g4 && g2);
    EXPECT_EQ(names_of(g4->labels),
              (Labels{{"namespace", "ml"}, {"pod", "llm-0"}, {"container", "worker"}}));
    EXPECT_EQ(label(g4->labels, "GPU_I_PROFILE"), "4g.71gb");
    EXPECT_GT(g4->value, 0);
    EXPECT_EQ(names_of(g2->labels), kNoNames);
    // On the wire too.
    const std::string text = exporter.metrics_text();
    EXPECT_NE(text.find("GPU_I_ID=\"1\",namespace=\"ml\",pod=\"llm-0\",container=\"worker\""),
              std::string::npos)
        << text;
}

// Two containers share GPU 1 (time-slicing replicas) and GPU instance 1's MIG device: which one
// a process or the instance belongs to is not known, so no names; the cgroup's pod UID stays.
TEST(ExporterKubernetes, NoNamesWhenTwoContainersShareTheDevice) {
    FakeNvmlEnv env("exporter-fleet.json");
    FakeProc proc;
    nvml::Session session = nvml::Session::open();
    const std::string mig1 = mig_device_uuid(session, 1);
    FakeKubelet kubelet({{"ml", "trainer-0", "main", {kGpu1Uuid + "::0", mig1 + "::0"}},
                         {"ml", "trainer-1", "main", {kGpu1Uuid + "::1", mig1 + "::1"}}});
    Exporter exporter(session, kubelet_options(proc, kubelet.socket_path()));
    exporter.sample_once();
    sleep_s(0.2);
    exporter.sample_once();
    const auto f = exporter.metric_families();
    const auto p1 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4001"}});
    const auto g4 = find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"GPU_I_ID", "1"}});
    ASSERT_TRUE(p1 && g4);
    EXPECT_EQ(names_of(p1->labels), kNoNames);
    EXPECT_EQ(label(p1->labels, "pod_uid"), kPodUid);
    EXPECT_EQ(names_of(g4->labels), kNoNames);
    EXPECT_GT(kubelet.calls(), 0);
    EXPECT_TRUE(exporter.take_warnings().empty());
}

// No kubelet socket (not a Kubernetes node, or the mount is missing): the exporter works as
// without the option, says so once, and labels no names.
TEST(ExporterKubernetes, AMissingSocketMeansNoNamesAndOneWarning) {
    FakeNvmlEnv env("exporter-fleet.json");
    FakeProc proc;
    nvml::Session session = nvml::Session::open();
    const std::string path = migscope::testing::fake_kubelet_socket_path();
    Exporter exporter(session, kubelet_options(proc, path));
    exporter.sample_once();
    const auto start = exporter.metric_families();
    std::vector<std::string> warnings;
    for (int i = 0; i < 4; ++i) {
        sleep_s(0.1);
        exporter.sample_once();
        for (std::string& w : exporter.take_warnings())
            warnings.push_back(std::move(w));
    }
    const auto f = exporter.metric_families();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(path + ": no such socket"), std::string::npos) << warnings[0];
    for (const std::string gpu : {"0", "1"})
        EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", gpu}})->value, 1);
    expect_sums_whole(start, f);
    const auto p1 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4001"}});
    ASSERT_TRUE(p1);
    EXPECT_EQ(names_of(p1->labels), kNoNames);
    EXPECT_EQ(label(p1->labels, "pod_uid"), kPodUid);
}

// A kubelet slower than the deadline: the exporter starts within it, samples without waiting
// for the kubelet, and labels no names.
TEST(ExporterKubernetes, ASlowKubeletDelaysNeitherStartNorSamples) {
    FakeNvmlEnv env("exporter-fleet.json");
    FakeProc proc;
    nvml::Session session = nvml::Session::open();
    FakeKubelet kubelet({{"ml", "trainer-0", "main", {kGpu1Uuid}}});
    kubelet.set_delay_s(5);
    auto t0 = std::chrono::steady_clock::now();
    Exporter exporter(session, kubelet_options(proc, kubelet.socket_path()));
    const auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    EXPECT_LT(since(t0), 1.0);  // the constructor's call gave up after 0.3 s
    exporter.sample_once();
    for (int i = 0; i < 5; ++i) {
        sleep_s(0.1);
        t0 = std::chrono::steady_clock::now();
        exporter.sample_once();
        EXPECT_LT(since(t0), 0.1);  // the refresh thread waits, not the sampler
    }
    const auto f = exporter.metric_families();
    const auto p1 = find(f, "migscope_energy_joules_total", {{"gpu", "1"}, {"pid", "4001"}});
    ASSERT_TRUE(p1);
    EXPECT_EQ(names_of(p1->labels), kNoNames);
    const std::vector<std::string> warnings = exporter.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("DEADLINE_EXCEEDED"), std::string::npos) << warnings[0];
}

// The kubelet goes away mid-run (a clean stop removes its socket): the next refresh fails, the
// names go, the named series keep their values (counters never decrease), the sum stays whole
// and the GPUs stay up.
TEST(ExporterKubernetes, AKubeletThatGoesAwayLeavesCountersWhole) {
    FakeNvmlEnv env("exporter-fleet.json");
    FakeProc proc;
    nvml::Session session = nvml::Session::open();
    FakeKubelet kubelet({{"ml", "trainer-0", "main", {kGpu1Uuid}}});
    Exporter exporter(session, kubelet_options(proc, kubelet.socket_path()));
    exporter.sample_once();
    const auto start = exporter.metric_families();
    sleep_s(0.2);
    exporter.sample_once();
    const Labels named = {{"gpu", "1"}, {"pid", "4001"}, {"pod", "trainer-0"}};
    const auto before = find(exporter.metric_families(), "migscope_energy_joules_total", named);
    ASSERT_TRUE(before);
    EXPECT_GT(before->value, 0);

    kubelet.stop();
    sleep_s(0.3);  // a few refreshes fail meanwhile
    exporter.sample_once();
    sleep_s(0.2);
    exporter.sample_once();
    const auto f = exporter.metric_families();
    const auto kept = find(f, "migscope_energy_joules_total", named);
    ASSERT_TRUE(kept);
    EXPECT_GE(kept->value, before->value);
    EXPECT_FALSE(find(f, "migscope_sm_activity_ratio", named));  // no longer a live consumer
    const auto unnamed = find(f, "migscope_energy_joules_total",
                              {{"gpu", "1"}, {"pid", "4001"}, {"pod", ""}, {"pod_uid", kPodUid}});
    ASSERT_TRUE(unnamed);
    EXPECT_GT(unnamed->value, 0);
    for (const std::string gpu : {"0", "1"})
        EXPECT_EQ(find(f, "migscope_gpu_up", {{"gpu", gpu}})->value, 1);
    expect_sums_whole(start, f);
    const std::vector<std::string> warnings = exporter.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    // Said once, naming the socket: "no such socket" once it is gone, or, when the stop caught a
    // call in flight, that call's failure ("List failed: CANCELLED"), whichever came first.
    EXPECT_NE(warnings[0].find(kubelet.socket_path()), std::string::npos) << warnings[0];
    EXPECT_TRUE(warnings[0].find(": no such socket") != std::string::npos ||
                warnings[0].find("List failed") != std::string::npos)
        << warnings[0];
}

// ---- The per-process signal (issue 43): MPS servers, clients that come and go, a process that
// stops reporting, processes that never report (tests/fake_nvml/exporter-mps.json) ----

namespace {

// The fixture's scripted board power per GPU, and the static power the tests give.
constexpr double kMpsBoardW[] = {400, 300, 250, 200};
constexpr double kIdleW = 100;

// One sample of the exporter on exporter-mps.json: seconds since the fake NVML started, the
// metrics, the warnings given with it.
struct Snapshot {
    double t_s = 0;
    std::vector<MetricFamily> families;
    std::vector<std::string> warnings;
};

struct MpsRun {
    FakeProc proc;
    std::vector<Snapshot> snapshots;
};

// Samples every 0.1 s until `until_s` after the session opened; /proc names the server as the
// kernel does (15 bytes) on GPU 0 and in full on GPU 2.
std::unique_ptr<MpsRun> run_mps_fixture(double until_s) {
    auto run = std::make_unique<MpsRun>();
    run->proc.add(5000, "nvidia-cuda-mps", "0::/system.slice/nvidia-mps.service\n");
    run->proc.add(5200, "nvidia-cuda-mps-server", "0::/system.slice/nvidia-mps.service\n");
    for (unsigned pid : {5001u, 5002u, 5101u, 5102u, 5201u, 5301u})
        run->proc.add(pid, "python3", "0::/user.slice\n");
    FakeNvmlEnv env("exporter-mps.json");
    nvml::Session session = nvml::Session::open();
    const auto t0 = std::chrono::steady_clock::now();
    ExporterOptions options;
    options.idle_power_w = kIdleW;
    options.proc_root = run->proc.root.string();
    Exporter exporter(session, options);
    for (;;) {
        exporter.sample_once();
        Snapshot snap;
        snap.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        snap.families = exporter.metric_families();
        snap.warnings = exporter.take_warnings();
        run->snapshots.push_back(std::move(snap));
        if (run->snapshots.back().t_s >= until_s)
            break;
        sleep_s(0.1);
    }
    return run;
}

double energy_of(const std::vector<MetricFamily>& f, const Labels& match) {
    const auto s = find(f, "migscope_energy_joules_total", match);
    return s ? s->value : 0.0;
}

std::string method_of(const std::vector<MetricFamily>& f, const std::string& gpu) {
    return label(find(f, "migscope_attribution_info", {{"gpu", gpu}}).value().labels, "method");
}

bool has_pid_series(const std::vector<MetricFamily>& f, const std::string& gpu,
                    const std::string& pid) {
    return find(f, "migscope_energy_joules_total", {{"gpu", gpu}, {"pid", pid}}).has_value() ||
           find(f, "migscope_sm_activity_ratio", {{"gpu", gpu}, {"pid", pid}}).has_value();
}

int count_containing(const std::vector<Snapshot>& snaps, const std::string& a,
                     const std::string& b = "") {
    int n = 0;
    for (const Snapshot& s : snaps) {
        for (const std::string& w : s.warnings)
            n += w.find(a) != std::string::npos && w.find(b) != std::string::npos;
    }
    return n;
}

}  // namespace

// The kernel cuts the server's name to 15 bytes ("nvidia-cuda-mps"): it is still recognised, never
// charged (no series at all), its clients get no dynamic energy, the dynamic energy is
// `unattributed`, the method names the MPS server, and the warning is given once. The same for the
// full name on GPU 2.
TEST(ExporterSignal, AnMpsServerNamedIn15BytesIsNeverCharged) {
    const auto run = run_mps_fixture(0.5);
    const auto& first = run->snapshots.front().families;
    const auto& f = run->snapshots.back().families;
    for (const std::string gpu : {"0", "2"})
        EXPECT_EQ(method_of(f, gpu), "shared_idle_static_mps_server_dynamic_unattributed") << gpu;
    EXPECT_FALSE(has_pid_series(f, "0", "5000"));
    EXPECT_FALSE(has_pid_series(f, "2", "5200"));
    // The clients are consumers (their series exist) but measured nothing: no activity gauge.
    ASSERT_TRUE(find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"pid", "5001"}}));
    EXPECT_EQ(energy_of(f, {{"gpu", "0"}, {"pid", "5001"}}), 0);
    EXPECT_FALSE(find(f, "migscope_sm_activity_ratio", {{"gpu", "0"}}));
    EXPECT_EQ(energy_of(f, {{"gpu", "2"}, {"pid", "5201"}}), 0);
    // The board's energy: static to idle, the rest unattributed, in the scripted proportion.
    for (const auto& [gpu, board_w] :
         std::vector<std::pair<std::string, double>>{{"0", kMpsBoardW[0]}, {"2", kMpsBoardW[2]}}) {
        const double increase_j = board(f, gpu) - board(first, gpu);
        ASSERT_GT(increase_j, 0);
        const double unattributed_j =
            energy_of(f, {{"gpu", gpu}, {"consumer", "unattributed"}}) -
            energy_of(first, {{"gpu", gpu}, {"consumer", "unattributed"}});
        EXPECT_NEAR(unattributed_j / increase_j, (board_w - kIdleW) / board_w, 2e-3) << gpu;
        EXPECT_NEAR(attributed_sum(f, gpu),
                    board(f, gpu) - board(first, gpu) + attributed_sum(first, gpu),
                    1e-6 * increase_j);
    }
    // One warning per GPU, naming the server as /proc names it.
    EXPECT_EQ(count_containing(run->snapshots, "GPU 0: an MPS server (nvidia-cuda-mps, pid 5000)"),
              1);
    EXPECT_EQ(count_containing(run->snapshots, "GPU 2: an MPS server (nvidia-cuda-mps-server"), 1);
    EXPECT_EQ(count_containing(run->snapshots, "MPS server"), 2);
}

// Clients come and go beside the server (5002 from 0.6 s to 1.4 s on GPU 0), and on GPU 2 the
// server itself goes at 1.0 s: every counter only grows, the sum stays whole, no client is charged
// dynamic energy while a server runs, the server never gets a series, and once it has gone the
// process beside it is charged again and the method says so.
TEST(ExporterSignal, MpsClientsThatComeAndGo) {
    const auto run = run_mps_fixture(2.0);
    const auto& first = run->snapshots.front().families;
    std::map<std::string, double> last;
    bool client_seen = false;
    double gpu2_unattributed_at_1_1_s = -1, gpu2_process_at_0_9_s = -1;
    for (const Snapshot& snap : run->snapshots) {
        const auto& f = snap.families;
        for (const MetricSample& s : family(f, "migscope_energy_joules_total").samples) {
            std::string key;
            for (const auto& [n, v] : s.labels)
                key += n + "=" + v + ",";
            EXPECT_GE(s.value, last[key]) << key << " went down at " << snap.t_s << " s";
            last[key] = s.value;
        }
        for (const std::string gpu : {"0", "1", "2", "3"}) {
            const double increase_j = board(f, gpu) - board(first, gpu);
            EXPECT_NEAR(attributed_sum(f, gpu) - attributed_sum(first, gpu), increase_j,
                        1e-6 * increase_j + 1e-9)
                << "GPU " << gpu << " at " << snap.t_s << " s";
        }
        EXPECT_FALSE(has_pid_series(f, "0", "5000")) << snap.t_s;
        EXPECT_FALSE(has_pid_series(f, "2", "5200")) << snap.t_s;
        for (const MetricSample& s : family(f, "migscope_energy_joules_total").samples) {
            if (label(s.labels, "gpu") == "0" && label(s.labels, "consumer") == "process") {
                EXPECT_EQ(s.value, 0) << "pid " << label(s.labels, "pid") << " at " << snap.t_s;
            }
        }
        EXPECT_EQ(method_of(f, "0"), "shared_idle_static_mps_server_dynamic_unattributed");
        client_seen = client_seen || has_pid_series(f, "0", "5002");
        if (snap.t_s < 0.9) {
            EXPECT_EQ(method_of(f, "2"), "shared_idle_static_mps_server_dynamic_unattributed");
            gpu2_process_at_0_9_s = energy_of(f, {{"gpu", "2"}, {"pid", "5201"}});
        }
        if (snap.t_s > 1.1 && gpu2_unattributed_at_1_1_s < 0) {
            gpu2_unattributed_at_1_1_s = energy_of(f, {{"gpu", "2"}, {"consumer", "unattributed"}});
        }
    }
    const auto& f = run->snapshots.back().families;
    // The client that came and went kept its (empty) series; the one still there too.
    EXPECT_TRUE(client_seen);
    EXPECT_TRUE(find(f, "migscope_energy_joules_total", {{"gpu", "0"}, {"pid", "5002"}}));
    EXPECT_FALSE(find(f, "migscope_sm_activity_ratio", {{"gpu", "0"}, {"pid", "5002"}}));
    // GPU 2 after its server left: the process is charged and nothing more is unattributed.
    EXPECT_EQ(method_of(f, "2"), "shared_idle_static_process_sm_util_dynamic");
    EXPECT_EQ(gpu2_process_at_0_9_s, 0);
    ASSERT_GE(gpu2_unattributed_at_1_1_s, 0);
    EXPECT_GT(energy_of(f, {{"gpu", "2"}, {"pid", "5201"}}), 0);
    EXPECT_EQ(energy_of(f, {{"gpu", "2"}, {"consumer", "unattributed"}}),
              gpu2_unattributed_at_1_1_s);
    EXPECT_NEAR(find(f, "migscope_sm_activity_ratio", {{"gpu", "2"}, {"pid", "5201"}})->value, 0.5,
                1e-12);
    // The warning was given once per GPU, though the server was seen in every interval.
    EXPECT_EQ(count_containing(run->snapshots, "MPS server"), 2);
}

// GPU 1: 5102 stays listed but stops reporting at 0.8 s. Before, the dynamic energy is split
// 60 : 20; after, 5102 is charged nothing more and 5101 takes the whole dynamic part. GPU 3: a
// process that never reports: the dynamic energy is unattributed, the method and one warning say
// so.
TEST(ExporterSignal, AProcessThatStopsReportingIsChargedNothingMore) {
    const auto run = run_mps_fixture(2.0);
    const Snapshot* at_0_7 = nullptr;  // the last sample before 0.7 s
    const Snapshot* at_1_0 = nullptr;  // the first after 1.0 s
    for (const Snapshot& snap : run->snapshots) {
        if (snap.t_s < 0.7)
            at_0_7 = &snap;
        if (snap.t_s > 1.0 && !at_1_0)
            at_1_0 = &snap;
    }
    ASSERT_TRUE(at_0_7 && at_1_0);
    const auto& first = run->snapshots.front().families;
    const auto& f = run->snapshots.back().families;
    const Labels p1 = {{"gpu", "1"}, {"pid", "5101"}}, p2 = {{"gpu", "1"}, {"pid", "5102"}};
    // Before: 60 : 20 of 200 W dynamic, so 150 W and 50 W of the board's 300 W.
    const double before_j = board(at_0_7->families, "1") - board(first, "1");
    ASSERT_GT(before_j, 0);
    const double p1_before = energy_of(at_0_7->families, p1) - energy_of(first, p1);
    const double p2_before = energy_of(at_0_7->families, p2) - energy_of(first, p2);
    EXPECT_NEAR(p1_before / before_j, 150.0 / kMpsBoardW[1], 2e-3);
    EXPECT_NEAR(p2_before / before_j, 50.0 / kMpsBoardW[1], 2e-3);
    // After: 5102's counter stops, 5101 gets all 200 W of dynamic power.
    const double after_j = board(f, "1") - board(at_1_0->families, "1");
    ASSERT_GT(after_j, 0);
    EXPECT_EQ(energy_of(f, p2), energy_of(at_1_0->families, p2));
    EXPECT_NEAR((energy_of(f, p1) - energy_of(at_1_0->families, p1)) / after_j,
                (kMpsBoardW[1] - kIdleW) / kMpsBoardW[1], 2e-3);
    EXPECT_EQ(find(f, "migscope_sm_activity_ratio", p2)->value, 0);  // listed, measured 0
    EXPECT_EQ(method_of(f, "1"), "shared_idle_static_process_sm_util_dynamic");

    // GPU 3: never a sample.
    EXPECT_EQ(method_of(f, "3"), "shared_idle_static_dynamic_unattributed_no_process_samples");
    EXPECT_EQ(energy_of(f, {{"gpu", "3"}, {"pid", "5301"}}), 0);
    const double increase3_j = board(f, "3") - board(first, "3");
    EXPECT_NEAR((energy_of(f, {{"gpu", "3"}, {"consumer", "unattributed"}}) -
                 energy_of(first, {{"gpu", "3"}, {"consumer", "unattributed"}})) /
                    increase3_j,
                (kMpsBoardW[3] - kIdleW) / kMpsBoardW[3], 2e-3);
    EXPECT_EQ(count_containing(run->snapshots,
                               "GPU 3: compute processes run but the driver has "
                               "given no per-process SM utilization sample"),
              1);
    // GPU 1's processes reported from the start: no such warning for it.
    EXPECT_EQ(count_containing(run->snapshots, "GPU 1: compute processes run"), 0);
}

namespace {

// Sends `pid`'s own activity report (the kernel names the sender) every 20 ms: busy `ratio` of
// the time since `started_ns`, naming `job`, until `stop`.
void send_reports(const std::string& socket_path, const std::string& uuid, double ratio,
                  const std::string& job, const std::atomic<bool>& stop, double first_after_s = 0,
                  double busy_after_s = 0) {
    sleep_s(first_after_s);
    const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
    auto now_ns = [] { return activity::monotonic_ns(); };
    activity::ActivityReport r;
    r.gpu_uuid = uuid;
    r.job = job;
    r.started_ns = now_ns();
    while (!stop.load()) {
        sleep_s(0.02);
        r.sent_ns = now_ns();
        // Busy at `ratio` from `busy_after_s` on; reporting, idle, before.
        const double busy_from_ns = static_cast<double>(r.started_ns) + busy_after_s * 1e9;
        r.busy_ns = static_cast<uint64_t>(
            ratio * std::max(0.0, static_cast<double>(r.sent_ns) - busy_from_ns));
        const std::string line = activity::encode(r);
        (void)sendto(fd, line.data(), line.size(), 0, reinterpret_cast<const sockaddr*>(&address),
                     sizeof address);
    }
    close(fd);
}

// Two processes running the activity probe on one GPU at `board_w`: this test (busy `my_ratio`,
// naming `my_job`) and a child of it (busy 0.6, `their_job`, idle for its first
// `their_busy_after_s`), each sending for itself through the socket; beside an MPS server (pid
// 5000) when `mps`. What the exporter made of 0.6 s of intervals once both had reported and the
// child was busy.
struct ProbePair {
    std::vector<MetricFamily> first, last;
    std::vector<std::string> warnings;
    std::string me, them;  // the pids
};

ProbePair probe_pair(bool mps, double board_w, ExporterOptions options,
                     const std::string& my_job = "", const std::string& their_job = "",
                     double their_first_report_s = 0, double my_ratio = 0.2,
                     double their_busy_after_s = 0) {
    const fs::path dir =
        fs::temp_directory_path() / ("migscope-exporter-probe-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string socket_path = (dir / "activity.sock").string();
    const std::string uuid = "GPU-00000000-fake-h200-0000-00000000beef";
    std::atomic<bool> stop{false};
    const pid_t child = fork();
    if (child == 0) {
        // Sends until the socket is gone (the test ended) or 20 s passed.
        std::atomic<bool> child_stop{false};
        std::thread t([&] {
            send_reports(socket_path, uuid, 0.6, their_job, child_stop, their_first_report_s,
                         their_busy_after_s);
        });
        for (int i = 0; i < 2000 && fs::exists(dir); ++i)
            sleep_s(0.01);
        child_stop = true;
        t.join();
        _exit(0);
    }
    const unsigned self = static_cast<unsigned>(::getpid());
    FakeProc proc;
    proc.add(5000, "nvidia-cuda-mps", "0::/system.slice/nvidia-mps.service\n");
    proc.add(self, "python3", "0::/user.slice\n");
    proc.add(static_cast<unsigned>(child), "python3", "0::/user.slice\n");
    const fs::path fixture = dir / "fixture.json";
    // Time-sliced, NVML samples each process's SM utilisation too: before a process's first
    // report, the split is by it.
    const std::string nvml_util = mps ? "" : R"(, "sm_util": 40)";
    std::ofstream(fixture) << R"({"driver_version": "580.159.04", "cuda_driver_version": 13000,
      "devices": [{"name": "NVIDIA H200", "uuid": ")"
                           << uuid << R"(", "memory_total_mib": 143771,
      "memory_used_mib": 2048, "mig_current": 0, "mig_pending": 0, "power_limit_w": 700,
      "power_trace": [[0, )"
                           << board_w << "], [1000, " << board_w
                           << R"(]], "sm_clock_mhz": 1980, "memory_clock_mhz": 3201,
      "temperature_c": 50, "processes": [)"
                           << (mps ? R"({"pid": 5000, "sm_util": 99}, )" : "") << R"({"pid": )"
                           << self << nvml_util << R"(}, {"pid": )" << child << nvml_util
                           << "}]}]}";
    const auto started = std::chrono::steady_clock::now();
    std::thread reporter([&] { send_reports(socket_path, uuid, my_ratio, my_job, stop); });
    ProbePair out;
    {
        FakeNvmlEnv env(fixture.string());
        nvml::Session session = nvml::Session::open();
        options.proc_root = proc.root.string();
        options.activity_socket = socket_path;
        Exporter exporter(session, options);
        // Until both have reported (at most 2 s), then 0.6 s of intervals.
        for (int i = 0; i < 100; ++i) {
            exporter.sample_once();
            out.first = exporter.metric_families();
            if (method_of(out.first, "0").find("kernel_time") != std::string::npos)
                break;
            sleep_s(0.02);
        }
        // Intervals in which this process runs alone, until the child is busy.
        while (std::chrono::steady_clock::now() - started <
               std::chrono::duration<double>(their_busy_after_s + 0.15)) {
            sleep_s(0.1);
            exporter.sample_once();
        }
        out.first = exporter.metric_families();
        for (int i = 0; i < 6; ++i) {
            sleep_s(0.1);
            exporter.sample_once();
        }
        out.last = exporter.metric_families();
        out.warnings = exporter.take_warnings();
    }
    stop = true;
    reporter.join();
    fs::remove_all(dir);
    waitpid(child, nullptr, 0);
    out.me = std::to_string(self);
    out.them = std::to_string(child);
    return out;
}

// A process's energy over the pair's intervals.
double pair_energy_j(const ProbePair& pair, const std::string& pid) {
    return energy_of(pair.last, {{"gpu", "0"}, {"pid", pid}}) -
           energy_of(pair.first, {{"gpu", "0"}, {"pid", pid}});
}

}  // namespace

// Two MPS clients running the activity probe (this test and a child of it, each sending for
// itself through the socket): each is charged the dynamic energy in proportion to its kernel
// time (0.2 against 0.6), the server nothing, and the method says kernel time.
TEST(ExporterSignal, TheProbesKernelTimeSplitsMpsClientsThroughTheSocket) {
    ExporterOptions options;
    options.idle_power_w = kIdleW;
    const ProbePair pair = probe_pair(true, 400, options);
    EXPECT_EQ(method_of(pair.last, "0"), "shared_idle_static_kernel_time_dynamic");
    EXPECT_FALSE(has_pid_series(pair.last, "0", "5000"));
    const double mine_j = pair_energy_j(pair, pair.me), theirs_j = pair_energy_j(pair, pair.them);
    const double increase_j = board(pair.last, "0") - board(pair.first, "0");
    ASSERT_GT(increase_j, 0);
    // All the dynamic energy (400 W board, kIdleW static) goes to the two clients, 1 : 3.
    EXPECT_NEAR((mine_j + theirs_j) / increase_j, (400 - kIdleW) / 400, 0.01);
    EXPECT_NEAR(mine_j / (mine_j + theirs_j), 0.25, 0.03);
    EXPECT_NEAR(
        find(pair.last, "migscope_sm_activity_ratio", {{"gpu", "0"}, {"pid", pair.them}})->value,
        0.6, 0.03);
    for (const std::string& w : pair.warnings)
        EXPECT_EQ(w.find("MPS server"), std::string::npos) << w;
}

// With --profiles, each time-sliced process's power alone (its job, named by its probe) gives
// `run`'s marginal split instead of kernel time's: resnet18:32 alone 448 W and resnet50:32 489 W
// (idle 131 W in the profiles) on a 600 W board with 100 W idle: margins 500 - 358 and
// 500 - 317 W, the rest (175 W) in halves, so 229.5 : 270.5 where kernel time says 1 : 3.
namespace {

// resnet18:32 and resnet50:32 alone on the whole H200 (448 and 489 W), idle with clocks up 131 W.
plan::ProfileSet resnet_profiles() {
    plan::ProfileSet set;
    set.gpu_model = "h200";
    set.idle_power_w = plan::measured_of({131});
    set.idle_state = "clocks-up";
    set.provenance.cuda_injection = "migscope-activity kernels";  // measured as they report
    for (const auto& [workload, watts] : {std::pair{"resnet18", 448.0}, {"resnet50", 489.0}}) {
        plan::JobProfile job;
        job.workload = workload;
        job.mode = "train";
        job.batch = 32;
        plan::PartitionProfile whole;
        whole.partition = std::string(plan::kWholeGpu);
        whole.sms = 132;
        whole.average_power_w = plan::measured_of({watts});
        job.partitions = {whole};
        set.jobs.push_back(job);
    }
    return set;
}

}  // namespace

TEST(ExporterSignal, ProfilesGiveEachProcessItsPowerAloneAndRunsSplit) {
    ExporterOptions options;
    options.idle_power_w = 100;
    options.profile_powers = ProfilePowers({resnet_profiles()});
    const ProbePair pair = probe_pair(false, 600, options, "resnet18:train:32", "resnet50:train");
    EXPECT_EQ(label(find(pair.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "dynamic_split"),
              "profile_power");
    const double mine_j = pair_energy_j(pair, pair.me), theirs_j = pair_energy_j(pair, pair.them);
    EXPECT_NEAR(mine_j / (mine_j + theirs_j), 229.5 / 500, 0.01);
    EXPECT_TRUE(pair.warnings.empty()) << pair.warnings.front();

    // A job no file profiles: said once, and the split stays by kernel time.
    const ProbePair unknown = probe_pair(false, 600, options, "resnet18:train:32", "bert-base");
    EXPECT_EQ(label(find(unknown.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "dynamic_split"),
              "activity");
    ASSERT_EQ(unknown.warnings.size(), 1u);
    EXPECT_NE(unknown.warnings[0].find("no --profiles file profiles job 'bert-base'"),
              std::string::npos)
        << unknown.warnings[0];
}

// A process that ran alone has its power alone measured, and the split uses it before its
// profile's: this test busy at 0.9 alone on a 600 W board with 100 W idle (500 W dynamic; its
// profile says 448 - 131 W), then beside resnet50:32 (489 - 131 = 358 W from its profile). Margins
// 500 - 358 and 500 - 500, the rest (358 W) in halves: 321 : 179, where the profiles alone gave
// 229.5 : 270.5 (above).
TEST(ExporterSignal, APowerAloneMeasuredWhileAProcessRanAloneComesBeforeItsProfile) {
    ExporterOptions options;
    options.idle_power_w = 100;
    options.profile_powers = ProfilePowers({resnet_profiles()});
    const ProbePair pair =
        probe_pair(false, 600, options, "resnet18:train:32", "resnet50:train", 0, 0.9, 0.6);
    EXPECT_EQ(label(find(pair.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "dynamic_split"),
              "profile_power");
    const double mine_j = pair_energy_j(pair, pair.me), theirs_j = pair_energy_j(pair, pair.them);
    EXPECT_NEAR(mine_j / (mine_j + theirs_j), 321.0 / 500, 0.02);
    EXPECT_TRUE(pair.warnings.empty()) << pair.warnings.front();
}

// Profiles measured without the activity probe overstate a probed process's power alone (the probe
// slows a job and lowers its power): the split still uses them, and says so once.
TEST(ExporterSignal, ProfilesMadeWithoutTheProbeAreSaidOnce) {
    ExporterOptions options;
    options.idle_power_w = 100;
    plan::ProfileSet set = resnet_profiles();
    set.provenance.cuda_injection = "none";
    options.profile_powers = ProfilePowers({set});
    const ProbePair pair = probe_pair(false, 600, options, "resnet18:train:32", "resnet50:train");
    EXPECT_EQ(label(find(pair.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "dynamic_split"),
              "profile_power");
    ASSERT_EQ(pair.warnings.size(), 1u) << "said once for both processes and every interval";
    EXPECT_NE(pair.warnings[0].find("ran without the activity probe (cuda_injection: none)"),
              std::string::npos)
        << pair.warnings[0];
    EXPECT_NE(pair.warnings[0].find("profile under the probe they run with"), std::string::npos);
}

// NVML lists a time-sliced process before its probe's first report: those intervals split by
// NVML's activity, and no job is said to be missing (its report names it).
TEST(ExporterSignal, AProcessNotYetReportingIsNotSaidToNameNoJob) {
    ExporterOptions options;
    options.idle_power_w = 100;
    options.profile_powers = ProfilePowers({resnet_profiles()});
    const ProbePair pair =
        probe_pair(false, 600, options, "resnet18:train:32", "resnet50:train", 0.3);
    EXPECT_EQ(label(find(pair.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "dynamic_split"),
              "profile_power");
    // Sampled every 20 ms here, the wait is long enough to be said ("partial-kernel-time").
    for (const std::string& w : pair.warnings)
        EXPECT_EQ(w.find("names no job"), std::string::npos) << w;
}

// A GPU busy since the exporter started has taught no idle power: with --profiles its static
// power is the clocks-up idle power the profiles were measured against (131 W), not nothing, and
// not the deep idle power that undercounts it; profiles of another GPU model give none.
TEST(ExporterSignal, ProfilesGiveTheStaticPowerUntilClocksUpIdleIsLearned) {
    ExporterOptions options;
    options.profile_powers = ProfilePowers({resnet_profiles()});
    const ProbePair pair = probe_pair(false, 600, options, "resnet18:train:32", "resnet50:train");
    EXPECT_EQ(label(find(pair.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "idle_power_source"),
              "profiles_clocks_up");
    const double idle_j = energy_of(pair.last, {{"gpu", "0"}, {"consumer", "idle"}}) -
                          energy_of(pair.first, {{"gpu", "0"}, {"consumer", "idle"}});
    const double increase_j = board(pair.last, "0") - board(pair.first, "0");
    ASSERT_GT(increase_j, 0);
    EXPECT_NEAR(idle_j / increase_j, 131.0 / 600, 0.01);

    plan::ProfileSet other = resnet_profiles();
    other.gpu_model = "h100-80gb";
    options.profile_powers = ProfilePowers({other});
    const ProbePair unmatched =
        probe_pair(false, 600, options, "resnet18:train:32", "resnet50:train");
    EXPECT_EQ(label(find(unmatched.last, "migscope_attribution_info", {{"gpu", "0"}})->labels,
                    "idle_power_source"),
              "unknown");
}

// A heavy process (300 W at full activity) runs alone for 1.5 s, then a light one (100 W) joins
// it at the same SM utilization. With `learned_power` the regression learns each one's watts from
// the first phase, and the second phase's dynamic energy is split 3 : 1 by power; without it (the
// default) 1 : 1 by activity. Returns the split's label and heavy : light energy after 2 s.
namespace {

std::pair<std::string, double> heavy_beside_light(bool learned_power) {
    FakeProc proc;
    proc.add(6001, "heavy", "0::/user.slice\n");
    proc.add(6002, "light", "0::/user.slice\n");
    const fs::path fixture =
        fs::temp_directory_path() / ("migscope-exporter-power-" + std::to_string(::getpid()));
    std::ofstream(fixture) << R"({"driver_version": "580.159.04", "cuda_driver_version": 13000,
      "devices": [{"name": "NVIDIA H200", "uuid": "GPU-00000000-fake-h200-0000-00000000cafe",
      "memory_total_mib": 143771, "memory_used_mib": 2048, "mig_current": 0, "mig_pending": 0,
      "power_limit_w": 700, "sm_clock_mhz": 1980, "memory_clock_mhz": 3201, "temperature_c": 50,
      "power_trace": [[0, 250], [1.5, 250], [1.501, 300], [1000, 300]],
      "processes": [{"pid": 6001, "sm_util": 50}, {"pid": 6002, "sm_util": 50, "start_s": 1.5}]}]})";
    FakeNvmlEnv env(fixture.string());
    nvml::Session session = nvml::Session::open();
    ExporterOptions options;
    options.idle_power_w = kIdleW;
    options.proc_root = proc.root.string();
    options.learned_power = learned_power;
    Exporter exporter(session, options);
    const auto t0 = std::chrono::steady_clock::now();
    auto since_s = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    std::vector<MetricFamily> at_2_s, last;
    while (since_s() < 3.2) {
        exporter.sample_once();
        if (at_2_s.empty() && since_s() >= 2.0)
            at_2_s = exporter.metric_families();
        sleep_s(0.04);
    }
    last = exporter.metric_families();
    fs::remove(fixture);
    // Whole either way: the consumers sum to the board.
    EXPECT_NEAR(attributed_sum(last, "0"),
                board(last, "0") - board(at_2_s, "0") + attributed_sum(at_2_s, "0"),
                1e-6 * board(last, "0"));
    const auto info = find(last, "migscope_attribution_info", {{"gpu", "0"}});
    const double heavy_j =
        energy_of(last, {{"pid", "6001"}}) - energy_of(at_2_s, {{"pid", "6001"}});
    const double light_j =
        energy_of(last, {{"pid", "6002"}}) - energy_of(at_2_s, {{"pid", "6002"}});
    EXPECT_GT(light_j, 0);
    return {label(info->labels, "dynamic_split"), light_j > 0 ? heavy_j / light_j : 0};
}

}  // namespace

TEST(ExporterPower, WithLearnedPowerEachProcessIsChargedItsOwnWatts) {
    const auto [split, heavy_over_light] = heavy_beside_light(true);
    EXPECT_EQ(split, "learned_power");
    EXPECT_NEAR(heavy_over_light, 3.0, 0.3);
}

// Off by default: on the H200 the learned split missed run's by up to 98 % (docs/exporter.md).
TEST(ExporterPower, ByDefaultTheSplitFollowsActivityAlone) {
    const auto [split, heavy_over_light] = heavy_beside_light(false);
    EXPECT_EQ(split, "activity");
    EXPECT_NEAR(heavy_over_light, 1.0, 0.1);
}
