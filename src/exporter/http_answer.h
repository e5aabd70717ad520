// What the exporter answers to one HTTP request, decided from its head alone (method, path and
// body length), before any byte of a body is read: pure, so every rule is tested without a socket.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace migscope::exporter {

// The largest request body the exporter lets a request carry; it reads none of it (nothing the
// exporter serves takes a body). Larger, or of unknown length (Transfer-Encoding), is 413.
constexpr size_t kMaxRequestBodyBytes = 1024;

struct RequestHead {
    std::string_view method;                         // "GET", "HEAD", ... as sent
    std::string_view path;                           // decoded, without the query string
    std::optional<std::string_view> content_length;  // the header's value, when sent
    bool has_transfer_encoding = false;              // a body of unknown length (chunked)
};

struct HttpAnswer {
    unsigned status = 200;
    std::string content_type;
    std::string body;
    std::string allow;  // the Allow header of a 405: "GET, HEAD"
};

// /metrics: 200 with `metrics_text()` in the Prometheus text format; /: 200 with a line naming
// /metrics; another path 404; a method other than GET and HEAD 405; a body over `max_body_bytes`
// or of unknown length 413; a Content-Length that is no number 400. The body checks come first,
// so a large upload is refused whatever its method or path.
HttpAnswer answer_request(const RequestHead& head, const std::function<std::string()>& metrics_text,
                          size_t max_body_bytes = kMaxRequestBodyBytes);

}  // namespace migscope::exporter
