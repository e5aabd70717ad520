// GET of an exporter's /metrics through cpp-httplib.
#include "exporter/metrics_client.h"

#include <httplib.h>

#include "core/error.h"
#include "core/user_text.h"

namespace migscope::exporter {

std::string fetch_metrics(const std::string& url, double timeout_s) {
    const std::string scheme = "http://";
    if (url.rfind(scheme, 0) != 0)
        throw input_error("exporter URL '" + user_text::shown(url) +
                          "': expected http://HOST:PORT/PATH (HTTP only)");
    const size_t slash = url.find('/', scheme.size());
    const std::string origin = url.substr(0, slash);
    const std::string path = slash == std::string::npos ? "/metrics" : url.substr(slash);
    if (origin.size() == scheme.size())
        throw input_error("exporter URL '" + user_text::shown(url) + "': no host");
    httplib::Client client(origin);
    const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::duration<double>(timeout_s));
    client.set_connection_timeout(timeout);
    client.set_read_timeout(timeout);
    const httplib::Result answer = client.Get(path);
    if (!answer)
        throw unavailable_error("no answer from the exporter at " + user_text::shown(url) + " (" +
                                httplib::to_string(answer.error()) + ")");
    if (answer->status != 200)
        throw unavailable_error("the exporter at " + user_text::shown(url) + " answered HTTP " +
                                std::to_string(answer->status));
    return answer->body;
}

}  // namespace migscope::exporter
