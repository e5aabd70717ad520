// Which Kubernetes pod and container a process runs in, read from its cgroup (/proc/PID/cgroup).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace migscope::exporter {

struct PodIdentity {
    std::string pod_uid;  // with dashes, e.g. 1f0c2d3e-...; the pod's name is not in the cgroup
    std::string container_id;  // the runtime's id (64 hex digits for containerd, CRI-O, Docker)
};

// Parses the text of /proc/PID/cgroup (cgroup v1 or v2, cgroupfs or systemd driver):
//   0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID_>.slice/cri-containerd-<ID>.scope
//   11:memory:/kubepods/besteffort/pod<UID>/<ID>
// None when no line is under kubepods. A pod without a container part (the pod's own cgroup)
// gives an empty container_id.
std::optional<PodIdentity> parse_pod_cgroup(std::string_view cgroup_text);

}  // namespace migscope::exporter
