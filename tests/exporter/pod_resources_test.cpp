// Tests of the kubelet's pod-resources client against a fake kubelet (a gRPC server in this
// process): the device -> container map, a missing socket, a slow kubelet, one that goes away.
#include "exporter/pod_resources.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "fake_kubelet.h"

using namespace migscope;
using namespace migscope::exporter;
using migscope::testing::FakeKubelet;
using migscope::testing::ScriptedContainer;

namespace {

const std::string kGpu0 = "GPU-00000000-fake-h200-0000-0000000e0000";
const std::string kGpu1 = "GPU-00000000-fake-h200-0000-0000000e0001";
const std::string kMig = "MIG-fa4e0000-0001-4000-8001-000000000004";

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Waits until the watcher has finished `count` List calls in all (at most 5 s).
bool wait_for_refreshes(const PodResourcesWatcher& watcher, unsigned long count) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (watcher.refreshes() < count) {
        if (std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

}  // namespace

TEST(DeviceOwners, ReplicasCountAsTheirGpuAndSeveralHoldersNameNone) {
    const ContainerName a{"ml", "train-0", "main"}, b{"ml", "train-1", "main"};
    const ContainerName c{"infer", "serve-0", "model"};
    const DeviceOwners owners({{a, {kGpu0 + "::0", kGpu0 + "::3"}},  // two replicas: one holder
                               {b, {kGpu1 + "::1"}},
                               {c, {kGpu1 + "::2", kMig, ""}}});
    EXPECT_EQ(device_of_id(kGpu0 + "::3"), kGpu0);
    EXPECT_EQ(device_of_id(kMig), kMig);
    EXPECT_EQ(owners.owners(kGpu0), std::set<ContainerName>{a});
    EXPECT_EQ(owners.owners(kGpu1).size(), 2u);
    EXPECT_TRUE(owners.owners(kGpu0 + "::0").empty());  // looked up by UUID only
    EXPECT_EQ(sole_owner(owners, {kGpu0}), a);
    EXPECT_FALSE(sole_owner(owners, {kGpu1}));  // time-sliced between two containers
    EXPECT_EQ(sole_owner(owners, {kMig}), c);
    EXPECT_EQ(sole_owner(owners, {kMig, "MIG-unheld"}), c);  // the unheld device adds no one
    EXPECT_FALSE(sole_owner(owners, {kMig, kGpu0}));         // two holders
    EXPECT_FALSE(sole_owner(owners, {"GPU-nobody"}));
    EXPECT_FALSE(owners.empty());
    EXPECT_TRUE(DeviceOwners().empty());
}

TEST(PodResourcesClient, ListsEachContainersDevicesWithNames) {
    FakeKubelet kubelet({{"ml", "train-0", "main", {kGpu0 + "::0", kGpu0 + "::1"}},
                         {"ml", "train-0", "sidecar", {}},  // no devices: left out
                         {"infer", "serve-0", "model", {kMig}}});
    PodResourcesClient client(kubelet.socket_path());
    const std::vector<ContainerDevices> containers = client.list(2.0);
    ASSERT_EQ(containers.size(), 2u);
    EXPECT_EQ(containers[0].name, (ContainerName{"ml", "train-0", "main"}));
    EXPECT_EQ(containers[0].device_ids, (std::vector<std::string>{kGpu0 + "::0", kGpu0 + "::1"}));
    EXPECT_EQ(containers[1].name, (ContainerName{"infer", "serve-0", "model"}));
    EXPECT_EQ(containers[1].device_ids, std::vector<std::string>{kMig});
    // The channel is kept: a second call answers the kubelet's new state.
    kubelet.set_containers({});
    EXPECT_TRUE(client.list(2.0).empty());
    EXPECT_EQ(kubelet.calls(), 2);
}

TEST(PodResourcesClient, AMissingSocketIsUnavailableAndNamesIt) {
    const std::string path = migscope::testing::fake_kubelet_socket_path();
    PodResourcesClient client(path);
    try {
        client.list(1.0);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
        EXPECT_NE(std::string(e.what()).find(path + ": no such socket"), std::string::npos)
            << e.what();
    }
}

TEST(PodResourcesClient, ASlowKubeletMeetsTheDeadline) {
    FakeKubelet kubelet({{"ml", "train-0", "main", {kGpu0}}});
    kubelet.set_delay_s(5);
    PodResourcesClient client(kubelet.socket_path());
    const auto start = std::chrono::steady_clock::now();
    try {
        client.list(0.2);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("DEADLINE_EXCEEDED (no answer within 0.2 s)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_LT(seconds_since(start), 1.5);
    EXPECT_EQ(kubelet.calls(), 1);
}

TEST(PodResourcesWatcher, AMissingSocketMeansNoOwnersAndOneWarning) {
    const std::string path = migscope::testing::fake_kubelet_socket_path();
    PodResourcesWatcher watcher({path, 0.02, 0.5});
    EXPECT_TRUE(watcher.owners()->empty());
    ASSERT_TRUE(wait_for_refreshes(watcher, 5));
    const std::vector<std::string> warnings = watcher.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(path + ": no such socket"), std::string::npos) << warnings[0];
    EXPECT_TRUE(watcher.owners()->empty());
}

TEST(PodResourcesWatcher, AKubeletThatGoesAwayAndComesBack) {
    auto kubelet = std::make_unique<FakeKubelet>(
        std::vector<ScriptedContainer>{{"ml", "train-0", "main", {kGpu0}}});
    const std::string path = kubelet->socket_path();
    PodResourcesWatcher watcher({path, 0.05, 0.5});
    // The constructor's call already answered: the first sample has names.
    EXPECT_EQ(sole_owner(*watcher.owners(), {kGpu0}), (ContainerName{"ml", "train-0", "main"}));
    EXPECT_TRUE(watcher.take_warnings().empty());

    kubelet->crash();  // the socket file stays, nothing listens
    ASSERT_TRUE(wait_for_refreshes(watcher, watcher.refreshes() + 3));
    EXPECT_TRUE(watcher.owners()->empty());
    std::vector<std::string> warnings = watcher.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(path + ": List failed: UNAVAILABLE"), std::string::npos)
        << warnings[0];
    // Then its socket goes too: still failing, not said again.
    std::filesystem::remove(path);
    ASSERT_TRUE(wait_for_refreshes(watcher, watcher.refreshes() + 3));
    EXPECT_TRUE(watcher.take_warnings().empty());

    kubelet.reset();
    kubelet = std::make_unique<FakeKubelet>(
        std::vector<ScriptedContainer>{{"ml", "train-1", "main", {kGpu0}}}, path);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (watcher.owners()->empty() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(sole_owner(*watcher.owners(), {kGpu0}), (ContainerName{"ml", "train-1", "main"}));
    warnings = watcher.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("answers again"), std::string::npos) << warnings[0];
}

TEST(PodResourcesWatcher, ASlowKubeletNeverHoldsUpItsReaders) {
    FakeKubelet kubelet({{"ml", "train-0", "main", {kGpu0}}});
    kubelet.set_delay_s(5);
    auto start = std::chrono::steady_clock::now();
    PodResourcesWatcher watcher({kubelet.socket_path(), 0.05, 0.2});
    EXPECT_LT(seconds_since(start), 1.0);  // the first call gave up at its deadline
    EXPECT_TRUE(watcher.owners()->empty());
    // While the thread's calls wait for the kubelet, readers answer at once.
    for (int i = 0; i < 20; ++i) {
        start = std::chrono::steady_clock::now();
        EXPECT_TRUE(watcher.owners()->empty());
        EXPECT_LT(seconds_since(start), 0.05);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::vector<std::string> warnings = watcher.take_warnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("DEADLINE_EXCEEDED"), std::string::npos) << warnings[0];
    kubelet.set_delay_s(0);
    ASSERT_TRUE(wait_for_refreshes(watcher, watcher.refreshes() + 2));
    EXPECT_FALSE(watcher.owners()->empty());
}
