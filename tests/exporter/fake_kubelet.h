// A fake kubelet for tests: the pod-resources API's List, served by a real gRPC server in the test
// process on a temporary unix socket, answering scripted containers, slowly if asked.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exporter/pod_resources.grpc.pb.h"

namespace migscope::testing {

struct ScriptedContainer {
    std::string namespace_name;
    std::string pod;
    std::string container;
    std::vector<std::string> device_ids;
};

// A fresh socket path short enough for sockaddr_un (108 bytes).
inline std::string fake_kubelet_socket_path() {
    static std::atomic<int> count{0};
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    const std::string name =
        "kubelet-" + std::to_string(::getpid()) + "-" + std::to_string(++count) + ".sock";
    if ((dir / name).string().size() > 100)
        dir = "/tmp";
    return (dir / name).string();
}

class FakeKubelet final : public v1::PodResourcesLister::Service {
  public:
    explicit FakeKubelet(std::vector<ScriptedContainer> containers,
                         std::string socket_path = fake_kubelet_socket_path())
        : socket_path_(std::move(socket_path)), containers_(std::move(containers)) {
        std::filesystem::remove(socket_path_);  // a stale socket of an earlier kubelet
        grpc::ServerBuilder builder;
        builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
        builder.RegisterService(this);
        server_ = builder.BuildAndStart();
        if (!server_)
            throw std::runtime_error("fake kubelet: cannot serve on " + socket_path_);
    }
    ~FakeKubelet() override {
        stop();
        std::filesystem::remove(socket_path_);
    }

    // The kubelet goes away: the server stops (gRPC removes its socket file).
    void stop() {
        if (server_) {
            server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
            server_->Wait();
            server_.reset();
        }
    }
    // The kubelet dies: the server stops and its socket file stays, with nothing listening.
    void crash() {
        stop();
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        socket_path_.copy(address.sun_path, sizeof(address.sun_path) - 1);
        const bool bound =
            ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
        ::close(fd);
        if (!bound)
            throw std::runtime_error("fake kubelet: cannot leave a socket at " + socket_path_);
    }
    void set_delay_s(double s) { delay_s_ = s; }
    void set_containers(std::vector<ScriptedContainer> containers) {
        std::lock_guard<std::mutex> lock(mutex_);
        containers_ = std::move(containers);
    }
    const std::string& socket_path() const { return socket_path_; }
    int calls() const { return calls_; }

    grpc::Status List(grpc::ServerContext* context, const v1::ListPodResourcesRequest*,
                      v1::ListPodResourcesResponse* response) override {
        ++calls_;
        const auto until = std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(delay_s_.load()));
        while (std::chrono::steady_clock::now() < until && !context->IsCancelled())
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::lock_guard<std::mutex> lock(mutex_);
        for (const ScriptedContainer& c : containers_) {
            v1::PodResources* pod = nullptr;
            for (v1::PodResources& p : *response->mutable_pod_resources()) {
                if (p.namespace_() == c.namespace_name && p.name() == c.pod)
                    pod = &p;
            }
            if (pod == nullptr) {
                pod = response->add_pod_resources();
                pod->set_namespace_(c.namespace_name);
                pod->set_name(c.pod);
            }
            v1::ContainerResources* container = pod->add_containers();
            container->set_name(c.container);
            if (!c.device_ids.empty()) {
                v1::ContainerDevices* devices = container->add_devices();
                for (const std::string& id : c.device_ids)
                    devices->add_device_ids(id);
            }
        }
        return grpc::Status::OK;
    }

  private:
    std::string socket_path_;
    std::mutex mutex_;
    std::vector<ScriptedContainer> containers_;
    std::atomic<double> delay_s_{0};
    std::atomic<int> calls_{0};
    std::unique_ptr<grpc::Server> server_;
};

}  // namespace migscope::testing
