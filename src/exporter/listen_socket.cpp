// The exporter's listening socket: parsing --listen, getaddrinfo, bind without SO_REUSEPORT.
#include "exporter/listen_socket.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::exporter {

ListenAddress parse_listen_address(const std::string& text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos)
        throw input_error("--listen: expected HOST:PORT (e.g. 127.0.0.1:9401), not '" +
                          user_text::shown(text) + "'");
    ListenAddress address;
    address.host = text.substr(0, colon);
    if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
        address.host = address.host.substr(1, address.host.size() - 2);
    else if (address.host.find(':') != std::string::npos)
        throw input_error("--listen: write an IPv6 address in brackets ([::1]:9401), not '" +
                          user_text::shown(text) + "'");
    if (address.host.empty())
        address.host = "0.0.0.0";
    const std::string port = text.substr(colon + 1);
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), address.port);
    if (port.empty() || error != std::errc() || end != port.data() + port.size() ||
        address.port < 0 || address.port > 65535)
        throw input_error("--listen: port must be a number from 0 to 65535, not '" +
                          user_text::shown(port) + "'");
    return address;
}

std::string address_text(const std::string& host, int port) {
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
}

namespace {

[[noreturn]] void fail(const ListenAddress& address, const std::string& why) {
    throw unavailable_error("exporter: cannot listen on " +
                            address_text(address.host, address.port) + ": " + why +
                            " (choose another with --listen)");
}

std::string errno_text(int error) {
    return error == EADDRINUSE ? "the address is in use" : std::strerror(error);
}

}  // namespace

ListenSocket::ListenSocket(const ListenAddress& address) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(address.port);
    if (const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0)
        fail(address, gai_strerror(rc));
    int error = 0;
    for (const addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            error = errno;
            continue;
        }
        const int yes = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
            error = errno;
            close(fd);
            continue;
        }
        fd_ = fd;
    }
    freeaddrinfo(found);
    if (fd_ < 0)
        fail(address, error != 0 ? errno_text(error) : "no address to bind");
    sockaddr_storage bound{};
    socklen_t length = sizeof(bound);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                              : reinterpret_cast<sockaddr_in&>(bound).sin_port);
}

ListenSocket::~ListenSocket() {
    if (fd_ >= 0)
        close(fd_);
}

int ListenSocket::release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
}

}  // namespace migscope::exporter
