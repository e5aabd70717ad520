// /metrics over cpp-httplib (Debian's libcpp-httplib-dev): routes, binding and stopping.
#include "exporter/server.h"

#include <httplib.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/error.h"
#include "exporter/exposition.h"

namespace migscope::exporter {

ListenAddress parse_listen_address(const std::string& text) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos)
        throw input_error("--listen: expected HOST:PORT (e.g. 127.0.0.1:9401), not '" + text + "'");
    ListenAddress address;
    address.host = text.substr(0, colon);
    if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
        address.host = address.host.substr(1, address.host.size() - 2);
    else if (address.host.find(':') != std::string::npos)
        throw input_error("--listen: write an IPv6 address in brackets ([::1]:9401), not '" + text +
                          "'");
    if (address.host.empty())
        address.host = "0.0.0.0";
    const std::string port = text.substr(colon + 1);
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), address.port);
    if (port.empty() || error != std::errc() || end != port.data() + port.size() ||
        address.port < 0 || address.port > 65535)
        throw input_error("--listen: port must be a number from 0 to 65535, not '" + port + "'");
    return address;
}

struct MetricsServer::Impl {
    httplib::Server server;
};

MetricsServer::MetricsServer(std::function<std::string()> metrics_text)
    : impl_(std::make_unique<Impl>()) {
    impl_->server.Get("/metrics", [metrics_text](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics_text(), kExpositionContentType);
    });
    impl_->server.Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("migscope exporter: metrics at /metrics\n", "text/plain; charset=utf-8");
    });
}

MetricsServer::~MetricsServer() {
    stop();
}

int MetricsServer::bind(const ListenAddress& address) {
    const std::string where =
        (address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host) +
        ":" + std::to_string(address.port);
    errno = 0;
    int port = address.port;
    bool ok = false;
    if (address.port == 0) {
        port = impl_->server.bind_to_any_port(address.host);
        ok = port > 0;
    } else {
        ok = impl_->server.bind_to_port(address.host, address.port);
    }
    if (!ok) {
        const int error = errno;
        throw unavailable_error("exporter: cannot listen on " + where + ": " +
                                (error == EADDRINUSE ? std::string("the address is in use")
                                 : error != 0        ? std::string(std::strerror(error))
                                                     : std::string("bind failed")) +
                                " (choose another with --listen)");
    }
    return port;
}

void MetricsServer::serve() {
    impl_->server.listen_after_bind();
}

void MetricsServer::stop() {
    if (impl_)
        impl_->server.stop();
}

}  // namespace migscope::exporter
