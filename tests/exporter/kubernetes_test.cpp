// Tests of reading the pod and container of a process from its cgroup text.
#include "exporter/kubernetes.h"

#include <gtest/gtest.h>

using namespace migscope::exporter;

namespace {
const std::string kUid = "1f0c2d3e-4a5b-6c7d-8e9f-a0b1c2d3e4f5";
const std::string kId = "3b2e6f9a0c1d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789ab";
}  // namespace

TEST(PodCgroup, CgroupV2SystemdContainerd) {
    const std::string text =
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f0c2d3e_4a5b_6c7d_"
        "8e9f_a0b1c2d3e4f5.slice/cri-containerd-" +
        kId + ".scope\n";
    const auto pod = parse_pod_cgroup(text);
    ASSERT_TRUE(pod);
    EXPECT_EQ(pod->pod_uid, kUid);
    EXPECT_EQ(pod->container_id, kId);
}

TEST(PodCgroup, CgroupV1Cgroupfs) {
    const std::string text = "12:pids:/user.slice\n11:memory:/kubepods/besteffort/pod" + kUid +
                             "/" + kId + "\n1:name=systemd:/kubepods/besteffort/pod" + kUid + "/" +
                             kId + "\n";
    const auto pod = parse_pod_cgroup(text);
    ASSERT_TRUE(pod);
    EXPECT_EQ(pod->pod_uid, kUid);
    EXPECT_EQ(pod->container_id, kId);
}

TEST(PodCgroup, GuaranteedQosCrioAndDocker) {
    auto pod = parse_pod_cgroup(
        "0::/kubepods.slice/kubepods-pod1f0c2d3e_4a5b_6c7d_8e9f_"
        "a0b1c2d3e4f5.slice/crio-" +
        kId + ".scope");
    ASSERT_TRUE(pod);
    EXPECT_EQ(pod->container_id, kId);
    pod = parse_pod_cgroup("0::/kubepods/pod" + kUid + "/docker-" + kId + ".scope");
    ASSERT_TRUE(pod);
    EXPECT_EQ(pod->pod_uid, kUid);
}

TEST(PodCgroup, NotInKubernetes) {
    EXPECT_FALSE(parse_pod_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
    EXPECT_FALSE(parse_pod_cgroup("0::/system.slice/docker-" + kId + ".scope\n"));
    EXPECT_FALSE(parse_pod_cgroup(""));
    EXPECT_FALSE(parse_pod_cgroup("garbage without colons\n\n::\n"));
    EXPECT_FALSE(parse_pod_cgroup("0::/kubepods.slice/kubepods-burstable.slice\n"));
}

TEST(PodCgroup, PodWithoutContainerPart) {
    const auto pod = parse_pod_cgroup("0::/kubepods/pod" + kUid + "\n");
    ASSERT_TRUE(pod);
    EXPECT_EQ(pod->pod_uid, kUid);
    EXPECT_EQ(pod->container_id, "");
}
