// /metrics over libmicrohttpd: the daemon's options, the request handler, and the deadline
// watchdog that cuts connections whose request has not been answered in time.
#include "exporter/server.h"

#include <microhttpd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/error.h"

namespace migscope::exporter {
namespace {

using Clock = std::chrono::steady_clock;

// One open connection: its socket and when its current request must have been answered.
struct Connection {
    int fd = -1;
    Clock::time_point deadline;
    bool cut = false;  // shut down by the watchdog; libmicrohttpd closes it next
};

// The connection limit the process can hold: RLIMIT_NOFILE less 64 descriptors for everything
// else (NVML, the kubelet's socket, files).
unsigned connection_limit(unsigned wanted) {
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY)
        return wanted;
    const rlim_t usable = files.rlim_cur > 80 ? files.rlim_cur - 64 : 16;
    return static_cast<unsigned>(std::min<rlim_t>(wanted, usable));
}

}  // namespace

struct MetricsServer::Impl {
    std::function<std::string()> metrics_text;
    ServerLimits limits;
    Clock::duration request_timeout;
    std::optional<ListenSocket> socket;
    MHD_Daemon* daemon = nullptr;

    mutable std::mutex mutex;  // guards everything below
    std::condition_variable changed;
    std::unordered_set<Connection*> connections;
    bool stopping = false;
    std::string last_message;  // libmicrohttpd's last log line, for a start that fails
    std::thread watchdog;

    // The watchdog: shuts down (SHUT_RDWR) each connection at its deadline, which wakes
    // libmicrohttpd's thread to close it. A descriptor stays in `connections` until
    // libmicrohttpd's "closed" notice, which comes before it closes the descriptor, so a
    // shutdown never reaches a descriptor reused by another connection.
    void watch() {
        std::unique_lock<std::mutex> lock(mutex);
        while (!stopping) {
            const Clock::time_point now = Clock::now();
            std::optional<Clock::time_point> next;
            for (Connection* c : connections) {
                if (c->cut)
                    continue;
                if (c->deadline <= now) {
                    ::shutdown(c->fd, SHUT_RDWR);
                    c->cut = true;
                } else if (!next || c->deadline < *next) {
                    next = c->deadline;
                }
            }
            if (next)
                changed.wait_until(lock, *next);
            else
                changed.wait(lock);
        }
    }

    static void on_connection(void* cls, MHD_Connection* connection, void** socket_context,
                              MHD_ConnectionNotificationCode code) {
        Impl& self = *static_cast<Impl*>(cls);
        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
            const MHD_ConnectionInfo* info =
                MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
            auto* c =
                new Connection{info ? info->connect_fd : -1, Clock::now() + self.request_timeout};
            *socket_context = c;
            std::lock_guard<std::mutex> lock(self.mutex);
            self.connections.insert(c);
            self.changed.notify_all();  // the watchdog may be waiting without a deadline
        } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
            auto* c = static_cast<Connection*>(*socket_context);
            *socket_context = nullptr;
            if (c == nullptr)
                return;
            {
                std::lock_guard<std::mutex> lock(self.mutex);
                self.connections.erase(c);
            }
            delete c;
        }
    }

    // A request was answered (or abandoned): its state goes, and the connection's next request
    // gets a new deadline.
    static void on_completed(void* cls, MHD_Connection* connection, void** request_context,
                             MHD_RequestTerminationCode) {
        Impl& self = *static_cast<Impl*>(cls);
        delete static_cast<HttpAnswer*>(*request_context);
        *request_context = nullptr;
        const MHD_ConnectionInfo* info =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        if (info == nullptr || info->socket_context == nullptr)
            return;
        std::lock_guard<std::mutex> lock(self.mutex);
        static_cast<Connection*>(info->socket_context)->deadline =
            Clock::now() + self.request_timeout;
    }

    static HttpAnswer decide(Impl& self, MHD_Connection* connection, const char* url,
                             const char* method) {
        RequestHead head;
        head.method = method;
        head.path = url;
        if (const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                             MHD_HTTP_HEADER_CONTENT_LENGTH))
            head.content_length = length;
        head.has_transfer_encoding =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING) != nullptr;
        try {
            return answer_request(head, self.metrics_text, self.limits.max_body_bytes);
        } catch (const std::exception& e) {  // never across libmicrohttpd's C frames
            HttpAnswer answer;
            answer.status = 500;
            answer.content_type = "text/plain; charset=utf-8";
            answer.body = std::string("migscope exporter: ") + e.what() + "\n";
            return answer;
        }
    }

    static MHD_Result queue(MHD_Connection* connection, const HttpAnswer& answer) {
        MHD_Response* response = MHD_create_response_from_buffer(
            answer.body.size(), const_cast<char*>(answer.body.data()), MHD_RESPMEM_MUST_COPY);
        if (response == nullptr)
            return MHD_NO;  // out of memory: libmicrohttpd closes the connection
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                                answer.content_type.c_str());
        if (!answer.allow.empty())
            MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, answer.allow.c_str());
        const MHD_Result queued = MHD_queue_response(connection, answer.status, response);
        MHD_destroy_response(response);
        return queued;
    }

    // First called once the request head is in, before any body byte is read. A body over the
    // limit (or of unknown length) is refused then: the 413 is queued at once, and libmicrohttpd
    // closes the connection after it without reading the body. Otherwise the answer waits for
    // the end of the request (a body within the limit is read and dropped), which keeps the
    // connection alive for the next request.
    static MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url,
                                 const char* method, const char*, const char*,
                                 size_t* upload_data_size, void** request_context) {
        Impl& self = *static_cast<Impl*>(cls);
        if (*request_context == nullptr) {
            auto answer = std::make_unique<HttpAnswer>(decide(self, connection, url, method));
            if (answer->status == 413 || answer->status == 400)
                return queue(connection, *answer);  // on_completed finds no state
            *request_context = answer.release();
            return MHD_YES;
        }
        if (*upload_data_size != 0) {  // a body within the limit: dropped
            *upload_data_size = 0;
            return MHD_YES;
        }
        return queue(connection, *static_cast<HttpAnswer*>(*request_context));
    }

    static void on_log(void* cls, const char* format, va_list arguments) {
        Impl& self = *static_cast<Impl*>(cls);
        char line[512];
        std::vsnprintf(line, sizeof(line), format, arguments);
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
            text.pop_back();
        std::lock_guard<std::mutex> lock(self.mutex);
        self.last_message = text;
    }
};

