// The exporter's listening socket: `--listen HOST:PORT` parsed, bound and listening, and never
// shared: no SO_REUSEPORT, so a second exporter on the same address fails instead of splitting the
// scrapes with the first.
#pragma once

#include <string>

namespace migscope::exporter {

struct ListenAddress {
    std::string host;  // "127.0.0.1", "0.0.0.0", "::1", or a name getaddrinfo resolves
    int port = 0;      // 0: any free port (tests)
};
// "HOST:PORT", "[IPV6]:PORT" or ":PORT" (every interface); an input error names the text.
ListenAddress parse_listen_address(const std::string& text);
// "127.0.0.1:9401", "[::1]:9401": how messages name an address.
std::string address_text(const std::string& host, int port);

// A bound, listening TCP socket (close-on-exec, SO_REUSEADDR only: a restart need not wait for
// the old connections' TIME_WAIT, while a live listener on the address still refuses the bind).
class ListenSocket {
  public:
    // An unavailable error (exit code 3) names the address when it is in use or cannot be bound:
    // "exporter: cannot listen on 127.0.0.1:9401: the address is in use (choose another with
    // --listen)".
    explicit ListenSocket(const ListenAddress& address);
    ~ListenSocket();
    ListenSocket(const ListenSocket&) = delete;
    ListenSocket& operator=(const ListenSocket&) = delete;

    int fd() const { return fd_; }
    int port() const { return port_; }  // the port bound (the chosen one for port 0)
    // Hands the descriptor over (to the HTTP server, which closes it); fd() is -1 after.
    int release();

  private:
    int fd_ = -1;
    int port_ = 0;
};

}  // namespace migscope::exporter
