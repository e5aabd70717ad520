// Receiving activity reports on a local datagram socket, each named by the kernel's credentials.
#include "exporter/activity_listener.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace migscope::exporter {
namespace {

constexpr size_t kMaxDatagramBytes = 512;  // a report is about 200
constexpr int kPollMs = 200;               // how soon the destructor's stop is seen

}  // namespace

ActivityListener::ActivityListener(std::string path) : path_(std::move(path)) {
    sockaddr_un address{};
    if (path_.empty() || path_.size() >= sizeof(address.sun_path))
        throw input_error("exporter: --activity-socket must be a path of 1 to " +
                          std::to_string(sizeof(address.sun_path) - 1) + " bytes");
    struct stat existing {};
    if (lstat(path_.c_str(), &existing) == 0) {
        if (!S_ISSOCK(existing.st_mode))
            throw unavailable_error("exporter: --activity-socket " + path_ +
                                    " exists and is not a socket; it is left alone");
        ::unlink(path_.c_str());  // an earlier exporter's; a live one is not detected (a
                                  // second exporter takes the path over)
    }
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
        throw unavailable_error(std::string("exporter: cannot create the activity socket: ") +
                                std::strerror(errno));
    const int on = 1;
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    if (setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 ||
        bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        chmod(path_.c_str(), 0666) != 0) {
        const std::string why = std::strerror(errno);
        ::close(fd_);
        throw unavailable_error("exporter: cannot listen for activity on " + path_ + ": " + why +
                                " (its folder must exist and be writable)");
    }
    thread_ = std::thread([this] { receive_loop(); });
}

ActivityListener::~ActivityListener() {
    stop_.store(true);
    if (thread_.joinable())
        thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
}

void ActivityListener::receive_loop() {
    char data[kMaxDatagramBytes];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    while (!stop_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, kPollMs) <= 0)
            continue;
        iovec io{data, sizeof data};
        msghdr message{};
        message.msg_iov = &io;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        const ssize_t n = recvmsg(fd_, &message, MSG_DONTWAIT);
        if (n < 0)
            continue;
        std::optional<unsigned> pid;
        for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
                ucred credentials{};
                std::memcpy(&credentials, CMSG_DATA(c), sizeof credentials);
                // 0: the sender is in a pid namespace the exporter cannot see into.
                if (credentials.pid > 0)
                    pid = static_cast<unsigned>(credentials.pid);
            }
        }
        std::optional<activity::ActivityReport> report;
        if (!(message.msg_flags & MSG_TRUNC))
            report = activity::decode(std::string_view(data, static_cast<size_t>(n)));
        if (!report) {
            warn_once("malformed", "a datagram on " + path_ +
                                       " is not an activity report; such datagrams are ignored "
                                       "(said once)");
        } else if (!pid) {
            warn_once("no-pid", "an activity report on " + path_ +
                                    " came from a process whose pid this exporter cannot see "
                                    "(run it in the host's pid namespace); ignored (said once)");
        } else {
            keep(*pid, std::move(*report));
        }
    }
}

void ActivityListener::keep(unsigned pid, activity::ActivityReport report) {
    const auto now = std::chrono::steady_clock::now();
    bool forgot = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto key = std::make_pair(pid, report.gpu_uuid);
        if (!latest_.count(key) && latest_.size() >= kMaxEntries) {
            // The oldest entry goes: a process that exited long ago.
            latest_.erase(
                std::min_element(latest_.begin(), latest_.end(), [](const auto& a, const auto& b) {
                    return a.second.received < b.second.received;
                }));
            forgot = true;
        }
        latest_[std::move(key)] = Entry{std::move(report), now};
    }
    if (forgot)
        warn_once("full", "more than " + std::to_string(kMaxEntries) +
                              " processes reported activity; the oldest reports are forgotten "
                              "(said once)");
}

std::optional<activity::ActivityReport> ActivityListener::latest(
    unsigned pid, const std::string& gpu_uuid) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = latest_.find({pid, gpu_uuid});
    if (it == latest_.end())
        return std::nullopt;
    return it->second.report;
}

std::vector<unsigned> ActivityListener::reported_since(const std::string& gpu_uuid,
                                                      uint64_t since_ns) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<unsigned> pids;
    for (const auto& [key, entry] : latest_) {
        if (key.second == gpu_uuid && entry.report.sent_ns > since_ns)
            pids.push_back(key.first);
    }
    return pids;
}

size_t ActivityListener::entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return latest_.size();
}

void ActivityListener::warn_once(const std::string& kind, const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (warned_kinds_.insert(kind).second)
        warnings_.push_back(text);
}

std::vector<std::string> ActivityListener::take_warnings() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(warnings_, {});
}

}  // namespace migscope::exporter
