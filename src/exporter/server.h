// The exporter's HTTP side (cpp-httplib): /metrics answers with the text a callback gives.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace migscope::exporter {

struct ListenAddress {
    std::string host;  // "127.0.0.1", "0.0.0.0", "::1"
    int port = 0;      // 0: any free port (tests)
};
// "HOST:PORT", "[IPV6]:PORT" or ":PORT" (every interface); an input error names the text.
ListenAddress parse_listen_address(const std::string& text);

class MetricsServer {
  public:
    explicit MetricsServer(std::function<std::string()> metrics_text);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    // Binds the socket; an unavailable error (exit code 3) names the address when it is in use
    // or cannot be bound. Returns the port bound.
    int bind(const ListenAddress& address);
    // Answers requests until stop(); call after bind().
    void serve();
    // Safe from another thread; serve() returns soon after.
    void stop();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace migscope::exporter
