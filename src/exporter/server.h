// The exporter's HTTP side over GNU libmicrohttpd (Debian's libmicrohttpd-dev): one event-driven
// thread holds every connection, so idle and slow clients cost a connection slot, never a worker;
// every request has a deadline; request bodies are refused unread; stop() closes every connection
// at once. What is answered is http_answer.h's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "exporter/http_answer.h"
#include "exporter/listen_socket.h"

namespace migscope::exporter {

struct ServerLimits {
    // From a connection's start, or the end of its previous answer, to the end of its next
    // answer: a connection idle, sending its request head or reading its answer for longer is
    // closed (docs/limits.md).
    double request_timeout_s = 5.0;
    // Connections open at once; more wait in the kernel's accept queue. Fewer when the process
    // may open fewer files (RLIMIT_NOFILE less 64).
    unsigned max_connections = 512;
    // Memory of one connection: its request head and the answer's headers (a longer head: 431).
    size_t connection_memory_bytes = 16 * 1024;
    // Request bodies up to this are tolerated (and never read); larger ones are refused with 413.
    size_t max_body_bytes = kMaxRequestBodyBytes;
};

class MetricsServer {
  public:
    explicit MetricsServer(std::function<std::string()> metrics_text, ServerLimits limits = {});
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    // Binds the socket (ListenSocket's errors: exit code 3 when the address is in use or cannot
    // be bound). Returns the port bound.
    int bind(const ListenAddress& address);
    // Serves on the server's own thread until stop(): the bound socket's connections, or without
    // bind() only those given to add_connection. A runtime error names libmicrohttpd's complaint.
    void start();
    // Serves a connected socket as if it had been accepted; the server owns and closes it (tests
    // and fuzzing, in one process). Call after start().
    void add_connection(int fd);
    // Connections open now (accepted or added, not yet closed).
    size_t open_connections() const;
    // Closes every connection, whatever its client does, and stops serving; returns when done.
    // Idempotent; the destructor calls it.
    void stop();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace migscope::exporter
