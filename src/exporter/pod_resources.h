// Which Kubernetes container holds each GPU, MIG device or time-slicing replica: the kubelet's
// pod-resources API (v1, gRPC over a unix socket), asked every few seconds on its own thread.
#pragma once

#include <compare>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace migscope::exporter {

// Where the kubelet serves the pod-resources API.
inline constexpr const char* kKubeletPodResourcesSocket =
    "/var/lib/kubelet/pod-resources/kubelet.sock";

// A container by its Kubernetes names: dcgm-exporter's `namespace`, `pod` and `container`.
struct ContainerName {
    std::string namespace_name;
    std::string pod;
    std::string container;
    auto operator<=>(const ContainerName&) const = default;
};

// One container and the device ids the kubelet says it was given.
struct ContainerDevices {
    ContainerName name;
    std::vector<std::string> device_ids;
};

// The device an id names: a time-slicing replica "GPU-<uuid>::<n>" (or "MIG-<uuid>::<n>") is its
// device's UUID; any other id is itself.
std::string_view device_of_id(std::string_view device_id);

// Device UUID (GPU-..., MIG-...) -> the containers it is assigned to.
class DeviceOwners {
  public:
    DeviceOwners() = default;
    explicit DeviceOwners(const std::vector<ContainerDevices>& containers);

    // Every container given `uuid` or a replica of it (a container given two replicas of one
    // GPU counts once).
    std::set<ContainerName> owners(std::string_view uuid) const;
    bool empty() const { return owners_.empty(); }

  private:
    std::map<std::string, std::set<ContainerName>, std::less<>> owners_;
};

// The one container that holds every device in `uuids` that is held at all; none when no
// container or more than one holds them.
std::optional<ContainerName> sole_owner(const DeviceOwners& owners,
                                        const std::vector<std::string>& uuids);

// The kubelet's List call on a unix socket. Throws an unavailable error naming the socket and the
// gRPC status when the socket is missing, the call fails or it takes longer than `deadline_s`.
class PodResourcesClient {
  public:
    explicit PodResourcesClient(std::string socket_path);
    ~PodResourcesClient();
    PodResourcesClient(const PodResourcesClient&) = delete;
    PodResourcesClient& operator=(const PodResourcesClient&) = delete;

    std::vector<ContainerDevices> list(double deadline_s);
    const std::string& socket_path() const { return socket_path_; }

  private:
    struct Channel;
    std::string socket_path_;
    std::unique_ptr<Channel> channel_;  // made at the first call that finds the socket
};

struct PodResourcesOptions {
    std::string socket_path = kKubeletPodResourcesSocket;
    double refresh_s = 5;   // seconds between List calls
    double deadline_s = 1;  // the longest one List call may take
};

// Keeps DeviceOwners fresh: the first List in the constructor (so the first sample has names;
// it waits at most deadline_s), then one every refresh_s on its own thread. Readers never wait
// for the kubelet. A failed call (no socket, an error, past the deadline) means no owners until
// the next success; it is said once per run of failures.
class PodResourcesWatcher {
  public:
    explicit PodResourcesWatcher(PodResourcesOptions options);
    ~PodResourcesWatcher();  // stops the thread (waits for a call in flight: deadline_s at most)
    PodResourcesWatcher(const PodResourcesWatcher&) = delete;
    PodResourcesWatcher& operator=(const PodResourcesWatcher&) = delete;

    // The owners of the last successful call, or none (empty) after a failure; never null.
    std::shared_ptr<const DeviceOwners> owners() const;
    // Messages for the operator, each given once (a failure, and the recovery after one).
    std::vector<std::string> take_warnings();
    // How many List calls finished (succeeded or failed), for tests waiting for a refresh.
    unsigned long refreshes() const;

  private:
    void refresh();
    void loop();

    PodResourcesOptions options_;
    PodResourcesClient client_;
    mutable std::mutex mutex_;  // guards everything below
    std::condition_variable wake_;
    bool stop_ = false;
    bool failing_ = false;
    unsigned long refreshes_ = 0;
    std::shared_ptr<const DeviceOwners> owners_ = std::make_shared<DeviceOwners>();
    std::vector<std::string> warnings_;
    std::thread thread_;  // last: started once the rest is ready
};

}  // namespace migscope::exporter
