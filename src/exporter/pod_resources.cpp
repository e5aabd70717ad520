// The kubelet's pod-resources List over gRPC, and the device -> container map built from it.
#include "exporter/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "exporter/pod_resources.grpc.pb.h"

namespace migscope::exporter {
namespace {

const char* status_name(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::OK:
            return "OK";
        case grpc::StatusCode::CANCELLED:
            return "CANCELLED";
        case grpc::StatusCode::UNKNOWN:
            return "UNKNOWN";
        case grpc::StatusCode::INVALID_ARGUMENT:
            return "INVALID_ARGUMENT";
        case grpc::StatusCode::DEADLINE_EXCEEDED:
            return "DEADLINE_EXCEEDED";
        case grpc::StatusCode::NOT_FOUND:
            return "NOT_FOUND";
        case grpc::StatusCode::ALREADY_EXISTS:
            return "ALREADY_EXISTS";
        case grpc::StatusCode::PERMISSION_DENIED:
            return "PERMISSION_DENIED";
        case grpc::StatusCode::RESOURCE_EXHAUSTED:
            return "RESOURCE_EXHAUSTED";
        case grpc::StatusCode::FAILED_PRECONDITION:
            return "FAILED_PRECONDITION";
        case grpc::StatusCode::ABORTED:
            return "ABORTED";
        case grpc::StatusCode::OUT_OF_RANGE:
            return "OUT_OF_RANGE";
        case grpc::StatusCode::UNIMPLEMENTED:
            return "UNIMPLEMENTED";
        case grpc::StatusCode::INTERNAL:
            return "INTERNAL";
        case grpc::StatusCode::UNAVAILABLE:
            return "UNAVAILABLE";
        case grpc::StatusCode::DATA_LOSS:
            return "DATA_LOSS";
        case grpc::StatusCode::UNAUTHENTICATED:
            return "UNAUTHENTICATED";
        default:
            return "status";
    }
}

std::string seconds_text(double s) {
    std::ostringstream text;
    text << s;
    return text.str();
}

}  // namespace

std::string_view device_of_id(std::string_view device_id) {
    const size_t replica = device_id.find("::");
    return replica == std::string_view::npos ? device_id : device_id.substr(0, replica);
}

DeviceOwners::DeviceOwners(const std::vector<ContainerDevices>& containers) {
    for (const ContainerDevices& c : containers) {
        for (const std::string& id : c.device_ids) {
            const std::string_view device = device_of_id(id);
            if (device.empty())
                continue;
            auto it = owners_.find(device);
            if (it == owners_.end())
                it = owners_.emplace(std::string(device), std::set<ContainerName>{}).first;
            it->second.insert(c.name);
        }
    }
}

std::set<ContainerName> DeviceOwners::owners(std::string_view uuid) const {
    const auto it = owners_.find(uuid);
    return it == owners_.end() ? std::set<ContainerName>{} : it->second;
}

std::optional<ContainerName> sole_owner(const DeviceOwners& owners,
                                        const std::vector<std::string>& uuids) {
    std::set<ContainerName> all;
    for (const std::string& uuid : uuids)
        all.merge(owners.owners(uuid));
    if (all.size() != 1)
        return std::nullopt;
    return *all.begin();
}

struct PodResourcesClient::Channel {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(std::string socket_path)
    : socket_path_(std::move(socket_path)) {}

PodResourcesClient::~PodResourcesClient() = default;

std::vector<ContainerDevices> PodResourcesClient::list(double deadline_s) {
    const std::string where = "the kubelet's pod-resources API at " + socket_path_;
    std::error_code ignored;
    if (!std::filesystem::exists(socket_path_, ignored))
        throw unavailable_error(where + ": no such socket");
    if (!channel_) {
        grpc::ChannelArguments args;
        // A kubelet that restarts is asked again within a second of coming back, not after
        // gRPC's default backoff of up to two minutes.
        args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
        args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
        args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
        // A node with many pods answers with more than gRPC's default 4 MiB (the kubelet's own
        // client allows 16 MiB).
        args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
        auto channel = std::make_unique<Channel>();
        channel->channel = grpc::CreateCustomChannel("unix:" + socket_path_,
                                                     grpc::InsecureChannelCredentials(), args);
        channel->stub = v1::PodResourcesLister::NewStub(channel->channel);
        channel_ = std::move(channel);
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             std::chrono::duration<double>(deadline_s)));
    v1::ListPodResourcesRequest request;
    v1::ListPodResourcesResponse response;
    const grpc::Status status = channel_->stub->List(&context, request, &response);
    if (!status.ok()) {
        std::string text = where + ": List failed: " + status_name(status.error_code());
        if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
            text += " (no answer within " + seconds_text(deadline_s) + " s)";
        else if (!status.error_message().empty())
            text += " (" + status.error_message() + ")";
        throw unavailable_error(text);
    }
    std::vector<ContainerDevices> containers;
    for (const v1::PodResources& pod : response.pod_resources()) {
        for (const v1::ContainerResources& container : pod.containers()) {
            ContainerDevices c;
            c.name = {pod.namespace_(), pod.name(), container.name()};
            for (const v1::ContainerDevices& devices : container.devices())
                c.device_ids.insert(c.device_ids.end(), devices.device_ids().begin(),
                                    devices.device_ids().end());
            if (!c.device_ids.empty())
                containers.push_back(std::move(c));
        }
    }
    return containers;
}

PodResourcesWatcher::PodResourcesWatcher(PodResourcesOptions options)
    : options_(std::move(options)), client_(options_.socket_path) {
    if (!(options_.refresh_s > 0) || !(options_.deadline_s > 0))
        throw input_error("pod-resources: the refresh and the deadline must be > 0 s");
    refresh();
    thread_ = std::thread([this] { loop(); });
}

PodResourcesWatcher::~PodResourcesWatcher() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

std::shared_ptr<const DeviceOwners> PodResourcesWatcher::owners() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return owners_;
}

std::vector<std::string> PodResourcesWatcher::take_warnings() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(warnings_, {});
}

unsigned long PodResourcesWatcher::refreshes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return refreshes_;
}

void PodResourcesWatcher::refresh() {
    std::shared_ptr<const DeviceOwners> owners;
    std::string error;
    try {
        owners = std::make_shared<const DeviceOwners>(client_.list(options_.deadline_s));
    } catch (const Error& e) {
        error = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++refreshes_;
    if (owners) {
        if (failing_)
            warnings_.push_back("the kubelet's pod-resources API at " + options_.socket_path +
                                " answers again: pod, namespace and container names are back");
        failing_ = false;
        owners_ = std::move(owners);
        return;
    }
    if (!failing_)
        warnings_.push_back(error +
                            "; no pod, namespace or container names until it answers (asked "
                            "every " +
                            seconds_text(options_.refresh_s) + " s; said once)");
    failing_ = true;
    owners_ = std::make_shared<const DeviceOwners>();
}

void PodResourcesWatcher::loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
        wake_.wait_for(lock, std::chrono::duration<double>(options_.refresh_s),
                       [this] { return stop_; });
        if (stop_)
            break;
        lock.unlock();
        refresh();
        lock.lock();
    }
}

}  // namespace migscope::exporter