MetricsServer::MetricsServer(std::function<std::string()> metrics_text, ServerLimits limits)
    : impl_(std::make_unique<Impl>()) {
    impl_->metrics_text = std::move(metrics_text);
    impl_->limits = limits;
    impl_->request_timeout = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(limits.request_timeout_s));
}

MetricsServer::~MetricsServer() {
    stop();
}

int MetricsServer::bind(const ListenAddress& address) {
    impl_->socket.emplace(address);
    return impl_->socket->port();
}

void MetricsServer::start() {
    Impl& s = *impl_;
    if (s.daemon != nullptr)
        return;
    // poll(), not epoll: in libmicrohttpd 0.9.75's edge-triggered epoll mode the end of a stream
    // that arrives with its last bytes goes unseen until the timeout (fuzz/exporter_http_fuzz.cpp
    // found it); poll() over at most max_connections descriptors costs nothing here.
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    std::vector<MHD_OptionItem> options = {
        {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&Impl::on_log), &s},
        {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Impl::on_connection), &s},
        {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Impl::on_completed), &s},
        {MHD_OPTION_CONNECTION_LIMIT, connection_limit(s.limits.max_connections), nullptr},
        // libmicrohttpd's own inactivity timeout, in whole seconds: a backstop to the watchdog.
        {MHD_OPTION_CONNECTION_TIMEOUT,
         static_cast<intptr_t>(std::max(1.0, std::ceil(s.limits.request_timeout_s))), nullptr},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT,
         static_cast<intptr_t>(s.limits.connection_memory_bytes), nullptr},
    };
    int listen_fd = -1;
    if (s.socket) {
        listen_fd = s.socket->fd();
        options.push_back({MHD_OPTION_LISTEN_SOCKET, listen_fd, nullptr});
    } else {
        flags |= MHD_USE_NO_LISTEN_SOCKET;
    }
    options.push_back({MHD_OPTION_END, 0, nullptr});
    s.stopping = false;
    s.watchdog = std::thread([&s] { s.watch(); });
    s.daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::on_request, &s, MHD_OPTION_ARRAY,
                                options.data(), MHD_OPTION_END);
    if (s.daemon == nullptr) {
        stop();
        std::lock_guard<std::mutex> lock(s.mutex);
        throw runtime_error(
            "exporter: the HTTP server (libmicrohttpd) did not start: " +
            (s.last_message.empty() ? std::string("no reason given") : s.last_message));
    }
    if (s.socket)
        s.socket->release();  // libmicrohttpd closes it when it stops
}

void MetricsServer::add_connection(int fd) {
    if (impl_->daemon == nullptr)
        close(fd);
    sockaddr_un peer{};
    peer.sun_family = AF_UNIX;
    // libmicrohttpd closes the socket when it cannot take it.
    if (impl_->daemon == nullptr ||
        MHD_add_connection(impl_->daemon, fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)) !=
            MHD_YES) {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        throw runtime_error(
            "exporter: the HTTP server did not take a connection: " +
            (impl_->last_message.empty() ? std::string("not started") : impl_->last_message));
    }
}

size_t MetricsServer::open_connections() const {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    return impl_->connections.size();
}

void MetricsServer::stop() {
    if (!impl_)
        return;
    Impl& s = *impl_;
    if (s.daemon != nullptr) {
        MHD_stop_daemon(s.daemon);  // closes every connection ("closed" notices) and its thread
        s.daemon = nullptr;
    }
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.stopping = true;
    }
    s.changed.notify_all();
    if (s.watchdog.joinable())
        s.watchdog.join();
    s.socket.reset();
}

}  // namespace migscope::exporter
